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
    adt_cost_table table;
    std::memset(&table, 0, sizeof table);
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

} // namespace
