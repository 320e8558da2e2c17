// λ by de Bruijn multiply-and-lookup against the compiler's count of
// trailing zeros.
#include <gtest/gtest.h>

#include <random>

#include "buffer/buffer.h"

TEST(Lambda, MatchesCtzForAllSmallNumbers)
{
    for (uint64_t n = 1; n <= (uint64_t(1) << 20); n++) {
        ASSERT_EQ(adt_lambda32(static_cast<uint32_t>(n)), static_cast<unsigned>(__builtin_ctz(static_cast<uint32_t>(n))))
            << "n=" << n;
        ASSERT_EQ(adt_lambda64(n), static_cast<unsigned>(__builtin_ctzll(n))) << "n=" << n;
    }
}

TEST(Lambda, MatchesCtzForRandom64BitValues)
{
    std::mt19937_64 random(20240601);
    for (int i = 0; i < 2000000; i++) {
        uint64_t n = random();
        // Shift some values left so that high trailing-zero counts occur too.
        n <<= (i % 64);
        if (n == 0)
            continue;
        ASSERT_EQ(adt_lambda64(n), static_cast<unsigned>(__builtin_ctzll(n))) << "n=" << n;
        uint32_t low = static_cast<uint32_t>(n >> (i % 33));
        if (low != 0) {
            ASSERT_EQ(adt_lambda32(low), static_cast<unsigned>(__builtin_ctz(low))) << "n=" << low;
        }
    }
}

TEST(Lambda, EverySingleBit)
{
    for (unsigned bit = 0; bit < 64; bit++) {
        EXPECT_EQ(adt_lambda64(uint64_t(1) << bit), bit);
        EXPECT_EQ(adt_lambda64(~uint64_t(0) << bit), bit);
    }
    for (unsigned bit = 0; bit < 32; bit++)
        EXPECT_EQ(adt_lambda32(uint32_t(1) << bit), bit);
}

TEST(Lambda, ZeroIsTheBitWidth)
{
    EXPECT_EQ(adt_lambda32(0), 32u);
    EXPECT_EQ(adt_lambda64(0), 64u);
}
