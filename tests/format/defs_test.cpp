// The process-local definitions registry.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "format/format.h"

namespace {

struct Defs {
    adt_defs *d = adt_defs_create();
    ~Defs() { adt_defs_destroy(d); }
};

TEST(FormatDefs, IdenticalDefinitionsShareAnIdAndIdsAreDense)
{
    Defs defs;
    uint32_t a = adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    uint32_t b = adt_defs_region(defs.d, "MPI_Recv", nullptr, ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    uint32_t c = adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    uint32_t d = adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, "a.c", 1, 2);
    EXPECT_EQ(a, 0u);
    EXPECT_EQ(b, 1u);
    EXPECT_EQ(c, a);
    EXPECT_EQ(d, 2u);
    EXPECT_EQ(adt_defs_source_location(defs.d, "a.c", 10), 0u);
    EXPECT_EQ(adt_defs_source_location(defs.d, "a.c", 11), 1u);
    EXPECT_EQ(adt_defs_source_location(defs.d, "a.c", 10), 0u);
    EXPECT_EQ(adt_defs_source_location(defs.d, nullptr, 10), ADT_UNDEFINED_ID);
    EXPECT_EQ(adt_defs_metric(defs.d, "PAPI_TOT_CYC", "#"), 0u);
    EXPECT_EQ(adt_defs_metric(defs.d, "PAPI_L1_DCM", "#"), 1u);
    EXPECT_EQ(adt_defs_metric(defs.d, "PAPI_TOT_CYC", "#"), 0u);
    EXPECT_EQ(adt_defs_region(defs.d, nullptr, nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, nullptr, 0, 0),
              ADT_UNDEFINED_ID);
}

TEST(FormatDefs, ARegionsNameIsCopiedWholeOrCut)
{
    Defs defs;
    uint32_t kernel = adt_defs_region(defs.d, "kernel", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, nullptr, 0, 0);
    char name[8];
    EXPECT_EQ(adt_defs_region_name(defs.d, kernel, name, sizeof name), 6u);
    EXPECT_STREQ(name, "kernel");
    char short_room[4];
    EXPECT_EQ(adt_defs_region_name(defs.d, kernel, short_room, sizeof short_room), 6u) << "its whole length";
    EXPECT_STREQ(short_room, "ker");
    EXPECT_EQ(adt_defs_region_name(defs.d, kernel + 1, name, sizeof name), 0u) << "a region not defined";
}

TEST(FormatDefs, CommunicatorsAreKeyedByCreatorAndSequence)
{
    Defs defs;
    uint32_t members[] = { 0, 1, 2 };
    adt_comm_desc world{ 0, 0, "MPI_COMM_WORLD", members, 3, nullptr, 0, ADT_UNDEFINED_ID, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &world), 0u);
    adt_comm_desc self{ 1, 0, "MPI_COMM_SELF", nullptr, 0, nullptr, 0, ADT_UNDEFINED_ID, true };
    EXPECT_EQ(adt_defs_comm(defs.d, &self), 1u);
    adt_comm_desc again = world;
    again.name = "renamed later";
    EXPECT_EQ(adt_defs_comm(defs.d, &again), 0u) << "same key, same communicator";
    adt_comm_desc child{ 0, 1, "", members, 2, nullptr, 0, 0, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &child), 2u);
    adt_comm_desc orphan{ 0, 2, "", members, 2, nullptr, 0, 17, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &orphan), ADT_UNDEFINED_ID) << "parent must be defined before";
    adt_comm_desc no_members{ 0, 3, "", nullptr, 2, nullptr, 0, ADT_UNDEFINED_ID, false };
    EXPECT_EQ(adt_defs_comm(defs.d, &no_members), ADT_UNDEFINED_ID);
}

// RMA windows are keyed like communicators and name one; the groups of
// RMA epochs are keyed by their members.
TEST(FormatDefs, RmaWindowsAndGroups)
{
    Defs defs;
    uint32_t members[] = { 0, 1, 2 };
    adt_comm_desc world{ 0, 0, "MPI_COMM_WORLD", members, 3, nullptr, 0, ADT_UNDEFINED_ID, false };
    ASSERT_EQ(adt_defs_comm(defs.d, &world), 0u);
    EXPECT_EQ(adt_defs_rma_win(defs.d, 0, 5, 0), 0u);
    EXPECT_EQ(adt_defs_rma_win(defs.d, 1, 5, 0), 1u);
    EXPECT_EQ(adt_defs_rma_win(defs.d, 0, 5, 0), 0u) << "same key, same window";
    EXPECT_EQ(adt_defs_rma_win(defs.d, 0, 6, 1), ADT_UNDEFINED_ID) << "its communicator must be defined";
    uint32_t left[] = { 2 }, pair[] = { 2, 0 };
    EXPECT_EQ(adt_defs_group(defs.d, left, 1), 0u);
    EXPECT_EQ(adt_defs_group(defs.d, pair, 2), 1u);
    EXPECT_EQ(adt_defs_group(defs.d, left, 1), 0u);
    EXPECT_EQ(adt_defs_group(defs.d, pair, 0), ADT_UNDEFINED_ID) << "no empty groups";
}

// I/O files are keyed by name; I/O handles like windows, naming a file and
// a communicator that must be defined.
TEST(FormatDefs, IoFilesAndHandles)
{
    Defs defs;
    uint32_t members[] = { 0, 1 };
    adt_comm_desc world{ 0, 0, "MPI_COMM_WORLD", members, 2, nullptr, 0, ADT_UNDEFINED_ID, false };
    ASSERT_EQ(adt_defs_comm(defs.d, &world), 0u);
    EXPECT_EQ(adt_defs_io_file(defs.d, "out.dat"), 0u);
    EXPECT_EQ(adt_defs_io_file(defs.d, "in.dat"), 1u);
    EXPECT_EQ(adt_defs_io_file(defs.d, "out.dat"), 0u) << "same name, same file";
    EXPECT_EQ(adt_defs_io_file(defs.d, nullptr), ADT_UNDEFINED_ID);
    EXPECT_EQ(adt_defs_io_handle(defs.d, 0, 4, 0, 0), 0u);
    EXPECT_EQ(adt_defs_io_handle(defs.d, 0, 5, 0, 0), 1u) << "the same file opened again";
    EXPECT_EQ(adt_defs_io_handle(defs.d, 0, 4, 0, 0), 0u);
    EXPECT_EQ(adt_defs_io_handle(defs.d, 0, 6, 2, 0), ADT_UNDEFINED_ID) << "its file must be defined";
    EXPECT_EQ(adt_defs_io_handle(defs.d, 0, 6, 1, 1), ADT_UNDEFINED_ID) << "its communicator must be defined";
}

TEST(FormatDefs, CallingContextsNeedParentsFirstAndKnownRegions)
{
    Defs defs;
    uint32_t main_region = adt_defs_region(defs.d, "main", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, nullptr, 0, 0);
    uint32_t scl = adt_defs_source_location(defs.d, "main.c", 3);
    size_t count = 1;
    EXPECT_EQ(adt_defs_calling_contexts(defs.d, &count), nullptr);
    EXPECT_EQ(count, 0u);
    adt_cc_node good[] = { { main_region, scl, ADT_UNDEFINED_ID }, { main_region, ADT_UNDEFINED_ID, 0 } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, good, 2), 0);
    adt_cc_node child_first[] = { { main_region, ADT_UNDEFINED_ID, 1 }, { main_region, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, child_first, 2), -1);
    adt_cc_node self_parent[] = { { main_region, ADT_UNDEFINED_ID, 0 } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, self_parent, 1), -1);
    adt_cc_node unknown_region[] = { { 99, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, unknown_region, 1), -1);
    adt_cc_node unknown_location[] = { { main_region, 7, ADT_UNDEFINED_ID } };
    EXPECT_EQ(adt_defs_set_calling_contexts(defs.d, unknown_location, 1), -1);
    // What the refused trees left: the good one, for the online analyzers
    // (the journal does not hold it).
    const adt_cc_node *kept = adt_defs_calling_contexts(defs.d, &count);
    ASSERT_EQ(count, 2u);
    EXPECT_EQ(kept[0].source_location, scl);
    EXPECT_EQ(kept[1].parent, 0u);
}

TEST(FormatDefs, ConcurrentRegistrationsAgreeOnIds)
{
    Defs defs;
    std::vector<std::vector<uint32_t>> ids(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                std::string name = "f" + std::to_string((i * 7 + t) % 300);
                ids[t].push_back(adt_defs_region(defs.d, name.c_str(), nullptr, ADT_ROLE_FUNCTION,
                                                 ADT_PARADIGM_SAMPLING, nullptr, 0, 0));
            }
        });
    for (auto &th : threads)
        th.join();
    std::map<std::string, uint32_t> seen;
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 500; ++i) {
            std::string name = "f" + std::to_string((i * 7 + t) % 300);
            auto [it, added] = seen.emplace(name, ids[t][i]);
            EXPECT_EQ(it->second, ids[t][i]) << name;
            EXPECT_LT(ids[t][i], 300u);
        }
    EXPECT_EQ(seen.size(), 300u);
}

}  // namespace

namespace {

// Issue #10: the journal a process saves at its ending rebuilds a registry
// with the same local ids, so that the saved records still name the right
// definitions.
TEST(FormatDefsJournal, ReplayGivesTheSameIds)
{
    Defs defs;
    adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    adt_defs_region(defs.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, nullptr, 0, 0);
    adt_defs_region(defs.d, "work", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, "w.c", 3, 9);
    adt_defs_source_location(defs.d, "w.c", 4);
    const uint32_t world[] = {0, 1, 2};
    adt_comm_desc comm = {0, 0, "MPI_COMM_WORLD", world, 3, nullptr, 0, ADT_UNDEFINED_ID, false};
    uint32_t world_id = adt_defs_comm(defs.d, &comm);
    const uint32_t pair[] = {2, 0};
    adt_comm_desc split = {2, 1, "", pair, 2, nullptr, 0, world_id, false};
    uint32_t split_id = adt_defs_comm(defs.d, &split);
    ASSERT_EQ(adt_defs_comm_set_name(defs.d, split_id, "pairs"), 0);
    adt_defs_metric(defs.d, "PAPI_TOT_CYC", "#");
    adt_defs_rma_win(defs.d, 0, 7, world_id);
    uint32_t window_id = adt_defs_rma_win(defs.d, 2, 8, split_id);
    uint32_t group_id = adt_defs_group(defs.d, pair, 2);
    adt_defs_io_file(defs.d, "a.dat");
    uint32_t file_id = adt_defs_io_file(defs.d, "b.dat");
    uint32_t handle_id = adt_defs_io_handle(defs.d, 2, 9, file_id, split_id);
    adt_defs_parameter(defs.d, "time step");
    uint32_t parameter_id = adt_defs_parameter(defs.d, "residual count");
    adt_defs_user_metric(defs.d, "energy");
    uint32_t user_metric_id = adt_defs_user_metric(defs.d, "residual");

    size_t bytes = 0;
    bool complete = false;
    const void *journal = adt_defs_journal(defs.d, &bytes, &complete);
    EXPECT_TRUE(complete);
    Defs replayed;
    adt_defs_destroy(replayed.d);
    replayed.d = adt_defs_replay(journal, bytes);
    ASSERT_NE(replayed.d, nullptr);
    EXPECT_EQ(adt_defs_region(replayed.d, "work", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, "w.c", 3, 9), 1u);
    EXPECT_EQ(adt_defs_region(replayed.d, "MPI_Send", "PMPI_Send", ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI,
                              nullptr, 0, 0),
              0u);
    EXPECT_EQ(adt_defs_source_location(replayed.d, "w.c", 4), 0u);
    EXPECT_EQ(adt_defs_metric(replayed.d, "PAPI_TOT_CYC", "#"), 0u);
    EXPECT_EQ(adt_defs_comm(replayed.d, &split), split_id);
    EXPECT_EQ(adt_defs_rma_win(replayed.d, 2, 8, split_id), window_id);
    EXPECT_EQ(adt_defs_group(replayed.d, pair, 2), group_id);
    EXPECT_EQ(adt_defs_io_file(replayed.d, "b.dat"), file_id);
    EXPECT_EQ(adt_defs_io_handle(replayed.d, 2, 9, file_id, split_id), handle_id);
    EXPECT_EQ(adt_defs_parameter(replayed.d, "residual count"), parameter_id);
    EXPECT_EQ(adt_defs_user_metric(replayed.d, "residual"), user_metric_id);
    uint32_t world_rank = 99;
    uint64_t key = 0;
    ASSERT_TRUE(adt_defs_comm_world_rank(replayed.d, split_id, 0, &world_rank, &key));
    EXPECT_EQ(world_rank, 2u);
    EXPECT_EQ(key, (uint64_t(2) << 32) | 1);
    // Nothing new was defined by the checks above: the journals match.
    size_t replayed_bytes = 0;
    const void *again = adt_defs_journal(replayed.d, &replayed_bytes, &complete);
    ASSERT_EQ(replayed_bytes, bytes);
    EXPECT_EQ(std::memcmp(again, journal, bytes), 0);
}

// A save that caught an entry half-written has only the entries before it.
TEST(FormatDefsJournal, AJournalCutShortKeepsItsWholeEntries)
{
    Defs defs;
    adt_defs_region(defs.d, "first", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, nullptr, 0, 0);
    size_t first_bytes = 0;
    bool complete = false;
    adt_defs_journal(defs.d, &first_bytes, &complete);
    adt_defs_region(defs.d, "second", nullptr, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER, nullptr, 0, 0);
    size_t bytes = 0;
    const void *journal = adt_defs_journal(defs.d, &bytes, &complete);
    adt_defs *replayed = adt_defs_replay(journal, bytes - 3);
    ASSERT_NE(replayed, nullptr);
    size_t replayed_bytes = 0;
    adt_defs_journal(replayed, &replayed_bytes, &complete);
    EXPECT_EQ(replayed_bytes, first_bytes) << "only the first region";
    adt_defs_destroy(replayed);
}

// A record read back from a saved buffer is refused when it names a
// definition the journal does not hold or is shorter than its kind.
TEST(FormatDefsJournal, RecordsNamingUnknownDefinitionsAreRefused)
{
    Defs defs;
    adt_defs_region(defs.d, "MPI_Barrier", nullptr, ADT_ROLE_BARRIER, ADT_PARADIGM_MPI, nullptr, 0, 0);
    adt_rec_region known = {0, ADT_UNDEFINED_ID}, unknown = {1, ADT_UNDEFINED_ID};
    adt_record_view view = {};
    view.kind = ADT_REC_ENTER;
    view.payload = &known;
    view.payload_size = sizeof known;
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    view.payload = &unknown;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));
    view.payload = &known;
    view.payload_size = sizeof known - 1;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));
    view.kind = ADT_REC_KIND_COUNT;
    view.payload_size = sizeof known;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));

    uint32_t world[] = { 0, 1 };
    adt_comm_desc comm{ 0, 0, "MPI_COMM_WORLD", world, 2, nullptr, 0, ADT_UNDEFINED_ID, false };
    ASSERT_EQ(adt_defs_rma_win(defs.d, 0, 3, adt_defs_comm(defs.d, &comm)), 0u);
    adt_rec_rma put = {};
    put.bytes_sent = 8;
    put.matching_id = 1;
    view.kind = ADT_REC_RMA_PUT;
    view.payload = &put;
    view.payload_size = sizeof put;
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    put.win = 1;
    EXPECT_FALSE(adt_record_valid(defs.d, &view)) << "unknown window";
    put.win = 0;
    view.kind = ADT_REC_RMA_GROUP_SYNC;
    EXPECT_FALSE(adt_record_valid(defs.d, &view)) << "unknown group";
    ASSERT_EQ(adt_defs_group(defs.d, world, 2), 0u);
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    view.payload_size = sizeof put - 1;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));

    adt_rec_io io = {};
    io.bytes = 16;
    view.kind = ADT_REC_IO_OPERATION_BEGIN;
    view.payload = &io;
    view.payload_size = sizeof io;
    EXPECT_FALSE(adt_record_valid(defs.d, &view)) << "unknown handle";
    view.kind = ADT_REC_IO_DELETE_FILE;
    EXPECT_FALSE(adt_record_valid(defs.d, &view)) << "unknown file";
    ASSERT_EQ(adt_defs_io_file(defs.d, "f"), 0u);
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    view.kind = ADT_REC_IO_OPERATION_BEGIN;
    ASSERT_EQ(adt_defs_io_handle(defs.d, 0, 4, 0, 0), 0u);
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    view.payload_size = sizeof io - 1;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));

    adt_rec_parameter value = { -3, 0, 0 };
    view.kind = ADT_REC_PARAMETER_INT;
    view.payload = &value;
    view.payload_size = sizeof value;
    EXPECT_FALSE(adt_record_valid(defs.d, &view)) << "unknown parameter";
    ASSERT_EQ(adt_defs_parameter(defs.d, "time step"), 0u);
    EXPECT_EQ(adt_defs_parameter(defs.d, "time step"), 0u) << "same name, same parameter";
    EXPECT_EQ(adt_defs_parameter(defs.d, nullptr), ADT_UNDEFINED_ID);
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    view.payload_size = sizeof value - 1;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));

    adt_rec_user_metric residual = { 0.5, 0, 0 };
    view.kind = ADT_REC_USER_METRIC;
    view.payload = &residual;
    view.payload_size = sizeof residual;
    EXPECT_FALSE(adt_record_valid(defs.d, &view)) << "unknown user metric";
    ASSERT_EQ(adt_defs_user_metric(defs.d, "residual"), 0u);
    EXPECT_EQ(adt_defs_user_metric(defs.d, nullptr), ADT_UNDEFINED_ID);
    EXPECT_TRUE(adt_record_valid(defs.d, &view));
    view.payload_size = sizeof residual - 1;
    EXPECT_FALSE(adt_record_valid(defs.d, &view));
}

// The collectives among threads that adaptrace-recover writes with.
TEST(FormatThreadCollectives, EveryCollectiveAmongFourThreads)
{
    const uint32_t ranks = 4;
    adt_thread_group *group = adt_thread_group_create(ranks);
    ASSERT_NE(group, nullptr);
    std::vector<std::string> failures(ranks);
    std::vector<std::thread> threads;
    for (uint32_t rank = 0; rank < ranks; rank++) {
        threads.emplace_back([&, rank] {
            adt_collectives c = adt_thread_group_collectives(group, rank);
            std::string &failure = failures[rank];
            uint64_t value = 10 + rank;
            if (c.allreduce_max_u64(c.context, &value) != 0 || value != 13)
                failure += "max ";
            value = 10 + rank;
            if (c.allreduce_min_u64(c.context, &value) != 0 || value != 10)
                failure += "min ";
            char text[8] = "";
            if (rank == 2)
                std::strcpy(text, "from 2");
            if (c.bcast(c.context, text, sizeof text, 2) != 0 || std::string(text) != "from 2")
                failure += "bcast ";
            // Rank r sends r + 1 bytes of value r to root 1.
            std::vector<uint8_t> mine(rank + 1, static_cast<uint8_t>(rank));
            size_t sizes[ranks] = {1, 2, 3, 4};
            std::vector<uint8_t> gathered(rank == 1 ? 10 : 0);
            if (c.gatherv(c.context, mine.data(), mine.size(), gathered.data(), sizes, 1) != 0)
                failure += "gatherv ";
            if (rank == 1 && gathered != std::vector<uint8_t>{0, 1, 1, 2, 2, 2, 3, 3, 3, 3})
                failure += "gathered ";
            std::vector<uint8_t> scattered(rank + 1);
            if (c.scatterv(c.context, gathered.data(), sizes, scattered.data(), scattered.size(), 1) != 0 ||
                scattered != mine)
                failure += "scatterv ";
            if (c.barrier(c.context) != 0)
                failure += "barrier ";
            // A ring: rank r sends r + 1 bytes to r + 1; even ranks send
            // first, odd ones receive first (a send waits for its receiver).
            uint32_t next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
            std::vector<uint8_t> received(previous + 1);
            bool sent_ok = true, received_ok = true;
            if (rank % 2 == 0)
                sent_ok = c.send(c.context, mine.data(), mine.size(), next) == 0;
            received_ok = c.recv(c.context, received.data(), received.size(), previous) == 0;
            if (rank % 2 == 1)
                sent_ok = c.send(c.context, mine.data(), mine.size(), next) == 0;
            if (!sent_ok)
                failure += "send ";
            if (!received_ok || received != std::vector<uint8_t>(previous + 1, static_cast<uint8_t>(previous)))
                failure += "recv ";
        });
    }
    for (std::thread &thread : threads)
        thread.join();
    for (uint32_t rank = 0; rank < ranks; rank++)
        EXPECT_EQ(failures[rank], "") << "rank " << rank;
    adt_thread_group_destroy(group);
}

// A group broken (adt_thread_group_break, what the composed collectives do
// when a wait for another process is given up): a receive whose message
// never comes and a send whose receiver never takes it both fail, whether
// they waited before the break or came after it; so does every call
// after it.
TEST(FormatThreadCollectives, BrokenGroupFailsItsWaitingSendAndRecv)
{
    adt_thread_group *group = adt_thread_group_create(3);
    ASSERT_NE(group, nullptr);
    int received = 0, sent = 0;
    std::thread receiver([&] {
        adt_collectives c = adt_thread_group_collectives(group, 1);
        char byte = 0;
        received = c.recv(c.context, &byte, 1, 0);
    });
    std::thread sender([&] {
        adt_collectives c = adt_thread_group_collectives(group, 2);
        char byte = 2;
        sent = c.send(c.context, &byte, 1, 0);
    });
    adt_thread_group_break(group);
    receiver.join();
    sender.join();
    EXPECT_EQ(received, -1);
    EXPECT_EQ(sent, -1);
    adt_collectives c = adt_thread_group_collectives(group, 0);
    char byte = 0;
    EXPECT_EQ(c.recv(c.context, &byte, 1, 2), -1);
    adt_thread_group_destroy(group);
}

}  // namespace
