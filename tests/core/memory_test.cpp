// adt_memory_map: zeroed, resident from the start, and failures reported.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "core/core.h"

TEST(Memory, MappedMemoryIsZeroedResidentAndWritable)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = 37 * page + 123;
    auto *memory = static_cast<unsigned char *>(adt_memory_map(bytes));
    ASSERT_NE(memory, nullptr);
    std::vector<unsigned char> resident((bytes + page - 1) / page);
    ASSERT_EQ(mincore(memory, bytes, resident.data()), 0);
    for (size_t i = 0; i < resident.size(); ++i)
        EXPECT_TRUE(resident[i] & 1) << "page " << i << " is not resident";
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; ++i)
        nonzero += memory[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    memory[0] = 1;
    memory[bytes - 1] = 2;
    EXPECT_EQ(memory[0] + memory[bytes - 1], 3);
    adt_memory_unmap(memory, bytes);
}

TEST(Memory, ImpossibleSizeFailsWithErrno)
{
    errno = 0;
    EXPECT_EQ(adt_memory_map(0), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(adt_memory_map(SIZE_MAX & ~(size_t)0xfff), nullptr);
    EXPECT_NE(errno, 0);
    adt_memory_unmap(nullptr, 0);
}
