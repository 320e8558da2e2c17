// adaptrace-replay's plan (issue #25): a rank's skeleton decoded into the
// calls replay issues, without MPI. Skeletons are folded from keys made
// the way mpi-events/fold.c makes them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "format/format.h"
#include "replay/replay.h"

namespace {

enum function { INIT, FINALIZE, IRECV, ISEND, WAITALL, COMM_RANK, SEND, SCAN, EXSCAN, ALLTOALLW, IALLGATHER, WAIT, ALLGATHERV, ALLTOALLV, IALLGATHERV };
const char *const names[] = { "MPI_Init", "MPI_Finalize", "MPI_Irecv", "MPI_Isend",
                              "MPI_Waitall", "MPI_Comm_rank", "MPI_Send", "MPI_Scan", "MPI_Exscan", "MPI_Alltoallw", "MPI_Iallgather", "MPI_Wait", "MPI_Allgatherv", "MPI_Alltoallv", "MPI_Iallgatherv" };

// A call's key: LEB128 fields, signed ones zigzag; a receive's
// MPI_ANY_SOURCE is the peer -2^31, MPI_ANY_TAG the tag -1 (fold.h).
struct key {
    std::vector<uint8_t> bytes;
    explicit key(function f)
    {
        put(f);
        put(0); // no calling context
    }
    key &put(uint64_t value)
    {
        while (value >= 0x80) {
            bytes.push_back((uint8_t)(value | 0x80));
            value >>= 7;
        }
        bytes.push_back((uint8_t)value);
        return *this;
    }
    static constexpr int64_t ANY_SOURCE = INT32_MIN, ANY_TAG = -1;
    key &put_signed(int64_t value) { return put(((uint64_t)value << 1) ^ (uint64_t)(value >> 63)); }
    key &p2p(uint16_t kind, uint64_t bytes_, uint32_t request, int64_t peer, int64_t tag)
    {
        return put(kind).put(bytes_).put(request).put(1).put_signed(peer).put_signed(tag);
    }
    key &request(uint16_t kind, uint32_t symbol) { return put(kind).put(symbol); }
};

// The file of `ranks` ranks that all made these calls, read back.
struct folded {
    adt_skeleton_file *file = nullptr;
    explicit folded(const std::vector<key> &calls, uint32_t ranks = 3)
    {
        EXPECT_EQ(adt_skeleton_share_create(ADT_SKELETON_SLAB_BYTES), 0);
        adt_skeleton *skeleton = adt_skeleton_claim(0);
        uint64_t now = 0;
        for (const key &call : calls) {
            adt_skeleton_fold(skeleton, call.bytes.data(), (uint32_t)call.bytes.size(), now + 10, now + 15);
            now += 15;
        }
        std::vector<uint8_t *> parts(ranks);
        std::vector<size_t> sizes(ranks);
        for (uint32_t r = 0; r < ranks; ++r)
            parts[r] = adt_skeleton_rank_encode(r, &sizes[r]);
        char path[] = "/tmp/replay-plan-test-XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        std::vector<const uint8_t *> constant(parts.begin(), parts.end());
        EXPECT_EQ(adt_skeleton_file_write(path, names, sizeof names / sizeof *names, constant.data(), sizes.data(),
                                          ranks, 1000000000, nullptr),
                  0);
        for (uint8_t *part : parts)
            free(part);
        adt_skeleton_share_destroy();
        char error[256] = "";
        file = adt_skeleton_file_read(path, error, sizeof error);
        EXPECT_NE(file, nullptr) << error;
        unlink(path);
    }
    ~folded() { adt_skeleton_file_free(file); }

    // The plan of rank 1, or the refusal.
    std::string refusal(uint32_t ranks = 3)
    {
        char error[256] = "";
        adt_replay_plan *plan = adt_replay_plan_build(file, 1, ranks, error, sizeof error);
        adt_replay_plan_free(plan);
        return plan ? "" : error;
    }
};

// An exchange whose receive is 64 bytes in even iterations, 128 in odd:
// each MPI_Irecv takes the message of the Waitall that completes its
// request, the same symbol recycled each iteration.
TEST(ReplayPlan, EachIrecvTakesTheMessageThatCompletesItsRequest)
{
    std::vector<key> calls{ key(INIT), key(COMM_RANK) };
    for (int i = 0; i < 6; ++i) {
        calls.push_back(key(IRECV).request(ADT_REC_MPI_IRECV_REQUEST, 1));
        calls.push_back(key(ISEND).p2p(ADT_REC_MPI_ISEND, 32, 2, +1, 7));
        calls.push_back(key(WAITALL)
                            .p2p(ADT_REC_MPI_IRECV, i % 2 ? 128 : 64, 1, -1, 7)
                            .request(ADT_REC_MPI_ISEND_COMPLETE, 2));
    }
    calls.push_back(key(FINALIZE));
    folded run(calls);
    char error[256] = "";
    adt_replay_plan *plan = adt_replay_plan_build(run.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    ASSERT_EQ(plan->length, calls.size());
    int irecvs = 0;
    for (uint64_t i = 0; i < plan->length; ++i) {
        const adt_replay_call &call = plan->calls_by_signature[plan->sequence[i]];
        if (call.irecv_request == 0)
            continue;
        const adt_replay_message &m = plan->irecvs[plan->irecv_message[i]];
        EXPECT_EQ(m.bytes, irecvs % 2 ? 128u : 64u) << "the MPI_Irecv of iteration " << irecvs;
        EXPECT_EQ(m.peer, -1);
        EXPECT_EQ(m.tag, 7);
        irecvs++;
    }
    EXPECT_EQ(irecvs, 6);
    EXPECT_EQ(plan->request_bytes[1], 128u) << "the request's buffer holds its largest receive";
    EXPECT_STREQ(plan->untrafficked, "MPI_Comm_rank");
    adt_replay_plan_free(plan);
}

// A master's receives from MPI_ANY_SOURCE (with MPI_ANY_TAG, and
// MPI_Irecv's too): replayed as wildcards, posted for the largest message
// the rank received (in the replay each may match another message).
TEST(ReplayPlan, WildcardReceivesStayWildcardsPostedForTheLargestMessage)
{
    std::vector<key> calls{ key(INIT) };
    for (int i = 0; i < 4; ++i) {
        calls.push_back(key(IRECV).request(ADT_REC_MPI_IRECV_REQUEST, 1));
        calls.push_back(
            key(WAITALL).p2p(ADT_REC_MPI_IRECV, i == 2 ? 96 : 16, 1, key::ANY_SOURCE, i % 2 ? key::ANY_TAG : 5));
    }
    calls.push_back(key(IRECV).request(ADT_REC_MPI_IRECV_REQUEST, 1));
    calls.push_back(key(WAITALL).p2p(ADT_REC_MPI_IRECV, 8, 1, +1, 5));
    calls.push_back(key(FINALIZE));
    folded run(calls);
    char error[256] = "";
    adt_replay_plan *plan = adt_replay_plan_build(run.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    EXPECT_EQ(plan->largest_receive, 96u);
    int irecvs = 0;
    for (uint64_t i = 0; i < plan->length; ++i) {
        const adt_replay_call &call = plan->calls_by_signature[plan->sequence[i]];
        if (call.irecv_request == 0)
            continue;
        const adt_replay_message &m = plan->irecvs[plan->irecv_message[i]];
        bool wildcard = irecvs < 4;
        EXPECT_EQ(m.any_source, wildcard) << "MPI_Irecv " << irecvs;
        EXPECT_EQ(m.any_tag, wildcard && irecvs % 2 == 1) << "MPI_Irecv " << irecvs;
        if (!m.any_source) {
            EXPECT_EQ(m.peer, +1);
        }
        if (!m.any_tag) {
            EXPECT_EQ(m.tag, 5);
        }
        EXPECT_EQ(adt_replay_receive_bytes(plan, &m), wildcard ? 96u : 8u) << "MPI_Irecv " << irecvs;
        irecvs++;
    }
    EXPECT_EQ(irecvs, 5);
    EXPECT_EQ(plan->request_bytes[1], 96u);
    adt_replay_plan_free(plan);
}

// Only a receive asks for a wildcard: a send's is a damaged key.
TEST(ReplayPlan, ASendToAWildcardIsRefused)
{
    folded run({ key(INIT), key(SEND).p2p(ADT_REC_MPI_SEND, 8, 0, key::ANY_SOURCE, 0), key(FINALIZE) });
    EXPECT_EQ(run.refusal(), "rank 1: cannot replay MPI_Send: its destination or tag is a wildcard");
}

TEST(ReplayPlan, AnIrecvThatNeverCompletesIsRefused)
{
    folded run({ key(INIT), key(IRECV).request(ADT_REC_MPI_IRECV_REQUEST, 1), key(FINALIZE) });
    EXPECT_EQ(run.refusal(), "rank 1: the MPI_Irecv at call 1 never completes in the skeleton: cannot replay it");
}

TEST(ReplayPlan, APeerOutsideTheRunIsRefused)
{
    folded run({ key(INIT), key(SEND).p2p(ADT_REC_MPI_SEND, 8, 0, +2, 0), key(FINALIZE) });
    EXPECT_EQ(run.refusal(3), "rank 1: cannot replay MPI_Send: its destination is outside MPI_COMM_WORLD here");
    EXPECT_EQ(run.refusal(4), "the skeleton holds 3 ranks, this run has 4: run it with mpirun -np 3");
}

// The records of a collective (mpi-events/mpi.api), not rooted.
static key collective(function f, uint64_t sent, uint64_t received)
{
    return key(f).put(ADT_REC_MPI_COLLECTIVE_BEGIN).put(ADT_REC_MPI_COLLECTIVE_END).put(sent).put(received)
        .put(0).put(1).put(1).put(UINT32_MAX);
}

TEST(ReplayPlan, ScanAndExscanPartsAreTheRanksShares)
{
    // Rank 1 of 3 with 8 bytes per rank: MPI_Scan received (me + 1) parts,
    // MPI_Exscan me parts.
    folded run({ key(INIT), collective(SCAN, 2 * 8, 2 * 8), collective(EXSCAN, 1 * 8, 1 * 8), key(FINALIZE) });
    char error[256] = "";
    adt_replay_plan *plan = adt_replay_plan_build(run.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[1]].collective, ADT_REPLAY_SCAN);
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[1]].collective_bytes, 8u);
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[2]].collective, ADT_REPLAY_EXSCAN);
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[2]].collective_bytes, 8u);
    adt_replay_plan_free(plan);
    folded uneven({ key(INIT), collective(SCAN, 2 * 8, 2 * 8 + 1), key(FINALIZE) });
    EXPECT_EQ(uneven.refusal(), "rank 1: cannot replay MPI_Scan: its 17 bytes do not divide into 2 parts (a "
                                "communicator smaller than the run's?)");
}

TEST(ReplayPlan, ANonblockingCollectiveLearnsItsPartAtItsCompletion)
{
    // MPI_Iallgather of 4 bytes per rank on 3 ranks, twice with the same
    // request symbol, then 8 bytes: each start gets the totals of the
    // completion that follows it; MPI_Wait completes it as MPI_Wait.
    auto complete = [](uint64_t part) {
        return key(WAIT).put(ADT_REC_NB_COLLECTIVE_COMPLETE).put(3 * part).put(3 * part).put(1).put(11).put(1)
            .put(UINT32_MAX);
    };
    folded run({ key(INIT), key(IALLGATHER).request(ADT_REC_NB_COLLECTIVE_REQUEST, 1), complete(4),
                 key(IALLGATHER).request(ADT_REC_NB_COLLECTIVE_REQUEST, 1), complete(8), key(FINALIZE) });
    char error[256] = "";
    adt_replay_plan *plan = adt_replay_plan_build(run.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    const adt_replay_call &start = plan->calls_by_signature[plan->sequence[1]];
    EXPECT_EQ(start.collective, ADT_REPLAY_ALLGATHER);
    EXPECT_EQ(start.icollective_request, 1u);
    EXPECT_EQ(plan->irecvs[plan->irecv_message[1]].bytes, 4u);
    EXPECT_EQ(plan->irecvs[plan->irecv_message[3]].bytes, 8u);
    EXPECT_EQ(plan->request_bytes[1], 3 * 8u) << "the request's buffer holds every rank's part";
    const adt_replay_call &wait = plan->calls_by_signature[plan->sequence[2]];
    EXPECT_EQ(wait.completion, ADT_REPLAY_WAIT);
    EXPECT_EQ(wait.wait_count, 1u);
    adt_replay_plan_free(plan);
    folded never({ key(INIT), key(IALLGATHER).request(ADT_REC_NB_COLLECTIVE_REQUEST, 1), key(FINALIZE) });
    EXPECT_EQ(never.refusal(),
              "rank 1: the MPI_Iallgather at call 1 never completes in the skeleton: cannot replay it");
}

TEST(ReplayPlan, VCollectivesKeepTheOwnPart)
{
    // Rank 1 of 3: MPI_Allgatherv sent 3 times its 5 bytes; MPI_Alltoallv's
    // part is its sent total, which the replay splits among the ranks.
    folded run({ key(INIT), collective(ALLGATHERV, 3 * 5, 12), collective(ALLTOALLV, 7, 9), key(FINALIZE) });
    char error[256] = "";
    adt_replay_plan *plan = adt_replay_plan_build(run.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[1]].collective, ADT_REPLAY_ALLGATHERV);
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[1]].collective_bytes, 5u);
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[2]].collective, ADT_REPLAY_ALLTOALLV);
    EXPECT_EQ(plan->calls_by_signature[plan->sequence[2]].collective_bytes, 7u);
    EXPECT_TRUE(plan->splits_equally);
    EXPECT_GE(plan->largest_message, 15u) << "the buffers hold the largest recorded total";
    adt_replay_plan_free(plan);
    folded nonblocking({ key(INIT), key(IALLGATHERV).request(ADT_REC_NB_COLLECTIVE_REQUEST, 1), key(FINALIZE) });
    EXPECT_EQ(nonblocking.refusal(), "rank 1: cannot replay MPI_Iallgatherv: this nonblocking collective is not "
                                     "replayed yet");
}

TEST(ReplayPlan, AnUnsupportedCollectiveIsNamed)
{
    folded run({ key(INIT), collective(ALLTOALLW, 8, 8), key(FINALIZE) });
    EXPECT_EQ(run.refusal(), "rank 1: cannot replay MPI_Alltoallw: this collective is not replayed yet");
}

TEST(ReplayPlan, ARunMustBeginWithInit)
{
    folded run({ key(COMM_RANK), key(FINALIZE) });
    EXPECT_EQ(run.refusal(), "rank 1's calls do not begin with MPI_Init (MPI_Comm_rank)");
}

// A recovered run's skeleton (adaptrace-recover, an ending without
// MPI_Finalize) stops at its last call: planned whole, every call issued.
TEST(ReplayPlan, ARecoveredRunMayEndWithoutFinalize)
{
    folded ended({ key(INIT), key(COMM_RANK) });
    char error[256] = "";
    adt_replay_plan *plan = adt_replay_plan_build(ended.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    EXPECT_EQ(plan->length, 2u);
    EXPECT_FALSE(plan->ends_in_finalize);
    adt_replay_plan_free(plan);
    folded finalized({ key(INIT), key(COMM_RANK), key(FINALIZE) });
    plan = adt_replay_plan_build(finalized.file, 1, 3, error, sizeof error);
    ASSERT_NE(plan, nullptr) << error;
    EXPECT_TRUE(plan->ends_in_finalize);
    adt_replay_plan_free(plan);
}

} // namespace
