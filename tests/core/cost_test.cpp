// The measurement cost's record kinds (core.h "measurement cost", issue
// #26): which kind an MPI function's calls are kept under, the same for
// the runtime (its function table) and adaptrace-report (the archive's
// region definitions), and each kind's gap classes timed on their own
// calls.
#include <gtest/gtest.h>

#include <otf2/OTF2_Definitions.h>

#include <cstring>

#include "core/core.h"

namespace {

adt_cost_table empty_table()
{
    adt_cost_table table;
    std::memset(&table, 0, sizeof table);
    return table;
}

TEST(Cost, MpiRegionsFallInTheKindOfTheRecordsTheirCallsWrite)
{
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_FUNCTION, "MPI_Comm_rank"), ADT_COST_MPI_OTHER);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_FUNCTION, "MPI_Comm_split"), ADT_COST_MPI_OTHER);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_FILE_IO, "MPI_File_read"), ADT_COST_MPI_OTHER);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_POINT2POINT, "MPI_Sendrecv"), ADT_COST_MPI_P2P);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_POINT2POINT, "MPI_Isend"), ADT_COST_MPI_P2P);
    // The completions have the plain function role but write the
    // messages' completion records.
    for (const char *name : {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall",
                             "MPI_Testany", "MPI_Testsome", "MPI_Start", "MPI_Startall"})
        EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_FUNCTION, name), ADT_COST_MPI_P2P) << name;
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_FUNCTION, "MPI_Test_cancelled"), ADT_COST_MPI_OTHER);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_BARRIER, "MPI_Barrier"), ADT_COST_MPI_COLLECTIVE);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_BARRIER, "MPI_Ibarrier"), ADT_COST_MPI_COLLECTIVE);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_COLL_ONE2ALL, "MPI_Bcast"), ADT_COST_MPI_COLLECTIVE);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_COLL_ALL2ONE, "MPI_Reduce"), ADT_COST_MPI_COLLECTIVE);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_COLL_ALL2ALL, "MPI_Allreduce"), ADT_COST_MPI_COLLECTIVE);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_COLL_OTHER, "MPI_Scan"), ADT_COST_MPI_COLLECTIVE);
    EXPECT_EQ(adt_cost_kind_of_mpi_region(OTF2_REGION_ROLE_FUNCTION, nullptr), ADT_COST_MPI_OTHER);
}

TEST(Cost, KindsHaveTheirKeysInSummaryJson)
{
    EXPECT_STREQ(adt_cost_kind_key(ADT_COST_MPI_OTHER), "mpi_other");
    EXPECT_STREQ(adt_cost_kind_key(ADT_COST_MPI_P2P), "mpi_p2p");
    EXPECT_STREQ(adt_cost_kind_key(ADT_COST_MPI_COLLECTIVE), "mpi_collective");
    EXPECT_STREQ(adt_cost_kind_key(ADT_COST_SAMPLE), "sample");
}

// A class whose first calls were all of one kind (the point-to-point
// calls of a ping-pong) has its timings; a short local call of that class
// is timed all the same, on its kind's cell, and its timing goes there:
// with one cell per class, the local call took the message calls' cost.
TEST(Cost, EachKindsGapClassesAreTimedOnTheirOwnCalls)
{
    adt_cost_table table = empty_table();
    for (int i = 0; i < ADT_COST_FIRST_TIMED; i++) {
        EXPECT_EQ(adt_cost_choose_timing(&table, ADT_COST_MPI_P2P, 0, false, true), ADT_COST_TIMED_FROM_ENTRY);
        adt_cost_note_timing(&table, ADT_COST_MPI_P2P, 0, true, 10, 300, 400);
    }
    EXPECT_EQ(adt_cost_choose_timing(&table, ADT_COST_MPI_P2P, 0, false, true), ADT_COST_UNTIMED);
    EXPECT_EQ(adt_cost_choose_timing(&table, ADT_COST_MPI_OTHER, 0, false, true), ADT_COST_TIMED_FROM_ENTRY);
    adt_cost_note_timing(&table, ADT_COST_MPI_OTHER, 0, true, 10, 30, 40);
    adt_cost_parts other = adt_cost_estimate(table.cells[ADT_COST_MPI_OTHER], 0);
    adt_cost_parts p2p = adt_cost_estimate(table.cells[ADT_COST_MPI_P2P], 0);
    EXPECT_DOUBLE_EQ(other.inside, 30);
    EXPECT_DOUBLE_EQ(other.after, 40);
    EXPECT_DOUBLE_EQ(p2p.inside, 300);
    EXPECT_DOUBLE_EQ(p2p.after, 400);
}


// A class's first timings are its first calls, all timed: a preemption
// among them (24 ms where a call costs 1 us) is not kept, from the
// cell's second timing on, and a lone first timing far above the second
// is taken out again. Before, the screen began at the 8th timing, and
// such a timing set the class's mean for every event of it.
TEST(Cost, APreemptionAmongAClassesFirstTimingsIsNotKept)
{
    adt_cost_table table = empty_table();
    adt_cost_note_timing(&table, ADT_COST_MPI_P2P, 4, true, 100, 1000, 1500);
    adt_cost_note_timing(&table, ADT_COST_MPI_P2P, 4, true, 62400000, 1000, 1500);
    adt_cost_note_timing(&table, ADT_COST_MPI_P2P, 4, false, 0, 62400000, 1500);
    adt_cost_note_timing(&table, ADT_COST_MPI_P2P, 4, true, 120, 1300, 1700);
    const adt_cost_cell &cell = table.cells[ADT_COST_MPI_P2P][4];
    EXPECT_EQ(table.outliers[ADT_COST_MPI_P2P], 2u);
    EXPECT_EQ(cell.timed, 2u);
    EXPECT_EQ(cell.timed_before, 2u);
    adt_cost_parts parts = adt_cost_estimate(table.cells[ADT_COST_MPI_P2P], 4);
    EXPECT_DOUBLE_EQ(parts.before, 110);
    EXPECT_DOUBLE_EQ(parts.inside, 1150);
    EXPECT_DOUBLE_EQ(parts.after, 1600);
}

TEST(Cost, ALoneFirstTimingFarAboveTheSecondIsTakenOutAgain)
{
    adt_cost_table table = empty_table();
    adt_cost_note_timing(&table, ADT_COST_SAMPLE, 2, true, 0, 0, 24000000);
    adt_cost_note_timing(&table, ADT_COST_SAMPLE, 2, true, 0, 0, 2000);
    adt_cost_note_timing(&table, ADT_COST_SAMPLE, 2, true, 0, 0, 3000);
    EXPECT_EQ(table.outliers[ADT_COST_SAMPLE], 1u);
    EXPECT_EQ(table.cells[ADT_COST_SAMPLE][2].timed, 2u);
    EXPECT_DOUBLE_EQ(adt_cost_estimate(table.cells[ADT_COST_SAMPLE], 2).after, 2500);
    // Its before part alike (a wrapper entry to Enter descheduled).
    adt_cost_note_timing(&table, ADT_COST_MPI_OTHER, 4, true, 24000000, 400, 600);
    adt_cost_note_timing(&table, ADT_COST_MPI_OTHER, 4, true, 30, 500, 700);
    EXPECT_EQ(table.outliers[ADT_COST_MPI_OTHER], 1u);
    adt_cost_parts parts = adt_cost_estimate(table.cells[ADT_COST_MPI_OTHER], 4);
    EXPECT_DOUBLE_EQ(parts.before, 30);
    EXPECT_DOUBLE_EQ(parts.inside, 500);
}

// Costs that spread as cold calls do (1 to 6 times) are all kept.
TEST(Cost, ColdCallsSpreadingBelowTheFactorAreAllKept)
{
    adt_cost_table table = empty_table();
    for (uint64_t inside : {1170, 338, 572, 1924, 416, 546, 1352, 338})
        adt_cost_note_timing(&table, ADT_COST_MPI_OTHER, 4, true, 26, inside, 1700);
    EXPECT_EQ(table.outliers[ADT_COST_MPI_OTHER], 0u);
    EXPECT_EQ(table.cells[ADT_COST_MPI_OTHER][4].timed, 8u);
}

} // namespace
