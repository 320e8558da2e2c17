// The tree unification (format/unify.c) among threads standing for ranks:
// the global definitions and every rank's id maps equal those of the flat
// merge in rank order (what rank 0 alone did before), id for id, for
// powers of two and not.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "unify_tree_check.h"

namespace {

std::string differences(uint32_t ranks)
{
    char *text = unify_tree_differences(ranks);
    std::string out = text ? text : "out of memory";
    std::free(text);
    return out;
}

TEST(FormatUnifyTree, OneRankAlone) { EXPECT_EQ(differences(1), ""); }

TEST(FormatUnifyTree, SixteenRanksEqualTheFlatMerge) { EXPECT_EQ(differences(16), ""); }

TEST(FormatUnifyTree, ThirtyThreeRanksEqualTheFlatMerge) { EXPECT_EQ(differences(33), ""); }

// Rank 4 of 11 (children 5 and 6, parent 0) cannot merge what rank 5 sent:
// it names its cause, every other rank learns that another rank failed,
// none waits forever and none keeps maps.
TEST(FormatUnifyTree, AFailedMergeInsideTheTreeFailsEveryRank)
{
    char *text = unify_tree_failure_differences(11, 4);
    std::string out = text ? text : "out of memory";
    std::free(text);
    EXPECT_EQ(out, "");
}

}  // namespace
