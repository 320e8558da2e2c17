// The analyzer's totals (online/live.c): chunks add up per rank and
// function, a chunk that does not hold what its header says is left out
// whole, and live/report.json is written by a rename with the totals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../scratch_directory.hpp"

extern "C" {
#include "online/live.h"
}

namespace {

constexpr uint32_t kRanks = 2;
constexpr uint32_t kFunctions = 3;
const char *const kNames[kFunctions] = {"MPI_Send", "MPI_Recv", "MPI_Allreduce"};

size_t chunk_bytes(uint32_t calls)
{
    return sizeof(adt_online_chunk_header) + calls * sizeof(adt_online_call);
}

adt_online_chunk make_chunk(uint32_t rank)
{
    adt_online_chunk chunk{};
    chunk.header.rank = rank;
    chunk.header.ticks_per_second = 1000;
    chunk.header.calls = 2;
    chunk.calls[0] = {100, 350, 64, 0, 0, 0};  // MPI_Send, 250 ticks
    chunk.calls[1] = {400, 900, 8, 8, 2, 0};   // MPI_Allreduce, 500 ticks
    return chunk;
}

class Live : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(adt_live_create(&live, kRanks, kFunctions), 0); }
    void TearDown() override { adt_live_destroy(&live); }
    const adt_live_function &at(uint32_t rank, uint32_t function) const
    {
        return live.table[rank * kFunctions + function];
    }
    adt_live live{};
    char error[256] = "";
};

TEST_F(Live, ChunksAddUpPerRankAndFunction)
{
    adt_online_chunk chunk = make_chunk(1);
    chunk.header.unstreamed[ADT_ONLINE_LOSS_ANALYZER_BEHIND] = 5;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), true, error, sizeof error), 0) << error;
    EXPECT_EQ(at(1, 0).calls, 2u);
    EXPECT_EQ(at(1, 0).ticks, 500u);
    EXPECT_EQ(at(1, 0).sent, 128u);
    EXPECT_EQ(at(1, 2).calls, 2u);
    EXPECT_EQ(at(1, 2).received, 16u);
    EXPECT_EQ(at(0, 0).calls, 0u);
    EXPECT_EQ(live.states[1].finished, 1u);
    EXPECT_EQ(live.states[1].heard, 1u);
    EXPECT_EQ(live.states[0].heard, 0u);
    // Running totals: the latest header's, not their sum.
    EXPECT_EQ(live.states[1].unstreamed[ADT_ONLINE_LOSS_ANALYZER_BEHIND], 5u);
}

TEST_F(Live, AChunkThatDoesNotHoldWhatItsHeaderSaysIsLeftOutWhole)
{
    adt_online_chunk chunk = make_chunk(1);
    EXPECT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), false, error, sizeof error), -1)
        << "sent by rank 0, says rank 1";
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(1), false, error, sizeof error), -1)
        << "cut short";
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, 4, false, error, sizeof error), -1) << "shorter than its header";
    chunk.calls[1].function = kFunctions;
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), false, error, sizeof error), -1)
        << "an unknown function";
    EXPECT_NE(std::string(error).find("unknown function"), std::string::npos) << error;
    adt_online_chunk stranger = make_chunk(kRanks);
    EXPECT_EQ(adt_live_add_chunk(&live, kRanks, &stranger, chunk_bytes(2), false, error, sizeof error), -1)
        << "a rank beyond the run's";
    for (uint32_t rank = 0; rank < kRanks; rank++) {
        EXPECT_EQ(live.states[rank].heard, 0u);
        for (uint32_t function = 0; function < kFunctions; function++)
            EXPECT_EQ(at(rank, function).calls, 0u);
    }
}

TEST_F(Live, TheReportIsRenamedIntoPlaceWithTheTotals)
{
    ScratchDirectory scratch("adt-online-live-test");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(0);
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), true, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_write(&live, kNames, archive.c_str(), true, 1, 2, 1.5, error, sizeof error), 0) << error;
    std::ifstream in(archive + "/live/report.json");
    std::stringstream text;
    text << in.rdbuf();
    std::string report = text.str();
    EXPECT_NE(report.find("\"final\": true"), std::string::npos) << report;
    EXPECT_NE(report.find("\"connected_ranks\": [0]"), std::string::npos) << report;
    EXPECT_NE(report.find("{\"name\": \"MPI_Send\", \"calls\": 1, \"seconds\": 0.25, \"bytes_sent\": 64, "
                          "\"bytes_received\": 0}"),
              std::string::npos)
        << report;
    EXPECT_EQ(report.find("MPI_Recv"), std::string::npos) << "a function without calls is left out: " << report;
    EXPECT_FALSE(std::filesystem::exists(archive + "/live/.report.json.tmp"));
}

}  // namespace
