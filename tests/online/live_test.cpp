// The analyzer's totals (online/live.c): chunks add up per rank and
// function, a chunk that does not hold what its header says is left out
// whole, samples count exclusively for their context's function and once
// inclusively for every function on its path, and live/report.json is
// written by a rename with the totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch_directory.hpp"

extern "C" {
#include "online/live.h"
}

namespace {

constexpr uint32_t kRanks = 2;
constexpr uint32_t kFunctions = 3;
const char *const kNames[kFunctions] = {"MPI_Send", "MPI_Recv", "MPI_Allreduce"};
// final, analyzers, interval_s, elapsed_s, analyzers_cpu_s, ended_by_signal, analyzers_reported,
// analyzer_lost, analyzers_lost_at_s, round_report_bytes, round_report_largest_bytes, counter_names, counters
const adt_live_moment kFinal = {true, 1, 2, 1.5, 0.25, 0, 1, nullptr, 0.0, 0, 0, nullptr, 0};
const adt_live_moment kRunning = {false, 1, 2, 1.5, 0.25, 0, 1, nullptr, 0.0, 0, 0, nullptr, 0};

size_t chunk_bytes(uint32_t records)
{
    return sizeof(adt_online_chunk_header) + records * sizeof(adt_online_record);
}

// The live/report.json that adt_live_write wrote into archive.
std::string written_report(const std::string &archive)
{
    std::ifstream in(archive + "/live/report.json");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

adt_online_record call(uint32_t function, uint64_t enter, uint64_t leave, uint64_t sent, uint64_t received)
{
    adt_online_record record{};
    record.kind = ADT_ONLINE_RECORD_CALL;
    record.id = function;
    record.call.enter = enter;
    record.call.leave = leave;
    record.call.sent = sent;
    record.call.received = received;
    return record;
}

adt_online_chunk make_chunk(uint32_t rank)
{
    adt_online_chunk chunk{};
    chunk.header.rank = rank;
    chunk.header.ticks_per_second = 1000;
    chunk.header.records = 2;
    chunk.records[0] = call(0, 100, 350, 64, 0);  // MPI_Send, 250 ticks
    chunk.records[1] = call(2, 400, 900, 8, 8);   // MPI_Allreduce, 500 ticks
    return chunk;
}

adt_online_record context(uint32_t id, uint32_t parent, uint64_t key)
{
    adt_online_record record{};
    record.kind = ADT_ONLINE_RECORD_CONTEXT;
    record.id = id;
    record.context.key = key;
    record.context.parent = parent;
    return record;
}

std::string read_text(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Keys name their node's function: 1 "main", 2 "solve", 3 "kernel".
const char *name_by_key(void *, uint32_t, uint32_t, uint64_t key, bool, bool *measurement)
{
    static const char *const names[] = {"", "main", "solve", "kernel"};
    *measurement = false;
    return names[key];
}

class Live : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(adt_live_create(&live, kRanks, kFunctions), 0); }
    void TearDown() override { adt_live_destroy(&live); }
    adt_feed_mpi_figures at(uint32_t rank, uint32_t function) const { return adt_feed_mpi_of(&live.mpi, rank, function); }
    // Two analyzers: live serves rank 0, other rank 1, whose clock is
    // other_offset ahead of rank 0's. Rank 0 sends rank 1 two messages on
    // world, then second_comm, and both enter a collective of 2 on world;
    // rank 1 receives the first message. Each analyzer keeps the ends it
    // cannot match (declared after ends_chunk and its records below).
    void add_crossing_ends(adt_live &other, uint64_t second_comm, uint64_t other_offset);
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
    EXPECT_EQ(at(1, 0).bytes_sent, 128u);
    EXPECT_EQ(at(1, 2).calls, 2u);
    EXPECT_EQ(at(1, 2).bytes_received, 16u);
    EXPECT_EQ(at(0, 0).calls, 0u);
    EXPECT_EQ(live.states[1].finished, 1u);
    EXPECT_EQ(live.states[1].heard, 1u);
    EXPECT_EQ(live.states[0].heard, 0u);
    // Running totals: the latest header's, not their sum.
    EXPECT_EQ(live.states[1].unstreamed[ADT_ONLINE_LOSS_ANALYZER_BEHIND], 5u);
}

// A region's name in parts of ADT_ONLINE_NAME_BYTES_PER_RECORD bytes: whole
// once the part with its NUL came; a name whose sending ran out of chunks
// starts again at part 0; a part out of order leaves it incomplete; a part
// beyond ADT_ONLINE_REGION_NAME_MAX refuses the chunk.
adt_online_record name_part(uint32_t region, uint16_t part, const std::string &name)
{
    adt_online_record record{};
    record.kind = ADT_ONLINE_RECORD_REGION_NAME;
    record.id = region;
    record.flags = part;
    size_t at = part * ADT_ONLINE_NAME_BYTES_PER_RECORD, end = name.size() + 1;
    if (at < end)
        std::memcpy(record.name, name.c_str() + at, std::min<size_t>(ADT_ONLINE_NAME_BYTES_PER_RECORD, end - at));
    return record;
}

TEST_F(Live, ARegionsNameComesInPartsAndStartsAgainAtPartZero)
{
    const std::string long_name = "a user region named at length, " + std::string(30, 'x');
    ASSERT_GT(long_name.size() + 1, ADT_ONLINE_NAME_BYTES_PER_RECORD);
    adt_online_chunk chunk{};
    chunk.header.rank = 1;
    chunk.header.records = 4;
    chunk.records[0] = name_part(7, 0, long_name);
    chunk.records[1] = name_part(9, 0, "kernel");
    chunk.records[2] = name_part(7, 0, long_name);  // sent again, whole
    chunk.records[3] = name_part(7, 1, long_name);
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(4), false, error, sizeof error), 0) << error;
    ASSERT_NE(adt_live_region_name(&live, 1, 7), nullptr);
    EXPECT_EQ(std::string(adt_live_region_name(&live, 1, 7)), long_name);
    ASSERT_NE(adt_live_region_name(&live, 1, 9), nullptr);
    EXPECT_EQ(std::string(adt_live_region_name(&live, 1, 9)), "kernel");
    EXPECT_EQ(adt_live_region_name(&live, 0, 9), nullptr) << "rank 1's region, not rank 0's";

    chunk.header.records = 2;
    chunk.records[0] = name_part(11, 0, long_name);
    chunk.records[1] = name_part(11, 1, long_name);
    chunk.records[1].flags = 2;  // part 1 missing
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    EXPECT_EQ(adt_live_region_name(&live, 1, 11), nullptr);

    chunk.header.records = 1;
    chunk.records[0] = name_part(12, 0, "x");
    chunk.records[0].flags = ADT_ONLINE_REGION_NAME_MAX / ADT_ONLINE_NAME_BYTES_PER_RECORD;
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(1), false, error, sizeof error), -1);
    EXPECT_NE(std::string(error).find("part"), std::string::npos) << error;
}

// A call with MPI calls nested in it (an error handler's, a generalized
// request's callbacks) counts its ticks less theirs, as adaptrace-report's
// exclusive time; nested ticks beyond its own (a damaged record) count 0.
TEST_F(Live, ACallsTimeLeavesOutItsNestedCalls)
{
    adt_online_chunk chunk = make_chunk(1);
    chunk.records[0].call.nested = 200;  // MPI_Send: 250 ticks, 200 in calls nested in it
    chunk.records[1].call.nested = 600;  // MPI_Allreduce: 500 ticks, more nested
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), true, error, sizeof error), 0) << error;
    EXPECT_EQ(at(1, 0).calls, 1u);
    EXPECT_EQ(at(1, 0).ticks, 50u);
    EXPECT_EQ(at(1, 2).calls, 1u);
    EXPECT_EQ(at(1, 2).ticks, 0u);
}

// The calls a rank could not stream one by one come at the end as totals
// per function: they add to the calls streamed.
TEST_F(Live, TotalsAddToTheCallsStreamed)
{
    adt_online_chunk chunk = make_chunk(1);
    adt_online_record totals{};
    totals.kind = ADT_ONLINE_RECORD_TOTALS;
    totals.id = 0;  // MPI_Send
    totals.totals.calls = 1000;
    totals.totals.ticks = 7000;
    totals.totals.sent = 64000;
    totals.totals.received = 3;
    chunk.records[2] = totals;
    chunk.header.records = 3;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(3), true, error, sizeof error), 0) << error;
    EXPECT_EQ(at(1, 0).calls, 1001u);
    EXPECT_EQ(at(1, 0).ticks, 7250u);
    EXPECT_EQ(at(1, 0).bytes_sent, 64064u);
    EXPECT_EQ(at(1, 0).bytes_received, 3u);
    EXPECT_EQ(at(1, 2).calls, 1u);
    chunk.records[2].id = kFunctions;
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(3), true, error, sizeof error), -1)
        << "totals of an unknown function";
    EXPECT_EQ(at(1, 0).calls, 1001u);
}

adt_online_record messages(uint32_t receiver, uint64_t count, uint64_t bytes)
{
    adt_online_record record{};
    record.kind = ADT_ONLINE_RECORD_MESSAGES;
    record.id = receiver;
    record.messages.count = count;
    record.messages.bytes = bytes;
    return record;
}

// A rank's message records (one per send, or its per-receiver totals at
// the end) go to the matrix in its row; the report writes it as
// adaptrace-report --json does, row-major, with the messages not in it by
// cause (the latest header's running totals); a receiver beyond the run's
// ranks leaves the chunk out whole.
TEST_F(Live, MessagesGoToTheSendersRowOfTheMatrix)
{
    ScratchDirectory scratch("adt-online-live-matrix");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(1);
    chunk.records[2] = messages(0, 1, 64);
    chunk.records[3] = messages(0, 1000, 8000);  // totals
    chunk.records[4] = messages(1, 1, 4);        // to itself
    chunk.header.records = 5;
    chunk.header.messages_unstreamed[ADT_ONLINE_MESSAGE_LOSS_RECEIVER_UNKNOWN] = 3;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(5), true, error, sizeof error), 0) << error;
    EXPECT_EQ(live.matrix.messages[1 * kRanks + 0], 1001u);
    EXPECT_EQ(live.matrix.bytes[1 * kRanks + 0], 8064u);
    EXPECT_EQ(live.matrix.messages[1 * kRanks + 1], 1u);
    EXPECT_EQ(live.matrix.messages[0 * kRanks + 1], 0u);
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"matrix_messages\": [0,0,1001,1]"), std::string::npos) << report;
    EXPECT_NE(report.find("\"matrix_bytes\": [0,0,8064,4]"), std::string::npos) << report;
    EXPECT_NE(report.find("\"messages_not_in_matrix_by_cause\": {\"receiver_unknown\": 3, \"analyzer_lost\": 0, "
                          "\"other_thread\": 0}"),
              std::string::npos)
        << report;
    chunk.records[4] = messages(kRanks, 1, 4);
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(5), true, error, sizeof error), -1)
        << "a receiver beyond the run's ranks";
    EXPECT_EQ(live.matrix.messages[1 * kRanks + 0], 1001u) << "nothing of the refused chunk added";
}

// The ranks' PAPI counters (ADAPTRACE_METRICS): each chunk's header has
// their running totals at the rank's last sample streamed; the report
// names the counters the moment gives, has each rank's latest totals and
// their sum over the ranks.
TEST_F(Live, TheReportHasEachRanksLatestCounterTotals)
{
    ScratchDirectory scratch("adt-online-live-counters");
    std::string archive = scratch.path() + "/archive";
    for (uint32_t rank = 0; rank < kRanks; rank++) {
        adt_online_chunk chunk = make_chunk(rank);
        chunk.header.counter_totals[0] = 1000 + rank;
        chunk.header.counter_totals[1] = 7;
        ASSERT_EQ(adt_live_add_chunk(&live, rank, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
        chunk.header.counter_totals[0] = 5000 + rank;
        chunk.header.counter_totals[1] = 9;
        ASSERT_EQ(adt_live_add_chunk(&live, rank, &chunk, chunk_bytes(2), true, error, sizeof error), 0) << error;
    }
    const char *const counters[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS"};
    adt_live_moment moment = kFinal;
    moment.counter_names = counters;
    moment.counters = 2;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &moment, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"counters\": [\"perf::TASK-CLOCK\", \"perf::PAGE-FAULTS\"]"), std::string::npos) << report;
    EXPECT_NE(report.find("\"counter_totals\": {\"perf::TASK-CLOCK\": 10001, \"perf::PAGE-FAULTS\": 18}"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("\"counter_totals\": {\"perf::TASK-CLOCK\": 5001, \"perf::PAGE-FAULTS\": 9}}"),
              std::string::npos)
        << "rank 1's latest: " << report;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    report = written_report(archive);
    EXPECT_NE(report.find("\"counters\": [],\n  \"counter_totals\": {}"), std::string::npos)
        << "without counters: " << report;
}

adt_online_record message_end(bool sending, uint32_t peer, uint64_t enter, uint64_t comm, uint32_t tag,
                                uint64_t bytes)
{
    adt_online_record record{};
    record.kind = ADT_ONLINE_RECORD_MESSAGE_END;
    record.flags = sending ? ADT_ONLINE_END_SENDING : 0;
    record.id = peer;
    record.end.enter = enter;
    record.end.comm = comm;
    record.end.tag = tag;
    record.end.bytes = bytes;
    return record;
}

adt_online_record collective(uint32_t members, uint64_t enter, uint64_t end, uint64_t comm, uint32_t lowest = 0,
                             uint32_t highest = kRanks - 1)
{
    adt_online_record record{};
    record.kind = ADT_ONLINE_RECORD_COLLECTIVE;
    record.id = members;
    record.collective.enter = enter;
    record.collective.end = end;
    record.collective.comm = comm;
    record.collective.lowest_member = lowest;
    record.collective.highest_member = highest;
    return record;
}

adt_online_chunk ends_chunk(uint32_t rank, std::vector<adt_online_record> records)
{
    adt_online_chunk chunk{};
    chunk.header.rank = rank;
    chunk.header.ticks_per_second = 1000;
    chunk.header.records = static_cast<uint32_t>(records.size());
    for (size_t i = 0; i < records.size(); i++)
        chunk.records[i] = records[i];
    return chunk;
}

// The message and collective end records (wire.h) fit the 48-byte record
// and reach the event feed's late sender and collective waiting
// (feed/waiting.c): a send matched with its receive on the same
// communicator key and tag, the receiver's wait until the send's Enter
// counted on the receiver, each member's wait until the last member's
// entry on it; times compared on rank 0's clock (rank 1's offset added).
TEST_F(Live, MessageAndCollectiveEndsGiveLateSenderAndCollectiveWaiting)
{
    EXPECT_EQ(sizeof(adt_online_record), 48u);
    ScratchDirectory scratch("adt-online-live-waiting");
    std::string archive = scratch.path() + "/archive";
    const uint64_t world = adt_online_comm_key(0, 0), other = adt_online_comm_key(1, 7);
    live.states[1].clock_offset = 50;  // rank 1's time + 50 is rank 0's
    adt_online_chunk first = ends_chunk(0, {message_end(true, 1, 500, world, 5, 64), collective(2, 100, 200, world),
                                            message_end(true, 1, 600, other, 5, 8)});
    adt_online_chunk second =
        ends_chunk(1, {message_end(false, 0, 300, world, 5, 64), collective(2, 20, 400, world)});
    second.header.waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_NESTED_TOO_DEEP] = 2;
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &first, chunk_bytes(3), true, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &second, chunk_bytes(2), true, error, sizeof error), 0) << error;
    // The receive entered at 350 on rank 0's clock, the send at 500.
    EXPECT_EQ(live.states[1].late_sender_ticks, 150u);
    EXPECT_EQ(live.states[0].late_sender_ticks, 0u);
    // Entries at 100 and 70: rank 1 waits 30 ticks for rank 0.
    EXPECT_EQ(live.states[1].collective_wait_ticks, 30u);
    EXPECT_EQ(live.states[0].collective_wait_ticks, 0u);
    EXPECT_EQ(live.states[1].messages_matched + live.states[0].messages_matched, 1u);
    EXPECT_EQ(live.states[0].collectives_matched + live.states[1].collectives_matched, 1u);
    // Both sends are in the matrix, matched or not.
    EXPECT_EQ(live.matrix.messages[0 * kRanks + 1], 2u);
    EXPECT_EQ(live.matrix.bytes[0 * kRanks + 1], 72u);
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"messages_matched\": 1, \"messages_unmatched\": 1, \"collectives_matched\": 1"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("\"late_sender_seconds\": 0.15, \"collective_wait_seconds\": 0.03"), std::string::npos)
        << report;
    EXPECT_NE(report.find("\"late_sender_seconds\": {\"min\": 0, \"mean\": 0.075, \"max\": 0.15"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("\"waiting_ends_not_matched_by_cause\": {\"analyzer_behind\": 0, \"analyzer_lost\": 0, "
                          "\"other_thread\": 0, \"peer_unknown\": 0, \"nested_too_deep\": 2, "
                          "\"peer_on_other_analyzer\": 0}"),
              std::string::npos)
        << report;
    adt_online_chunk beyond = ends_chunk(1, {message_end(false, kRanks, 300, world, 5, 64)});
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &beyond, chunk_bytes(1), true, error, sizeof error), -1)
        << "a peer beyond the run's ranks";
}

// An analyzer that serves rank 0 only leaves out the ends whose other end
// is rank 1's (another analyzer's) and the collectives with a member of
// rank 1, each counted under peer_on_other_analyzer; a collective with a
// A collective end the rank could not stream (every chunk in flight:
// analyzer_behind) does not shift its later instances on that
// communicator: each end carries its instance number, counted on the
// rank (stream.c), so rank 1's third collective meets rank 0's third, the
// lost one's instance stays incomplete, and the loss is counted by cause.
TEST_F(Live, ACollectiveEndLostOnTheRankDoesNotShiftItsLaterInstances)
{
    ScratchDirectory scratch("adt-online-live-lost-collective");
    std::string archive = scratch.path() + "/archive";
    const uint64_t world = adt_online_comm_key(0, 0);
    auto numbered = [](adt_online_record record, uint64_t sequence) {
        record.collective.sequence = sequence;
        return record;
    };
    adt_online_chunk first = ends_chunk(0, {numbered(collective(2, 100, 110, world), 0),
                                            numbered(collective(2, 300, 310, world), 1),
                                            numbered(collective(2, 500, 510, world), 2)});
    // Rank 1's second collective (instance 1) found every chunk in flight.
    adt_online_chunk second = ends_chunk(1, {numbered(collective(2, 150, 160, world), 0),
                                             numbered(collective(2, 520, 530, world), 2)});
    second.header.waiting_unstreamed[ADT_ONLINE_WAITING_LOSS_ANALYZER_BEHIND] = 1;
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &first, chunk_bytes(3), true, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &second, chunk_bytes(2), true, error, sizeof error), 0) << error;
    // Instance 0: rank 0 waits 50 ticks for rank 1; instance 2: 20. Counted
    // by arrival, rank 1's end of instance 2 would have met rank 0's
    // instance 1 (entry 300): 220 ticks.
    EXPECT_EQ(live.states[0].collective_wait_ticks, 70u);
    EXPECT_EQ(live.states[1].collective_wait_ticks, 0u);
    EXPECT_EQ(live.states[0].collectives_matched + live.states[1].collectives_matched, 2u);
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"collectives_matched\": 2"), std::string::npos) << report;
    EXPECT_NE(report.find("\"waiting_ends_not_matched_by_cause\": {\"analyzer_behind\": 1, "), std::string::npos)
        << report;
    // A number that does not grow (a damaged stream) is refused.
    adt_online_chunk again = ends_chunk(1, {numbered(collective(2, 600, 610, world), 1)});
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &again, chunk_bytes(1), true, error, sizeof error), -1);
}

// member outside the run's ranks (or not known) under peer_unknown.
TEST_F(Live, EndsWhoseOtherEndsGoToAnotherAnalyzerAreCountedOut)
{
    ScratchDirectory scratch("adt-online-live-other-analyzer");
    std::string archive = scratch.path() + "/archive";
    adt_live_serve(&live, 0, 1);
    const uint64_t world = adt_online_comm_key(0, 0), self = adt_online_comm_key(0, 1);
    adt_online_chunk chunk =
        ends_chunk(0, {message_end(true, 1, 500, world, 5, 64), collective(2, 100, 200, world),
                       collective(1, 300, 310, self, 0, 0), collective(2, 400, 410, world, 0, UINT32_MAX),
                       message_end(true, 0, 600, self, 1, 8), message_end(false, 0, 550, self, 1, 8)});
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(6), true, error, sizeof error), 0) << error;
    EXPECT_EQ(live.states[0].waiting_left_out[ADT_ONLINE_WAITING_LOSS_PEER_ON_OTHER_ANALYZER], 2u);
    EXPECT_EQ(live.states[0].waiting_left_out[ADT_ONLINE_WAITING_LOSS_PEER_UNKNOWN], 1u);
    // The message to itself and the collective on its own communicator
    // are this analyzer's alone: matched.
    EXPECT_EQ(live.states[0].messages_matched, 1u);
    EXPECT_EQ(live.states[0].late_sender_ticks, 50u);
    EXPECT_EQ(live.states[0].collectives_matched, 1u);
    EXPECT_EQ(live.matrix.messages[0 * kRanks + 1], 1u) << "a send left out of the waiting is in the matrix";
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"messages_matched\": 1, \"messages_unmatched\": 0, \"collectives_matched\": 1"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("\"peer_unknown\": 1, \"nested_too_deep\": 0, \"peer_on_other_analyzer\": 2}"),
              std::string::npos)
        << report;
}

void Live::add_crossing_ends(adt_live &other, uint64_t second_comm, uint64_t other_offset)
{
    adt_live_serve(&live, 0, 1);
    adt_live_serve(&other, 1, 2);
    other.states[1].clock_offset = other_offset;
    const uint64_t world = adt_online_comm_key(0, 0);
    adt_online_chunk first = ends_chunk(0, {message_end(true, 1, 500, world, 5, 64), collective(2, 100, 200, world),
                                            message_end(true, 1, 600, second_comm, 5, 8)});
    adt_online_chunk second =
        ends_chunk(1, {message_end(false, 0, 300, world, 5, 64), collective(2, 20, 400, world)});
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &first, chunk_bytes(3), true, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_add_chunk(&other, 1, &second, chunk_bytes(2), true, error, sizeof error), 0) << error;
}

// With two analyzers (live serves rank 0, other rank 1), each keeps the
// ends it cannot match, times on rank 0's clock; analyzer 0's analysis of
// them (cross) takes each analyzer's words as a round report carries them
// and matches them as one analyzer would (the figures of
// MessageAndCollectiveEndsGiveLateSenderAndCollectiveWaiting), and the
// written report adds them to each rank's: none left out.
TEST_F(Live, EndsAcrossAnalyzersAreMatchedByAnalyzer0)
{
    ScratchDirectory scratch("adt-online-live-crossing");
    std::string archive = scratch.path() + "/archive";
    adt_live other{}, cross{};
    ASSERT_EQ(adt_live_create(&other, kRanks, kFunctions), 0);
    ASSERT_EQ(adt_live_create(&cross, kRanks, kFunctions), 0);
    ASSERT_NO_FATAL_FAILURE(add_crossing_ends(other, adt_online_comm_key(1, 7), 50));
    EXPECT_EQ(live.crossing_words, 3 * ADT_LIVE_CROSSING_END_WORDS);
    EXPECT_EQ(other.crossing_words, 2 * ADT_LIVE_CROSSING_END_WORDS);
    EXPECT_EQ(other.states[1].waiting_left_out[ADT_ONLINE_WAITING_LOSS_PEER_ON_OTHER_ANALYZER], 2u);
    EXPECT_EQ(live.states[0].messages_matched + other.states[1].messages_matched, 0u);
    // The other analyzer's report first, then analyzer 0's own: each
    // drops what analyzer 0 took, so that the next round carries only new
    // ends.
    ASSERT_EQ(adt_live_add_crossing_words(&cross, other.crossing, other.crossing_words), 0);
    adt_live_crossing_taken(&other, other.crossing_words);
    EXPECT_EQ(other.crossing_words, 0u);
    EXPECT_EQ(cross.states[1].messages_matched, 0u) << "the send has not come yet";
    ASSERT_EQ(adt_live_add_crossing_words(&cross, live.crossing, live.crossing_words), 0);
    adt_live_crossing_taken(&live, live.crossing_words);
    EXPECT_EQ(cross.states[1].late_sender_ticks, 150u);
    EXPECT_EQ(cross.states[1].collective_wait_ticks, 30u);
    EXPECT_EQ(cross.states[1].messages_matched, 1u);
    EXPECT_EQ(cross.states[0].collectives_matched + cross.states[1].collectives_matched, 1u);
    EXPECT_EQ(cross.states[0].crossing_ends_taken, 3u);
    EXPECT_EQ(cross.states[1].crossing_ends_taken, 2u);
    // Analyzer 0's total: its own row and the other analyzer's (as a
    // round report copies it), with the crossing analysis added.
    live.states[1] = other.states[1];
    live.crossed = &cross;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"messages_matched\": 1, \"messages_unmatched\": 1, \"collectives_matched\": 1"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("\"late_sender_seconds\": 0.15, \"collective_wait_seconds\": 0.03"), std::string::npos)
        << report;
    EXPECT_NE(report.find("\"nested_too_deep\": 0, \"peer_on_other_analyzer\": 0}"), std::string::npos) << report;
    // Words that do not parse: not whole ends, a rank beyond the run's.
    uint64_t words[ADT_LIVE_CROSSING_END_WORDS] = { kRanks };
    EXPECT_EQ(adt_live_add_crossing_words(&cross, words, ADT_LIVE_CROSSING_END_WORDS - 1), -1);
    EXPECT_EQ(adt_live_add_crossing_words(&cross, words, ADT_LIVE_CROSSING_END_WORDS), -1);
    adt_live_destroy(&other);
    adt_live_destroy(&cross);
}

// The other analyzer lost before analyzer 0 took its crossing ends: its
// last row still counts them under peer_on_other_analyzer, and analyzer
// 0's own ends whose other ends never came stay unmatched (the sends) or
// incomplete (the collective).
TEST_F(Live, CrossingEndsAnalyzer0DidNotTakeStayCountedOut)
{
    ScratchDirectory scratch("adt-online-live-crossing-lost");
    std::string archive = scratch.path() + "/archive";
    adt_live other{}, cross{};
    ASSERT_EQ(adt_live_create(&other, kRanks, kFunctions), 0);
    ASSERT_EQ(adt_live_create(&cross, kRanks, kFunctions), 0);
    ASSERT_NO_FATAL_FAILURE(add_crossing_ends(other, adt_online_comm_key(0, 0), 0));
    ASSERT_EQ(adt_live_add_crossing_words(&cross, live.crossing, live.crossing_words), 0);
    adt_live_crossing_taken(&live, live.crossing_words);
    live.states[1] = other.states[1];
    live.crossed = &cross;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"messages_matched\": 0, \"messages_unmatched\": 2, \"collectives_matched\": 0"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("\"nested_too_deep\": 0, \"peer_on_other_analyzer\": 2}"), std::string::npos) << report;
    adt_live_destroy(&other);
    adt_live_destroy(&cross);
}

TEST_F(Live, AChunkThatDoesNotHoldWhatItsHeaderSaysIsLeftOutWhole)
{
    adt_online_chunk chunk = make_chunk(1);
    EXPECT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), false, error, sizeof error), -1)
        << "sent by rank 0, says rank 1";
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(1), false, error, sizeof error), -1)
        << "cut short";
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, 4, false, error, sizeof error), -1) << "shorter than its header";
    chunk.records[1].id = kFunctions;
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), false, error, sizeof error), -1)
        << "an unknown function";
    EXPECT_NE(std::string(error).find("unknown function"), std::string::npos) << error;
    adt_online_chunk beyond = make_chunk(1);
    beyond.records[1] = context(ADT_FEED_CONTEXTS_MAX, ADT_ONLINE_NO_PARENT, 1);
    EXPECT_EQ(adt_live_add_chunk(&live, 1, &beyond, chunk_bytes(2), false, error, sizeof error), -1)
        << "a context numbered beyond any tree";
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
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"final\": true"), std::string::npos) << report;
    EXPECT_NE(report.find("\"analyzers_cpu_s\": 0.250,"), std::string::npos) << report;
    EXPECT_NE(report.find("\"connected_ranks\": [0]"), std::string::npos) << report;
    EXPECT_NE(report.find("{\"name\": \"MPI_Send\", \"calls\": 1, \"seconds\": 0.25, \"bytes_sent\": 64, "
                          "\"bytes_received\": 0}"),
              std::string::npos)
        << report;
    EXPECT_EQ(report.find("MPI_Recv"), std::string::npos) << "a function without calls is left out: " << report;
    EXPECT_FALSE(std::filesystem::exists(archive + "/live/.report.json.tmp"));
    EXPECT_FALSE(std::filesystem::exists(archive + "/live/report.html")) << "no page printer, no page";
}

// Each rank's span (its chunk headers' first and last event), seconds in
// MPI and computation, and their spread over the ranks (the feed's, as
// adaptrace-report's "ranks" and "rank_spread"), read at rank 0's rate.
TEST_F(Live, TheReportHasEachRanksSpanTimeInMpiComputationAndTheirSpread)
{
    ScratchDirectory scratch("adt-online-live-spread");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(0);  // 750 ticks at 1000 a second
    chunk.header.first_event = 300;
    chunk.header.last_event = 1000;
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    // The next header: a sample taken before MPI_Init's Enter came late.
    chunk.header.first_event = 0;
    chunk.header.last_event = 2000;
    chunk.header.records = 0;
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(0), true, error, sizeof error), 0) << error;
    chunk = make_chunk(1);
    chunk.header.ticks_per_second = 999;  // rank 0's rate is the archive's
    chunk.header.records = 1;             // MPI_Send only: 250 ticks
    chunk.header.first_event = 500;
    chunk.header.last_event = 1500;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(1), true, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"rank_spread\": {\"span_seconds\": {\"min\": 1, \"mean\": 1.5, \"max\": 2, "
                          "\"imbalance\": 1.33333333},\n    \"mpi_seconds\": {\"min\": 0.25, \"mean\": 0.5, "
                          "\"max\": 0.75, \"imbalance\": 1.5},\n    \"computation_seconds\": {\"min\": 0.75, "
                          "\"mean\": 1, \"max\": 1.25, \"imbalance\": 1.25},\n    \"late_sender_seconds\": {\"min\": 0, "
                          "\"mean\": 0, \"max\": 0, \"imbalance\": 1},\n    \"collective_wait_seconds\": {\"min\": 0, "
                          "\"mean\": 0, \"max\": 0, \"imbalance\": 1}}"),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("{\"rank\": 0, \"connected\": true, \"finished\": true, \"span_seconds\": 2, "
                          "\"mpi_seconds\": 0.75, \"computation_seconds\": 1.25, "),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("{\"rank\": 1, \"connected\": true, \"finished\": true, \"span_seconds\": 1, "
                          "\"mpi_seconds\": 0.25, \"computation_seconds\": 0.75, "),
              std::string::npos)
        << report;
}

// The time steps: the computation from an outermost call's Leave to the
// next one's Enter, keyed by the two functions; a nested call bounds none,
// and the step before a call that came after calls not streamed one by one
// is not known (counted). They travel between analyzers as words.
TEST_F(Live, TimeStepsGoFromOneOutermostCallToTheNext)
{
    ScratchDirectory scratch("adt-online-live-steps");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(0);
    chunk.header.records = 5;
    chunk.records[0] = call(0, 100, 200, 0, 0);  // MPI_Send
    chunk.records[1] = call(1, 310, 320, 0, 0);  // MPI_Recv inside the next call
    chunk.records[1].flags = ADT_ONLINE_CALL_NESTED;
    chunk.records[2] = call(2, 300, 400, 0, 0);  // MPI_Allreduce: 100 ticks after MPI_Send
    chunk.records[3] = call(0, 700, 800, 0, 0);  // MPI_Send: 300 ticks after it
    chunk.records[4] = call(2, 1000, 1100, 0, 0);
    chunk.records[4].flags = ADT_ONLINE_CALL_AFTER_UNSTREAMED;
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(5), true, error, sizeof error), 0) << error;
    ASSERT_EQ(live.steps.key_count, 2u);
    EXPECT_EQ(live.steps.keys[0].from_call, 0u);
    EXPECT_EQ(live.steps.keys[0].to_call, 2u);
    ASSERT_EQ(live.steps.keys[0].count, 1u);
    EXPECT_EQ(live.steps.keys[0].instances[0].ticks, 100u);
    EXPECT_EQ(live.steps.keys[1].instances[0].ticks, 300u);
    EXPECT_EQ(live.states[0].steps_unknown, 1u);
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"time_steps_keyed_by\": \"mpi_function\",\n  \"time_steps_unknown\": 1,\n  "
                          "\"segment_count\": 2,\n  \"segments\": [\n    {\"from\": \"MPI_Allreduce\", \"to\": "
                          "\"MPI_Send\", \"count\": 1, \"total_seconds\": 0.3, "),
              std::string::npos)
        << report;
    EXPECT_NE(report.find("{\"from\": \"MPI_Send\", \"to\": \"MPI_Allreduce\", \"count\": 1, "
                          "\"total_seconds\": 0.1, "),
              std::string::npos)
        << report;
    // Analyzer 0 rebuilds them from every analyzer's words.
    size_t count = 0;
    uint64_t *words = adt_live_steps_words(&live, nullptr, 0, &count);
    ASSERT_NE(words, nullptr);
    EXPECT_EQ(count, 2u * (3 + 2));
    adt_live total{};
    ASSERT_EQ(adt_live_create(&total, kRanks, kFunctions), 0);
    ASSERT_EQ(adt_live_add_steps_words(&total, words, count), 0);
    ASSERT_EQ(total.steps.key_count, 2u);
    EXPECT_EQ(total.steps.keys[1].from_call, 2u);
    EXPECT_EQ(total.steps.keys[1].instances[0].ticks, 300u);
    EXPECT_EQ(total.steps.keys[1].instances[0].location, 0u);
    EXPECT_EQ(adt_live_add_steps_words(&total, words, count - 1), -1) << "words cut short";
    words[0] = kFunctions;
    EXPECT_EQ(adt_live_add_steps_words(&total, words, count), -1) << "a function that is none";
    free(words);
    adt_live_destroy(&total);
}

// The report text without its two lines that say when it was written.
std::string without_written_at(const std::string &report)
{
    std::stringstream in(report), out;
    for (std::string line; std::getline(in, line);)
        if (line.find("\"written_at") == std::string::npos)
            out << line << '\n';
    return out.str();
}

// An analyzer's report rounds carry the time steps new since its last
// report that analyzer 0 took (the instances already sent per key), and
// analyzer 0, which keeps each round's words after the ones before, has
// the same table as from every instance at once (issue #28). live is the
// other analyzer's (rank 1), own analyzer 0's (rank 0).
TEST_F(Live, EachRoundCarriesOnlyTheTimeStepsNewSinceTheLastOneTaken)
{
    adt_live own{};
    ASSERT_EQ(adt_live_create(&own, kRanks, kFunctions), 0);
    adt_online_chunk own_chunk = make_chunk(0);
    ASSERT_EQ(adt_live_add_chunk(&own, 0, &own_chunk, chunk_bytes(2), true, error, sizeof error), 0) << error;
    // Rank 1's calls, a chunk a round: steps 0->2 (100); then 2->0 (300,
    // across the chunks), 0->2 (50), 2->1 (100); then 1->0 (100), 0->2 (200).
    const adt_online_record rounds[3][3] = {
        {call(0, 100, 200, 0, 0), call(2, 300, 400, 0, 0), {}},
        {call(0, 700, 800, 0, 0), call(2, 850, 900, 0, 0), call(1, 1000, 1100, 0, 0)},
        {call(0, 1200, 1300, 0, 0), call(2, 1500, 1600, 0, 0), {}},
    };
    const uint32_t records[3] = {2, 3, 2};
    std::vector<size_t> sent;
    std::vector<uint64_t> taken;  // analyzer 0's words of rank 1's rounds, one after the other
    std::vector<size_t> round_words;
    for (int round = 0; round < 3; round++) {
        adt_online_chunk chunk = make_chunk(1);
        chunk.header.records = records[round];
        for (uint32_t r = 0; r < records[round]; r++)
            chunk.records[r] = rounds[round][r];
        ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(records[round]), round == 2, error,
                                     sizeof error),
                  0)
            << error;
        size_t count = 0;
        uint64_t *words = adt_live_steps_words(&live, sent.data(), sent.size(), &count);
        ASSERT_NE(words, nullptr);
        if (round == 1) {
            // 0->2 one new instance (50 ticks) of its two, 2->0 and 2->1 new keys.
            ASSERT_EQ(count, 3u * (3 + 2));
            EXPECT_EQ(words[0], 0u);
            EXPECT_EQ(words[1], 2u);
            EXPECT_EQ(words[2], 1u);
            EXPECT_EQ(words[3], 50u);
            EXPECT_EQ(words[4], 1u) << "rank 1";
            EXPECT_EQ(words[5], 2u);
            EXPECT_EQ(words[6], 0u);
            EXPECT_EQ(words[8], 300u);
            EXPECT_EQ(words[10], 2u);
            EXPECT_EQ(words[11], 1u);
            EXPECT_EQ(words[13], 100u);
        }
        taken.insert(taken.end(), words, words + count);
        round_words.push_back(count);
        free(words);
        sent.resize(live.steps.key_count);
        for (size_t k = 0; k < live.steps.key_count; k++)
            sent[k] = live.steps.keys[k].count;
    }
    EXPECT_EQ(round_words, (std::vector<size_t>{3 + 2, 3 * (3 + 2), 2 * (3 + 2)}));
    size_t none = 1;
    uint64_t *nothing_new = adt_live_steps_words(&live, sent.data(), sent.size(), &none);
    ASSERT_NE(nothing_new, nullptr);
    EXPECT_EQ(none, 0u) << "a round with no new instance carries no words";
    free(nothing_new);

    size_t own_count = 0, whole_count = 0;
    uint64_t *own_words = adt_live_steps_words(&own, nullptr, 0, &own_count);
    uint64_t *whole_words = adt_live_steps_words(&live, nullptr, 0, &whole_count);
    ASSERT_NE(own_words, nullptr);
    ASSERT_NE(whole_words, nullptr);
    adt_live by_rounds{}, at_once{};
    ASSERT_EQ(adt_live_create(&by_rounds, kRanks, kFunctions), 0);
    ASSERT_EQ(adt_live_create(&at_once, kRanks, kFunctions), 0);
    ASSERT_EQ(adt_live_add_steps_words(&by_rounds, own_words, own_count), 0);
    ASSERT_EQ(adt_live_add_steps_words(&by_rounds, taken.data(), taken.size()), 0);
    ASSERT_EQ(adt_live_add_steps_words(&at_once, own_words, own_count), 0);
    ASSERT_EQ(adt_live_add_steps_words(&at_once, whole_words, whole_count), 0);
    free(own_words);
    free(whole_words);
    ASSERT_EQ(by_rounds.steps.key_count, 4u);
    ASSERT_EQ(by_rounds.steps.key_count, at_once.steps.key_count);
    for (size_t k = 0; k < at_once.steps.key_count; k++) {
        const adt_feed_segment_key &got = by_rounds.steps.keys[k], &want = at_once.steps.keys[k];
        EXPECT_EQ(got.from_call, want.from_call) << "key " << k;
        EXPECT_EQ(got.to_call, want.to_call) << "key " << k;
        ASSERT_EQ(got.count, want.count) << "key " << k;
        for (size_t i = 0; i < want.count; i++) {
            EXPECT_EQ(got.instances[i].ticks, want.instances[i].ticks) << "key " << k << " instance " << i;
            EXPECT_EQ(got.instances[i].location, want.instances[i].location) << "key " << k << " instance " << i;
            EXPECT_EQ(got.instances[i].estimated, want.instances[i].estimated) << "key " << k << " instance " << i;
        }
    }
    EXPECT_EQ(at_once.steps.keys[0].count, 4u) << "0->2: rank 0's one and rank 1's three";
    // The ranks' rows, as round_rows gives them to analyzer 0's totals.
    for (adt_live *total : {&by_rounds, &at_once}) {
        total->states[0] = own.states[0];
        total->states[1] = live.states[1];
    }
    ScratchDirectory scratch("adt-online-live-rounds");
    std::string first = scratch.path() + "/by-rounds", second = scratch.path() + "/at-once";
    ASSERT_EQ(adt_live_write(&by_rounds, kNames, "", 0, first.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    ASSERT_EQ(adt_live_write(&at_once, kNames, "", 0, second.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    EXPECT_EQ(without_written_at(written_report(first)), without_written_at(written_report(second)));
    EXPECT_NE(written_report(first).find("\"segment_count\": 4,"), std::string::npos) << written_report(first);
    adt_live_destroy(&by_rounds);
    adt_live_destroy(&at_once);
    adt_live_destroy(&own);
}

// The main thread's sampling rate over time from its rate records: each
// halving's time after the run's start (the earliest span start) and the
// initial rate over 2^k, and the buffer's use at each halving, as
// adaptrace-report's "sampling_rates"; a halving beyond the buffer's
// levels is refused with its chunk.
TEST_F(Live, RateRecordsGiveTheSamplingRateOverTime)
{
    ScratchDirectory scratch("adt-online-live-rates");
    std::string archive = scratch.path() + "/archive";
    live.states[0].rate_hz = 1000;
    adt_online_chunk chunk = make_chunk(0);
    chunk.header.first_event = 500;
    chunk.header.last_event = 5000;
    chunk.header.records = 2;
    for (uint32_t k = 0; k < 2; k++) {
        chunk.records[k] = adt_online_record{};
        chunk.records[k].kind = ADT_ONLINE_RECORD_RATE;
        chunk.records[k].id = k;
        chunk.records[k].rate.reached = k ? 2500 : 500;
        chunk.records[k].rate.bytes_before = k ? 65536 : 0;
        chunk.records[k].rate.bytes_after = k ? 32768 : 0;
    }
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), true, error, sizeof error), 0) << error;
    adt_online_chunk other = make_chunk(1);  // rank 1 starts first, not sampled
    other.header.first_event = 250;
    other.header.last_event = 4000;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &other, chunk_bytes(2), true, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kFinal, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"sampling_rates\": [\n    {\"rank\": 0, \"thread\": 0, \"steps\": [{\"seconds\": 0.25, "
                          "\"hz\": 1000}, {\"seconds\": 2.25, \"hz\": 500}], \"buffer_use\": [{\"seconds\": 2.25, "
                          "\"bytes\": 65536}, {\"seconds\": 2.25, \"bytes\": 32768}]}],"),
              std::string::npos)
        << report;
    chunk.records[1].id = ADT_ONLINE_RATE_SHIFTS;
    EXPECT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), true, error, sizeof error), -1);
    EXPECT_NE(std::string(error).find("halved 64 times"), std::string::npos) << error;
}

// Before rank 0 is heard from, the time steps of the ranks heard are read
// at the first heard rank's rate (not left out for want of rank 0's).
TEST_F(Live, TimeStepsShowBeforeRankZeroIsHeardFrom)
{
    ScratchDirectory scratch("adt-online-live-steps-early");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(1);  // MPI_Send, then MPI_Allreduce 50 ticks later
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kRunning, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"segment_count\": 1,\n  \"segments\": [\n    {\"from\": \"MPI_Send\", \"to\": "
                          "\"MPI_Allreduce\", \"count\": 1, \"total_seconds\": 0.05, "),
              std::string::npos)
        << report;
}

TEST_F(Live, AReportOfAJobEndedBySignalSaysSoAndIsNotFinal)
{
    ScratchDirectory scratch("adt-online-live-ended");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(0);
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    const adt_live_moment ended = {false, 2, 2, 3.0, 0.5, SIGTERM, 1, nullptr, 0.0, 0, 0, nullptr, 0};
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &ended, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"final\": false,\n  \"ended_by\": \"SIGTERM\","), std::string::npos) << report;
    EXPECT_NE(report.find("\"analyzers\": 2,\n  \"analyzers_reported\": 1,"), std::string::npos) << report;
    EXPECT_NE(report.find("\"finished_ranks\": []"), std::string::npos) << report;
    EXPECT_NE(report.find("\"ranks_without_analyzer\": [],\n  \"analyzers_lost_at_s\": null,"), std::string::npos)
        << report;
}

TEST_F(Live, AReportNamesTheRanksOfTheLostAnalyzersOnlyAndWhen)
{
    ScratchDirectory scratch("adt-online-live-lost");
    std::string archive = scratch.path() + "/archive";
    // 2 ranks, 2 analyzers: rank 1 is analyzer 1's (adt_online_analyzer_of).
    const bool second_lost[2] = {false, true};
    const adt_live_moment without_second = {false, 2, 2, 3.0, 0.5, 0, 1, second_lost, 2.5, 0, 0, nullptr, 0};
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &without_second, nullptr, error, sizeof error), 0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"ranks_without_analyzer\": [1],\n  \"analyzers_lost_at_s\": 2.500,"), std::string::npos)
        << report;
    // 3 analyzers for 2 ranks: analyzer 2 serves none, and its loss
    // leaves both ranks with theirs.
    const bool third_lost[3] = {false, false, true};
    const adt_live_moment without_third = {false, 3, 2, 3.0, 0.5, 0, 2, third_lost, 1.25, 0, 0, nullptr, 0};
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &without_third, nullptr, error, sizeof error), 0)
        << error;
    report = written_report(archive);
    EXPECT_NE(report.find("\"ranks_without_analyzer\": [],\n  \"analyzers_lost_at_s\": 1.250,"), std::string::npos)
        << report;
}

// A page printer that writes what it was given, as report/'s live page
// embeds it.
void print_test_page(const char *archive, const char *json, size_t length, FILE *out)
{
    fprintf(out, "page of %s: ", archive);
    fwrite(json, 1, length, out);
}

TEST_F(Live, ThePageIsRenamedIntoPlaceWithTheReportsText)
{
    ScratchDirectory scratch("adt-online-live-page");
    std::string archive = scratch.path() + "/archive";
    adt_online_chunk chunk = make_chunk(0);
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    ASSERT_EQ(adt_live_write(&live, kNames, "", 0, archive.c_str(), &kRunning, print_test_page, error,
                             sizeof error),
              0)
        << error;
    std::string report = written_report(archive);
    ASSERT_NE(report.find("\"name\": \"MPI_Send\""), std::string::npos) << report;
    EXPECT_EQ(read_text(archive + "/live/report.html"), "page of " + archive + ": " + report);
    EXPECT_FALSE(std::filesystem::exists(archive + "/live/.report.html.tmp"));
}

TEST_F(Live, SamplesCountForTheirFunctionAndOnceForEveryFunctionOnTheirPath)
{
    live.namer = name_by_key;
    live.samples[1].rate_hz = 1000;
    adt_online_chunk chunk{};
    chunk.header.rank = 1;
    // main -> solve -> solve (recursion) -> kernel, and main -> solve.
    chunk.records[0] = context(1, ADT_ONLINE_NO_PARENT, 1);
    chunk.records[1] = context(2, 1, 2);
    chunk.records[2] = context(3, 2, 2);
    chunk.records[3] = context(4, 3, 3);
    adt_online_record samples{};
    samples.kind = ADT_ONLINE_RECORD_SAMPLES;
    samples.id = 3;
    samples.samples[0] = {4, 0};  // kernel, 1 ms
    samples.samples[1] = {4, 1};  // kernel, after a halving: 2 ms
    samples.samples[2] = {2, 0};  // solve, 1 ms
    chunk.records[4] = samples;
    chunk.header.records = 5;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(5), false, error, sizeof error), 0) << error;
    size_t length = 0;
    char *profile = adt_live_sampled_profile(&live, &length);
    ASSERT_NE(profile, nullptr);
    std::string text(profile, length);
    free(profile);
    // rank, exclusive and inclusive samples, exclusive and inclusive µs, counters (none), name
    EXPECT_NE(text.find("1 0 3 0 4000 0 main\n"), std::string::npos) << text;
    EXPECT_NE(text.find("1 1 3 1000 4000 0 solve\n"), std::string::npos) << "recursion counts once: " << text;
    EXPECT_NE(text.find("1 2 2 3000 3000 0 kernel\n"), std::string::npos) << text;

    ScratchDirectory scratch("adt-online-live-samples");
    std::string archive = scratch.path() + "/archive";
    ASSERT_EQ(adt_live_write(&live, kNames, text.data(), text.size(), archive.c_str(), &kRunning, nullptr,
                             error, sizeof error),
              0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"samples\": 3,"), std::string::npos) << report;
    EXPECT_NE(report.find("{\"name\": \"kernel\", \"exclusive_samples\": 2, \"inclusive_samples\": 2, "
                          "\"exclusive_seconds\": 0.003000, \"inclusive_seconds\": 0.003000}"),
              std::string::npos)
        << report;
}

// With PAPI counters (ADAPTRACE_METRICS) each sample is a samples record
// of its own followed by its counts records (the differences of the
// counters' running totals): fed with them, the counts go to the sampled
// functions as adaptrace-report's do, exclusive to the sample's function,
// inclusive to every function on its path, and through the profile's text
// lines into the report, keyed by the counters' names.
TEST_F(Live, TheCountsOfEachSampleGoToItsFunctionsInTheProfile)
{
    live.namer = name_by_key;
    live.samples[1].rate_hz = 1000;
    live.samples[1].tree.counters = 2;
    adt_online_chunk chunk{};
    chunk.header.rank = 1;
    chunk.records[0] = context(1, ADT_ONLINE_NO_PARENT, 1);  // main
    chunk.records[1] = context(2, 1, 3);                     // main -> kernel
    adt_online_record sample{};
    sample.kind = ADT_ONLINE_RECORD_SAMPLES;
    sample.id = 1;
    adt_online_record counts{};
    counts.kind = ADT_ONLINE_RECORD_COUNTS;
    sample.samples[0] = {2, 0};
    counts.counts[0] = 100;
    counts.counts[1] = 1;
    chunk.records[2] = sample;
    chunk.records[3] = counts;
    sample.samples[0] = {1, 0};
    counts.counts[0] = 50;
    counts.counts[1] = 2;
    chunk.records[4] = sample;
    chunk.records[5] = counts;
    chunk.header.records = 6;
    ASSERT_EQ(adt_live_add_chunk(&live, 1, &chunk, chunk_bytes(6), false, error, sizeof error), 0) << error;
    size_t length = 0;
    char *profile = adt_live_sampled_profile(&live, &length);
    ASSERT_NE(profile, nullptr);
    std::string text(profile, length);
    free(profile);
    // ..., counters, each one's exclusive and inclusive counts, name
    EXPECT_NE(text.find("1 1 2 1000 2000 2 50 150 2 3 main\n"), std::string::npos) << text;
    EXPECT_NE(text.find("1 1 1 1000 1000 2 100 100 1 1 kernel\n"), std::string::npos) << text;

    ScratchDirectory scratch("adt-online-live-counts");
    std::string archive = scratch.path() + "/archive";
    const char *const counters[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS"};
    adt_live_moment moment = kRunning;
    moment.counter_names = counters;
    moment.counters = 2;
    ASSERT_EQ(adt_live_write(&live, kNames, text.data(), text.size(), archive.c_str(), &moment, nullptr, error,
                             sizeof error),
              0)
        << error;
    std::string report = written_report(archive);
    EXPECT_NE(report.find("\"exclusive_seconds\": 0.001000, \"inclusive_seconds\": 0.002000, \"exclusive_counts\": "
                          "{\"perf::TASK-CLOCK\": 50, \"perf::PAGE-FAULTS\": 2}, \"inclusive_counts\": "
                          "{\"perf::TASK-CLOCK\": 150, \"perf::PAGE-FAULTS\": 3}}"),
              std::string::npos)
        << report;
}

TEST_F(Live, ASampleWhoseContextWasNeverDefinedIsLeftOut)
{
    live.namer = name_by_key;
    live.samples[0].rate_hz = 1000;
    adt_online_chunk chunk{};
    chunk.header.rank = 0;
    chunk.records[0] = context(1, ADT_ONLINE_NO_PARENT, 1);
    adt_online_record samples{};
    samples.kind = ADT_ONLINE_RECORD_SAMPLES;
    samples.id = 2;
    samples.samples[0] = {1, 0};
    samples.samples[1] = {7, 0};  // never defined
    chunk.records[1] = samples;
    chunk.header.records = 2;
    ASSERT_EQ(adt_live_add_chunk(&live, 0, &chunk, chunk_bytes(2), false, error, sizeof error), 0) << error;
    size_t length = 0;
    char *profile = adt_live_sampled_profile(&live, &length);
    ASSERT_NE(profile, nullptr);
    EXPECT_EQ(std::string(profile, length), "0 1 1 1000 1000 0 main\n");
    free(profile);
}

}  // namespace
