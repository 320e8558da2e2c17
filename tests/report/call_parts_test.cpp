// The MPI calls one folded call's key stands for, as adaptrace-report adds
// them to its figures after a location's events were folded
// (adt_report_skeleton_call_parts, report/skeleton.c; issue #25,
// docs/report.md "Folded calls"): the outermost call and the calls nested
// in it, each with the bytes of its own records.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "format/format.h"
#include "skeleton/skeleton.h"
extern "C" {
#include "report/report_internal.h"
}

namespace {

enum : uint64_t { SEND_FN = 0, WAITALL_FN = 1, RECV_FN = 2 };
const char *const kFunctions[] = {"MPI_Send", "MPI_Waitall", "MPI_Recv"};

// A key as mpi-events/fold.c writes it: LEB128 varints.
struct Key {
    std::vector<uint8_t> bytes;
    Key &put(uint64_t value)
    {
        do {
            uint8_t byte = value & 0x7f;
            value >>= 7;
            bytes.push_back(byte | (value ? 0x80 : 0));
        } while (value);
        return *this;
    }
    // function, context (0: none)
    explicit Key(uint64_t function) { put(function).put(0); }
    // kind, bytes, request, comm, peer (zigzag), tag (zigzag)
    Key &p2p(uint64_t kind, uint64_t count) { return put(kind).put(count).put(0).put(1).put(2).put(0); }
    // kind, sent, received, request, op, comm, root
    Key &collective_end(uint64_t sent, uint64_t received, uint64_t kind = ADT_REC_MPI_COLLECTIVE_END)
    {
        return put(kind).put(sent).put(received).put(kind == ADT_REC_MPI_COLLECTIVE_END ? 0 : 1).put(3).put(1).put(0);
    }
};

struct Parts {
    adt_skeleton_file file{};
    std::vector<adt_report_call_part> parts = std::vector<adt_report_call_part>(4);
    std::vector<adt_report_call_send> sends = std::vector<adt_report_call_send>(2);
    adt_report_call_sends sent{};
    Parts()
    {
        file.function_count = 3;
        file.function_names = kFunctions;
    }
    int of(const Key &key)
    {
        sent = {sends.data(), (int)sends.size(), 0};
        return adt_report_skeleton_call_parts(&file, key.bytes.data(), (uint32_t)key.bytes.size(), parts.data(),
                                              (int)parts.size(), &sent);
    }
};

TEST(SkeletonCallParts, ASendIsOneCallWithItsBytesSent)
{
    Parts parts;
    ASSERT_EQ(parts.of(Key(SEND_FN).p2p(ADT_REC_MPI_SEND, 8)), 1);
    EXPECT_EQ(parts.parts[0].function, SEND_FN);
    EXPECT_EQ(parts.parts[0].bytes_sent, 8u);
    EXPECT_EQ(parts.parts[0].bytes_received, 0u);
}

// A nonblocking collective's bytes go to the call that completed it, as
// the reading pass attributes its NonBlockingCollectiveComplete (before,
// neither counted them and the online report, which does, disagreed).
TEST(SkeletonCallParts, ANonblockingCollectivesBytesGoToTheCallThatCompletedIt)
{
    Parts parts;
    ASSERT_EQ(parts.of(Key(WAITALL_FN).collective_end(24, 40, ADT_REC_NB_COLLECTIVE_COMPLETE)), 1);
    EXPECT_EQ(parts.parts[0].function, WAITALL_FN);
    EXPECT_EQ(parts.parts[0].bytes_sent, 24u);
    EXPECT_EQ(parts.parts[0].bytes_received, 40u);
}

// The messages a call sends, for the communication matrix: communicator
// number, receiver relative to the sender, bytes; beyond the room given
// they are only counted.
TEST(SkeletonCallParts, SendsAreListedWithTheirCommunicatorPeerAndBytes)
{
    Parts parts;
    Key key(WAITALL_FN);
    // bytes, request, comm 2, peer -1 (zigzag 1), tag
    key.put(ADT_REC_MPI_ISEND).put(16).put(1).put(2).put(1).put(0);
    key.p2p(ADT_REC_MPI_RECV, 8).p2p(ADT_REC_MPI_SEND, 24).p2p(ADT_REC_MPI_SEND, 32);
    ASSERT_EQ(parts.of(key), 1);
    ASSERT_EQ(parts.sent.count, 3) << "two stored, the third only counted";
    EXPECT_EQ(parts.sends[0].comm, 2u);
    EXPECT_EQ(parts.sends[0].peer, -1);
    EXPECT_EQ(parts.sends[0].bytes, 16u);
    EXPECT_EQ(parts.sends[1].comm, 1u);
    EXPECT_EQ(parts.sends[1].peer, 1) << "zigzag 2 is +1";
    EXPECT_EQ(parts.sends[1].bytes, 24u);
}

TEST(SkeletonCallParts, NestedCallsAreCountedAndGetTheirOwnRecordsBytes)
{
    Parts parts;
    Key key(WAITALL_FN);
    key.put(ADT_REC_ENTER).put(RECV_FN).p2p(ADT_REC_MPI_RECV, 16).put(ADT_REC_LEAVE).put(RECV_FN);
    key.p2p(ADT_REC_MPI_IRECV, 32).collective_end(4, 12);
    ASSERT_EQ(parts.of(key), 2);
    EXPECT_EQ(parts.parts[0].function, WAITALL_FN);
    EXPECT_EQ(parts.parts[0].bytes_sent, 4u);
    EXPECT_EQ(parts.parts[0].bytes_received, 32u + 12u);
    EXPECT_EQ(parts.parts[1].function, RECV_FN);
    EXPECT_EQ(parts.parts[1].bytes_received, 16u);
}

TEST(SkeletonCallParts, KeysThatDoNotDecodeAreRefused)
{
    Parts parts;
    Key unknown_function(7);
    EXPECT_EQ(parts.of(unknown_function), -1);
    Key unknown_kind(SEND_FN);
    unknown_kind.put(ADT_REC_KIND_COUNT);
    EXPECT_EQ(parts.of(unknown_kind), -1);
    Key cut(SEND_FN);
    cut.p2p(ADT_REC_MPI_SEND, 8).bytes.pop_back();
    EXPECT_EQ(parts.of(cut), -1);
    Key leave_without_enter(SEND_FN);
    leave_without_enter.put(ADT_REC_LEAVE).put(SEND_FN);
    EXPECT_EQ(parts.of(leave_without_enter), -1);
    Key too_many(WAITALL_FN);
    for (int i = 0; i < 4; i++) {
        too_many.put(ADT_REC_ENTER).put(RECV_FN).put(ADT_REC_LEAVE).put(RECV_FN);
    }
    EXPECT_EQ(parts.of(too_many), -1); // 5 calls, room for 4
}

} // namespace
