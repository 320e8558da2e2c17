// The unification benchmark's directly built unions (benchmarks/unify/
// synthetic_ranks.c) are the bytes the tree would send: byte for byte what
// merging the same ranks one by one with adt_set_merge gives, for blocks
// that start at the root and inside, across hosts and grid rows, with
// CP2K's share of own calling contexts and with none. So the benchmark,
// which builds its inputs directly, measures the real merge.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "unify_synthetic_check.h"

namespace {

std::string differences(uint32_t rank_count, uint32_t own, uint32_t first, uint32_t count)
{
    char *text = synthetic_union_differences(rank_count, own, first, count);
    std::string out = text ? text : "out of memory";
    std::free(text);
    return out;
}

TEST(UnifySyntheticRanks, AllRanksFromTheRootEqualTheRankByRankMerge)
{
    EXPECT_EQ(differences(64, synthetic_cp2k_own_calling_contexts(), 0, 64), "");
}

// rank 32 of 64: the root's last child, its subtree spans two hosts and
// several grid rows and columns; rank 24 of 40: a subtree cut short by the
// end of the ranks, in a grid with a partial last row
TEST(UnifySyntheticRanks, SubtreesInsideEqualTheRankByRankMerge)
{
    EXPECT_EQ(differences(64, synthetic_cp2k_own_calling_contexts(), 32, 32), "");
    EXPECT_EQ(differences(40, synthetic_cp2k_own_calling_contexts(), 24, 16), "");
}

TEST(UnifySyntheticRanks, RanksWithoutOwnCallingContextsEqualTheRankByRankMerge)
{
    EXPECT_EQ(differences(48, 0, 16, 16), "");
}

TEST(UnifySyntheticRanks, OneRankIsItsOwnBytes) { EXPECT_EQ(differences(8, 16, 5, 1), ""); }

}  // namespace
