// adaptrace-report --compensate on a synthetic archive (issue #26,
// docs/compensation.md): four ranks run a program of computation,
// samples, blocking and nonblocking sends and receives, a receive from any
// source, collectives and a short local call. It is simulated twice with
// the same semantics: once as it ran untraced (its true times), once with
// adaptrace's cost injected per event, varying with the gap since the
// thread's previous event as the runtime classes it and with the event's
// record kind (a short local call, point-to-point, collective, sample). The traced run is written as an OTF2
// archive with a summary.json whose cost model is the injected cost; the
// compensated time of every instant must come back to its true time within
// 1 ns, with no causality rule broken, and the report's figures must be
// the true run's. A model three times the injected cost over-compensates,
// and must say so while still keeping causality. The compensated archive
// written from it (--write-archive) holds every record at its true time.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../scratch_directory.hpp"

extern "C" {
#include "report/report.h"
}

namespace {

constexpr int RANKS = 4;
constexpr uint64_t RESOLUTION = 1000000000; // ticks are nanoseconds
constexpr uint64_t BOUNDS[4] = {1000, 10000, 100000, 1000000};
// Injected cost per gap class: an MPI call's parts (before its Enter,
// from its Enter to the call, after its Leave), a sample's (its delivery
// before its time, its handler after). Colder is dearer, as measured.
// Row NO_CLASS is a thread's first event, which has no gap: the report
// takes the mean of the classes for its parts, and the cost before it is
// nobody's to see (0 here: the true and measured runs start together).
constexpr unsigned NO_CLASS = 5;
constexpr uint64_t MPI_COST[6][3] = {{30, 20, 40},     {60, 35, 70},     {150, 80, 200},
                                     {600, 300, 900}, {2000, 700, 3000}, {0, 227, 842}};
constexpr uint64_t SAMPLE_COST[6][2] = {{100, 500}, {200, 800}, {400, 1500}, {1000, 4000}, {3000, 9000}, {0, 3160}};
// And per record kind (core.h adt_cost_kind), as the runtime keeps them
// apart: MPI_COST scaled, a short local call's at half a point-to-point
// call's (no message records), a collective's at three times. Every
// rank's first event is a collective (row NO_CLASS: the mean of its
// classes, 3 x 227 and 3 x 842).
enum CostKind : unsigned { K_OTHER, K_P2P, K_COLLECTIVE, MPI_KINDS };
constexpr uint64_t KIND_SCALE[MPI_KINDS][2] = {{1, 2}, {1, 1}, {3, 1}};
const char *const KIND_KEYS[MPI_KINDS] = {"cost_mpi_other", "cost_mpi_p2p", "cost_mpi_collective"};

uint64_t mpi_cost(unsigned kind, unsigned gap_class, unsigned part)
{
    return MPI_COST[gap_class][part] * KIND_SCALE[kind][0] / KIND_SCALE[kind][1];
}
// What MPI itself takes: latency by message size, the own time of the
// calls that do not wait, the time after a collective's last entry.
constexpr uint64_t SEND_NS = 250, ISEND_NS = 150, IRECV_NS = 100, WAIT_SEND_NS = 50, COLLECTIVE_NS = 400,
                   COMM_RANK_NS = 20;

uint64_t latency(uint64_t bytes) { return bytes <= 8 ? 1500 : bytes <= 4096 ? 3000 : 12000; }

unsigned gap_class(uint64_t gap)
{
    unsigned c = 0;
    while (c < 4 && gap >= BOUNDS[c])
        c++;
    return c;
}

enum Region { R_SEND, R_ISEND, R_RECV, R_IRECV, R_WAIT, R_ALLREDUCE, R_BARRIER, R_COMM_RANK, REGIONS };
const char *const REGION_NAMES[REGIONS] = {"MPI_Send", "MPI_Isend",     "MPI_Recv",    "MPI_Irecv",
                                           "MPI_Wait", "MPI_Allreduce", "MPI_Barrier", "MPI_Comm_rank"};
// Their roles as adaptrace writes them (MPI_Wait's is the plain function
// role: the report tells it a point-to-point completion by its name).
const OTF2_RegionRole REGION_ROLES[REGIONS] = {
    OTF2_REGION_ROLE_POINT2POINT, OTF2_REGION_ROLE_POINT2POINT,   OTF2_REGION_ROLE_POINT2POINT,
    OTF2_REGION_ROLE_POINT2POINT, OTF2_REGION_ROLE_FUNCTION,      OTF2_REGION_ROLE_COLL_ALL2ALL,
    OTF2_REGION_ROLE_BARRIER,     OTF2_REGION_ROLE_FUNCTION};
const CostKind REGION_KINDS[REGIONS] = {K_P2P, K_P2P, K_P2P, K_P2P, K_P2P, K_COLLECTIVE, K_COLLECTIVE, K_OTHER};

enum class Op { Compute, Sample, Send, Isend, Recv, Irecv, Wait, Allreduce, Barrier, CommRank };
struct Step {
    Op op;
    uint64_t value = 0; // compute: ns; messages: bytes; wait: request
    int peer = 0;       // the recorded source of a receive from any source too
    int tag = 0;
    uint64_t request = 0;
};

// One record as written, with the true time of its event.
enum class Kind { Enter, Leave, Send, Isend, IsendComplete, IrecvRequest, Recv, Irecv, CollBegin, CollEnd, Sample };
struct Record {
    Kind kind = Kind::Enter;
    uint64_t measured = 0;
    uint64_t truth = 0;
    uint32_t region = 0;
    int peer = 0;
    int tag = 0;
    uint64_t bytes = 0;
    uint64_t request = 0;
};

struct Message {
    uint64_t arrival[2]; // [measured, true]
    uint64_t bytes;
};

// Both runs of the program at once: clock[0] measured, clock[1] true.
class Simulation {
public:
    explicit Simulation(const std::vector<std::vector<Step>> &programs) : programs_(programs) {}

    void run()
    {
        ranks_.assign(RANKS, RankState{});
        bool progress = true;
        while (progress) {
            progress = false;
            for (int r = 0; r < RANKS; r++)
                while (ranks_[r].pc < programs_[r].size() && step(r))
                    progress = true;
        }
        for (int r = 0; r < RANKS; r++)
            ASSERT_EQ(ranks_[r].pc, programs_[r].size()) << "rank " << r << " blocked: the program deadlocks";
    }

    const std::vector<Record> &records(int rank) const { return ranks_[rank].records; }
    // The cost injected on a rank's events between its first and its last
    // instant (the last event's after part comes later).
    uint64_t injected(int rank) const { return ranks_[rank].injected - ranks_[rank].last_after; }

private:
    struct RankState {
        size_t pc = 0;
        uint64_t clock[2] = {1000000, 1000000};
        uint64_t last_event = 0; // measured
        bool entered = false;    // the step at pc has made its Enter
        uint64_t enter[2] = {0, 0};
        uint64_t start[2] = {0, 0}; // where MPI itself starts: after the inside part
        unsigned call_class = 0;
        unsigned call_kind = K_P2P;
        std::map<uint64_t, Step> requests;
        std::vector<Record> records;
        uint64_t injected = 0;
        uint64_t last_after = 0;
    };

    // The class of the gap that includes the cost it selects: the least
    // fixed point of class(gap + cost(class)), as the runtime, which
    // classes the time since the last event at the event's own time.
    template <typename BeforeCost> static unsigned class_with(uint64_t gap, BeforeCost before)
    {
        unsigned c = 0;
        for (int round = 0; round < 5; round++)
            c = gap_class(gap + before(c));
        return c;
    }

    void add(RankState &rank, Kind kind, uint64_t measured, uint64_t truth, Record extra = {})
    {
        extra.kind = kind;
        extra.measured = measured;
        extra.truth = truth;
        rank.records.push_back(extra);
    }

    void enter(RankState &rank, Region region)
    {
        uint64_t gap = rank.last_event ? rank.clock[0] - rank.last_event : 0;
        unsigned kind = REGION_KINDS[region];
        rank.call_kind = kind;
        rank.call_class =
            rank.last_event ? class_with(gap, [kind](unsigned c) { return mpi_cost(kind, c, 0); }) : NO_CLASS;
        uint64_t before = mpi_cost(kind, rank.call_class, 0), inside = mpi_cost(kind, rank.call_class, 1);
        rank.enter[0] = rank.clock[0] + before;
        rank.enter[1] = rank.clock[1];
        rank.start[0] = rank.enter[0] + inside;
        rank.start[1] = rank.enter[1];
        rank.last_event = rank.enter[0];
        rank.injected += before + inside;
        add(rank, Kind::Enter, rank.enter[0], rank.enter[1], Record{.region = region});
        rank.entered = true;
    }

    void leave(RankState &rank, Region region, const uint64_t end[2])
    {
        add(rank, Kind::Leave, end[0], end[1], Record{.region = region});
        rank.last_event = end[0];
        rank.clock[0] = end[0] + mpi_cost(rank.call_kind, rank.call_class, 2);
        rank.last_after = mpi_cost(rank.call_kind, rank.call_class, 2);
        rank.injected += rank.last_after;
        rank.clock[1] = end[1];
        rank.entered = false;
        rank.pc++;
    }

    void send_message(int from, int to, int tag, uint64_t bytes)
    {
        RankState &rank = ranks_[from];
        queues_[{from, to, tag}].push_back(
            Message{{rank.start[0] + latency(bytes), rank.start[1] + latency(bytes)}, bytes});
    }

    // Completes a receive from peer if its message was sent; the end of
    // the receiving call, measured and true.
    bool receive(RankState &rank, int peer, int tag, int self, uint64_t end[2], uint64_t *bytes)
    {
        auto &queue = queues_[{peer, self, tag}];
        if (queue.empty())
            return false;
        Message message = queue.front();
        queue.pop_front();
        for (int k = 0; k < 2; k++)
            end[k] = std::max(rank.start[k], message.arrival[k]);
        *bytes = message.bytes;
        return true;
    }

    // One step of rank r; false while it is blocked.
    bool step(int r)
    {
        RankState &rank = ranks_[r];
        const Step &s = programs_[r][rank.pc];
        uint64_t end[2];
        switch (s.op) {
        case Op::Compute:
            rank.clock[0] += s.value;
            rank.clock[1] += s.value;
            rank.pc++;
            return true;
        case Op::Sample: {
            uint64_t gap = rank.last_event ? rank.clock[0] - rank.last_event : 0;
            unsigned c =
                rank.last_event ? class_with(gap, [](unsigned k) { return SAMPLE_COST[k][0]; }) : NO_CLASS;
            uint64_t at = rank.clock[0] + SAMPLE_COST[c][0];
            add(rank, Kind::Sample, at, rank.clock[1]);
            rank.last_event = at;
            rank.clock[0] = at + SAMPLE_COST[c][1];
            rank.last_after = SAMPLE_COST[c][1];
            rank.injected += SAMPLE_COST[c][0] + rank.last_after;
            rank.pc++;
            return true;
        }
        case Op::Send:
            enter(rank, R_SEND);
            add(rank, Kind::Send, rank.enter[0], rank.enter[1], Record{.peer = s.peer, .tag = s.tag, .bytes = s.value});
            send_message(r, s.peer, s.tag, s.value);
            for (int k = 0; k < 2; k++)
                end[k] = rank.start[k] + SEND_NS;
            leave(rank, R_SEND, end);
            return true;
        case Op::Isend:
            enter(rank, R_ISEND);
            send_message(r, s.peer, s.tag, s.value);
            for (int k = 0; k < 2; k++)
                end[k] = rank.start[k] + ISEND_NS;
            add(rank, Kind::Isend, end[0], end[1],
                Record{.peer = s.peer, .tag = s.tag, .bytes = s.value, .request = s.request});
            rank.requests[s.request] = s;
            leave(rank, R_ISEND, end);
            return true;
        case Op::CommRank:
            enter(rank, R_COMM_RANK);
            for (int k = 0; k < 2; k++)
                end[k] = rank.start[k] + COMM_RANK_NS;
            leave(rank, R_COMM_RANK, end);
            return true;
        case Op::Irecv:
            enter(rank, R_IRECV);
            for (int k = 0; k < 2; k++)
                end[k] = rank.start[k] + IRECV_NS;
            add(rank, Kind::IrecvRequest, end[0], end[1], Record{.request = s.request});
            rank.requests[s.request] = s;
            leave(rank, R_IRECV, end);
            return true;
        case Op::Recv:
        case Op::Wait: {
            bool wait = s.op == Op::Wait;
            const Step &posted = wait ? rank.requests.at(s.request) : s;
            if (!rank.entered)
                enter(rank, wait ? R_WAIT : R_RECV);
            if (wait && posted.op == Op::Isend) {
                for (int k = 0; k < 2; k++)
                    end[k] = rank.start[k] + WAIT_SEND_NS;
                add(rank, Kind::IsendComplete, end[0], end[1], Record{.request = s.request});
                leave(rank, R_WAIT, end);
                return true;
            }
            uint64_t bytes = 0;
            if (!receive(rank, posted.peer, posted.tag, r, end, &bytes))
                return false;
            add(rank, wait ? Kind::Irecv : Kind::Recv, end[0], end[1],
                Record{.peer = posted.peer, .tag = posted.tag, .bytes = bytes, .request = s.request});
            leave(rank, wait ? R_WAIT : R_RECV, end);
            return true;
        }
        case Op::Allreduce:
        case Op::Barrier: {
            Region region = s.op == Op::Allreduce ? R_ALLREDUCE : R_BARRIER;
            uint64_t &sequence = collective_sequence_[r];
            if (!rank.entered) {
                enter(rank, region);
                add(rank, Kind::CollBegin, rank.enter[0], rank.enter[1]);
                auto &instance = collectives_[sequence];
                instance.push_back({rank.start[0], rank.start[1]});
            }
            auto &instance = collectives_[sequence];
            if (instance.size() < RANKS)
                return false;
            for (int k = 0; k < 2; k++) {
                uint64_t last = 0;
                for (const auto &member : instance)
                    last = std::max(last, member[k]);
                end[k] = last + COLLECTIVE_NS;
            }
            add(rank, Kind::CollEnd, end[0], end[1], Record{.bytes = s.op == Op::Allreduce ? 8u : 0u});
            sequence++;
            leave(rank, region, end);
            return true;
        }
        }
        return false;
    }

    std::vector<std::vector<Step>> programs_;
    std::vector<RankState> ranks_;
    std::map<std::tuple<int, int, int>, std::deque<Message>> queues_;
    std::map<uint64_t, std::vector<std::array<uint64_t, 2>>> collectives_;
    uint64_t collective_sequence_[RANKS] = {};
};

// The program: a ring of blocking sends at three sizes, late senders
// among them (each size has a receive that waits), nonblocking exchanges
// with waits, a receive from any source (recorded with the source that
// came), samples between calls at gaps from under 1 µs to over 1 ms,
// allreduces and barriers with unequal arrivals, and a short local call
// (MPI_Comm_rank, 20 ns) after each computation, cold.
std::vector<std::vector<Step>> program()
{
    std::vector<std::vector<Step>> programs(RANKS);
    for (auto &p : programs)
        p.push_back({Op::Barrier}); // the first event of every rank, at the same time
    const uint64_t sizes[] = {8, 4096, 65536};
    uint64_t request = 1;
    for (int round = 0; round < 6; round++) {
        for (int r = 0; r < RANKS; r++) {
            auto &p = programs[r];
            int next = (r + 1) % RANKS, previous = (r + RANKS - 1) % RANKS;
            uint64_t bytes = sizes[round % 3];
            // Computation from 300 ns to 2 ms: every gap class.
            uint64_t compute = (round * 7 + r * 3) % 5 == 0 ? 300 : 2000u * (1u + (round * 5 + r) % 4) * (r + 1);
            p.push_back({Op::Compute, compute});
            p.push_back({Op::CommRank});
            p.push_back({Op::Sample});
            p.push_back({Op::Compute, 150u + 500000u * ((round + r) % 3 == 0)});
            // Rank 0 receives first (it waits: a late sender), the others send first.
            if (r == 0) {
                p.push_back({Op::Recv, 0, previous, round});
                p.push_back({Op::Send, bytes, next, round});
            } else {
                p.push_back({Op::Compute, 40000u * r});
                p.push_back({Op::Send, bytes, next, round});
                p.push_back({Op::Recv, 0, previous, round});
            }
            p.push_back({Op::Irecv, 0, previous, 100 + round, request});
            p.push_back({Op::Compute, 800});
            p.push_back({Op::Isend, bytes, next, 100 + round, request + 1});
            p.push_back({Op::Sample});
            p.push_back({Op::Compute, 5000u * (1 + r)});
            p.push_back({Op::Wait, 0, 0, 0, request + 1});
            p.push_back({Op::Wait, 0, 0, 0, request});
            request += 2;
            p.push_back({Op::Compute, 20000u * ((r + round) % RANKS) + 60});
            p.push_back({round % 2 ? Op::Barrier : Op::Allreduce});
        }
        // A receive from any source on rank 1: rank 2 sends to it after a
        // long computation, and the receive records rank 2 as its source.
        programs[2].push_back({Op::Compute, 70000});
        programs[2].push_back({Op::Send, 8, 1, 999});
        programs[1].push_back({Op::Recv, 0, 2, 999});
    }
    return programs;
}

void check(OTF2_ErrorCode code) { ASSERT_EQ(code, OTF2_SUCCESS) << OTF2_Error_GetDescription(code); }

OTF2_FlushType pre_flush(void *, OTF2_FileType, OTF2_LocationRef, void *, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void *, OTF2_FileType, OTF2_LocationRef) { return 0; }
const OTF2_FlushCallbacks FLUSH = {pre_flush, post_flush};

enum { STRING_WORLD = REGIONS, STRING_NODE, STRING_RANK, STRING_THREAD, STRING_SAMPLES };

// clock_offsets: per rank, the constant offset its ClockOffset records
// say (none: no records), as a run's synchronisation measures it; OTF2's
// reader adds it to every time of the rank.
void write_archive(const std::string &directory, const Simulation &simulation,
                   const int64_t *clock_offsets = nullptr)
{
    OTF2_Archive *archive = OTF2_Archive_Open(directory.c_str(), "traces", OTF2_FILEMODE_WRITE, 1 << 20, 1 << 20,
                                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    ASSERT_NE(archive, nullptr);
    check(OTF2_Archive_SetFlushCallbacks(archive, &FLUSH, nullptr));
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive));
    check(OTF2_Archive_OpenEvtFiles(archive));
    uint64_t events[RANKS] = {}, last = 0;
    for (int r = 0; r < RANKS; r++) {
        OTF2_EvtWriter *writer = OTF2_Archive_GetEvtWriter(archive, r);
        for (const Record &e : simulation.records(r)) {
            last = std::max(last, e.measured);
            switch (e.kind) {
            case Kind::Enter: check(OTF2_EvtWriter_Enter(writer, nullptr, e.measured, e.region)); break;
            case Kind::Leave: check(OTF2_EvtWriter_Leave(writer, nullptr, e.measured, e.region)); break;
            case Kind::Send:
                check(OTF2_EvtWriter_MpiSend(writer, nullptr, e.measured, e.peer, 0, e.tag, e.bytes));
                break;
            case Kind::Isend:
                check(OTF2_EvtWriter_MpiIsend(writer, nullptr, e.measured, e.peer, 0, e.tag, e.bytes, e.request));
                break;
            case Kind::IsendComplete:
                check(OTF2_EvtWriter_MpiIsendComplete(writer, nullptr, e.measured, e.request));
                break;
            case Kind::IrecvRequest:
                check(OTF2_EvtWriter_MpiIrecvRequest(writer, nullptr, e.measured, e.request));
                break;
            case Kind::Recv:
                check(OTF2_EvtWriter_MpiRecv(writer, nullptr, e.measured, e.peer, 0, e.tag, e.bytes));
                break;
            case Kind::Irecv:
                check(OTF2_EvtWriter_MpiIrecv(writer, nullptr, e.measured, e.peer, 0, e.tag, e.bytes, e.request));
                break;
            case Kind::CollBegin: check(OTF2_EvtWriter_MpiCollectiveBegin(writer, nullptr, e.measured)); break;
            case Kind::CollEnd:
                check(OTF2_EvtWriter_MpiCollectiveEnd(writer, nullptr, e.measured,
                                                      e.bytes ? OTF2_COLLECTIVE_OP_ALLREDUCE
                                                              : OTF2_COLLECTIVE_OP_BARRIER,
                                                      0, OTF2_UNDEFINED_UINT32, e.bytes, e.bytes));
                break;
            case Kind::Sample:
                check(OTF2_EvtWriter_CallingContextSample(writer, nullptr, e.measured, 0, 1, 0));
                break;
            }
        }
        check(OTF2_EvtWriter_GetNumberOfEvents(writer, &events[r]));
        check(OTF2_Archive_CloseEvtWriter(archive, writer));
    }
    check(OTF2_Archive_CloseEvtFiles(archive));
    check(OTF2_Archive_OpenDefFiles(archive));
    for (int r = 0; r < RANKS; r++) {
        OTF2_DefWriter *writer = OTF2_Archive_GetDefWriter(archive, r);
        for (uint64_t time : {uint64_t(0), last}) {
            if (clock_offsets != nullptr)
                check(OTF2_DefWriter_WriteClockOffset(writer, time, clock_offsets[r], 0.0));
        }
        check(OTF2_Archive_CloseDefWriter(archive, writer));
    }
    check(OTF2_Archive_CloseDefFiles(archive));
    OTF2_GlobalDefWriter *defs = OTF2_Archive_GetGlobalDefWriter(archive);
    check(OTF2_GlobalDefWriter_WriteClockProperties(defs, RESOLUTION, 0, last + 1, 0));
    for (uint32_t r = 0; r < REGIONS; r++)
        check(OTF2_GlobalDefWriter_WriteString(defs, r, REGION_NAMES[r]));
    const char *names[] = {"MPI_COMM_WORLD", "machine", "MPI Rank", "Master thread", "samples"};
    for (uint32_t s = STRING_WORLD; s <= STRING_SAMPLES; s++)
        check(OTF2_GlobalDefWriter_WriteString(defs, s, names[s - STRING_WORLD]));
    for (uint32_t r = 0; r < REGIONS; r++)
        check(OTF2_GlobalDefWriter_WriteRegion(defs, r, r, r, r, REGION_ROLES[r], OTF2_PARADIGM_MPI,
                                               OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0));
    // The samples' one calling context: a function of the application.
    check(OTF2_GlobalDefWriter_WriteString(defs, STRING_SAMPLES + 1, "compute"));
    check(OTF2_GlobalDefWriter_WriteRegion(defs, REGIONS, STRING_SAMPLES + 1, STRING_SAMPLES + 1,
                                           STRING_SAMPLES + 1, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING,
                                           OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0));
    check(OTF2_GlobalDefWriter_WriteCallingContext(defs, 0, REGIONS, OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                                   OTF2_UNDEFINED_CALLING_CONTEXT));
    check(OTF2_GlobalDefWriter_WriteInterruptGenerator(defs, 0, STRING_SAMPLES, OTF2_INTERRUPT_GENERATOR_MODE_TIME,
                                                       OTF2_BASE_DECIMAL, -6, 100));
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, 0, STRING_NODE, STRING_NODE,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    uint64_t members[RANKS];
    for (uint32_t r = 0; r < RANKS; r++) {
        check(OTF2_GlobalDefWriter_WriteLocationGroup(defs, r, STRING_RANK, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                      OTF2_UNDEFINED_LOCATION_GROUP));
        check(OTF2_GlobalDefWriter_WriteLocation(defs, r, STRING_THREAD, OTF2_LOCATION_TYPE_CPU_THREAD, events[r], r));
        members[r] = r;
    }
    check(OTF2_GlobalDefWriter_WriteGroup(defs, 0, STRING_WORLD, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, RANKS, members));
    check(OTF2_GlobalDefWriter_WriteGroup(defs, 1, STRING_WORLD, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, RANKS, members));
    check(OTF2_GlobalDefWriter_WriteComm(defs, 0, STRING_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    check(OTF2_Archive_Close(archive));
}

// summary.json as the runtime writes its per_location lines (the fields
// the report reads), with the injected cost times factor as the model:
// each class timed 4 times at its cost, in the five numbers per cell of
// an archive before issue #26's timed_before (every timed call timed from
// its wrapper's entry); with timed_before > 0, an MPI cell holds 8 timed
// calls of which timed_before were timed from their entry (the others
// from their Enter on, as the runtime times the first calls of a class
// that 1 call in 64 leaves untimed), and the sums are over those counts.
// The model is per record kind (version 2, "cost_model": 2, a cell row
// per kind) unless one_mpi_kind: then it is as an archive before the
// kinds has it, one "cost_mpi" for every MPI call (the point-to-point
// calls' costs, the most of its calls).
struct SummaryModel {
    uint64_t factor = 1;
    uint64_t timed_before = 0;
    bool one_mpi_kind = false;
};

void write_cells(std::ofstream &out, const char *key, unsigned kind, const SummaryModel &model)
{
    out << ", \"" << key << "\": [";
    for (unsigned c = 0; c < 5; c++) {
        uint64_t timed = model.timed_before ? 8 : 4, before_timed = model.timed_before ? model.timed_before : timed;
        out << (c ? ", " : "") << "[100, " << timed << ", " << before_timed * model.factor * mpi_cost(kind, c, 0)
            << ", " << timed * model.factor * mpi_cost(kind, c, 1) << ", "
            << timed * model.factor * mpi_cost(kind, c, 2);
        if (model.timed_before)
            out << ", " << model.timed_before;
        out << "]";
    }
    out << "]";
}

void write_summary(const std::string &directory, const SummaryModel &model)
{
    std::ofstream out(directory + "/summary.json");
    out << "{\n  \"ranks\": " << RANKS << ",\n  \"per_location\": [";
    for (int r = 0; r < RANKS; r++) {
        out << (r ? "," : "") << "\n    {\"rank\": " << r << ", \"thread\": 0, \"cost_timer_resolution\": "
            << RESOLUTION << ", \"cost_timed_every\": 64, \"cost_gap_bounds_ticks\": [" << BOUNDS[0] << ", "
            << BOUNDS[1] << ", " << BOUNDS[2] << ", " << BOUNDS[3] << "], \"cost_interrupted\": 0";
        if (model.one_mpi_kind) {
            write_cells(out, "cost_mpi", K_P2P, model);
        } else {
            out << ", \"cost_model\": 2";
            for (unsigned k = 0; k < MPI_KINDS; k++)
                write_cells(out, KIND_KEYS[k], k, model);
        }
        out << ", \"cost_sample\": [";
        for (int c = 0; c < 5; c++)
            out << (c ? ", " : "") << "[10, 4, " << 4 * model.factor * SAMPLE_COST[c][0] << ", 0, "
                << 4 * model.factor * SAMPLE_COST[c][1] << "]";
        out << "]}";
    }
    // The run's estimate per rank as the runtime writes it (rank r:
    // r + 1 ms, r + 1 % of its run), which the report states as it is.
    out << "\n  ],\n  \"measurement_cost_per_rank_s\": [0.001, 0.002, 0.003, 0.004],\n"
        << "  \"measurement_share_per_rank\": [0.01, 0.02, 0.03, 0.04]\n}\n";
}

// The true run's figures, as the report defines them.
struct Figures {
    double span[RANKS] = {};
    double mpi[RANKS] = {};
    double late_sender[RANKS] = {};
    double collective_wait[RANKS] = {};
};

Figures true_figures(const Simulation &simulation)
{
    Figures figures;
    struct End {
        uint64_t enter;
    };
    // Matched in order per (sender, receiver, tag), as the report does.
    std::map<std::tuple<int, int, int>, std::deque<uint64_t>> sends;
    std::vector<std::tuple<int, int, int, uint64_t>> receives; // receiver, sender, tag, receive enter
    std::map<uint64_t, std::vector<std::pair<int, uint64_t>>> collectives;
    for (int r = 0; r < RANKS; r++) {
        const auto &records = simulation.records(r);
        figures.span[r] = double(records.back().truth - records.front().truth) / RESOLUTION;
        uint64_t enter = 0, sequence = 0;
        for (const Record &e : records) {
            if (e.kind == Kind::Enter)
                enter = e.truth;
            if (e.kind == Kind::Leave)
                figures.mpi[r] += double(e.truth - enter) / RESOLUTION;
            if (e.kind == Kind::Send || e.kind == Kind::Isend)
                sends[{r, e.peer, e.tag}].push_back(enter);
            if (e.kind == Kind::Recv || e.kind == Kind::Irecv)
                receives.emplace_back(r, e.peer, e.tag, enter);
            if (e.kind == Kind::CollEnd)
                collectives[sequence++].emplace_back(r, enter);
        }
    }
    for (const auto &[receiver, sender, tag, receive_enter] : receives) {
        uint64_t send_enter = sends[{sender, receiver, tag}].front();
        sends[{sender, receiver, tag}].pop_front();
        if (send_enter > receive_enter)
            figures.late_sender[receiver] += double(send_enter - receive_enter) / RESOLUTION;
    }
    for (const auto &[sequence, members] : collectives) {
        uint64_t last = 0;
        for (const auto &member : members)
            last = std::max(last, member.second);
        for (const auto &member : members)
            figures.collective_wait[member.first] += double(last - member.second) / RESOLUTION;
    }
    return figures;
}

// The events of an archive read back: per location, in its order, each
// one's kind and time (every kind write_archive above writes).
using ReadBack = std::map<uint64_t, std::vector<std::pair<Kind, uint64_t>>>;

template <Kind kind> OTF2_CallbackCode note(OTF2_LocationRef location, OTF2_TimeStamp time, void *data)
{
    (*static_cast<ReadBack *>(data))[location].emplace_back(kind, time);
    return OTF2_CALLBACK_SUCCESS;
}
template <Kind kind, typename... Rest>
OTF2_CallbackCode noted(OTF2_LocationRef location, OTF2_TimeStamp time, void *data, OTF2_AttributeList *, Rest...)
{
    return note<kind>(location, time, data);
}

ReadBack read_back(const std::string &directory)
{
    ReadBack events;
    OTF2_Reader *reader = OTF2_Reader_Open((directory + "/traces.otf2").c_str());
    EXPECT_NE(reader, nullptr);
    if (reader == nullptr)
        return events;
    check(OTF2_Reader_SetSerialCollectiveCallbacks(reader));
    uint64_t locations = 0;
    check(OTF2_Reader_GetNumberOfLocations(reader, &locations));
    for (uint64_t l = 0; l < locations; l++)
        check(OTF2_Reader_SelectLocation(reader, l));
    check(OTF2_Reader_OpenEvtFiles(reader));
    for (uint64_t l = 0; l < locations; l++)
        EXPECT_NE(OTF2_Reader_GetEvtReader(reader, l), nullptr);
    OTF2_GlobalEvtReader *global = OTF2_Reader_GetGlobalEvtReader(reader);
    OTF2_GlobalEvtReaderCallbacks *callbacks = OTF2_GlobalEvtReaderCallbacks_New();
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, noted<Kind::Enter, OTF2_RegionRef>);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, noted<Kind::Leave, OTF2_RegionRef>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(callbacks,
                                                     noted<Kind::Send, uint32_t, OTF2_CommRef, uint32_t, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(
        callbacks, noted<Kind::Isend, uint32_t, OTF2_CommRef, uint32_t, uint64_t, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(callbacks, noted<Kind::IsendComplete, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(callbacks, noted<Kind::IrecvRequest, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(callbacks,
                                                     noted<Kind::Recv, uint32_t, OTF2_CommRef, uint32_t, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(
        callbacks, noted<Kind::Irecv, uint32_t, OTF2_CommRef, uint32_t, uint64_t, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(callbacks, noted<Kind::CollBegin>);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(
        callbacks, noted<Kind::CollEnd, OTF2_CollectiveOp, OTF2_CommRef, uint32_t, uint64_t, uint64_t>);
    OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(
        callbacks, noted<Kind::Sample, OTF2_CallingContextRef, uint32_t, OTF2_InterruptGeneratorRef>);
    check(OTF2_Reader_RegisterGlobalEvtCallbacks(reader, global, callbacks, &events));
    uint64_t read = 0;
    check(OTF2_Reader_ReadAllGlobalEvents(reader, global, &read));
    OTF2_GlobalEvtReaderCallbacks_Delete(callbacks);
    OTF2_Reader_CloseGlobalEvtReader(reader, global);
    OTF2_Reader_Close(reader);
    return events;
}

class Compensation : public ::testing::Test {
protected:
    void SetUp() override
    {
        simulation_.run();
        ASSERT_FALSE(HasFatalFailure());
        write_archive(directory_.path(), simulation_);
    }

    adt_report_profile *read(adt_report_compensation_mode mode)
    {
        adt_report_error error{};
        adt_report_options options{};
        options.compensate = mode;
        options.keep_compensated_times = true;
        adt_report_profile *profile = adt_report_read(directory_.path().c_str(), &options, &error);
        EXPECT_NE(profile, nullptr) << error.text;
        return profile;
    }

    // The instants of a rank's records (distinct times of its Enters,
    // Leaves and samples) and their true times.
    std::vector<std::pair<uint64_t, uint64_t>> instants(int rank) const
    {
        std::vector<std::pair<uint64_t, uint64_t>> instants;
        for (const Record &e : simulation_.records(rank)) {
            if (e.kind != Kind::Enter && e.kind != Kind::Leave && e.kind != Kind::Sample)
                continue;
            if (instants.empty() || instants.back().first != e.measured)
                instants.emplace_back(e.measured, e.truth);
        }
        return instants;
    }

    ScratchDirectory directory_{"adt-compensation-test"};
    Simulation simulation_{program()};
};

TEST_F(Compensation, ModelGivesEveryInstantItsTrueTime)
{
    write_summary(directory_.path(), {});
    adt_report_profile *profile = read(ADT_REPORT_COMPENSATE_MODEL);
    ASSERT_NE(profile, nullptr);
    const adt_report_compensation &c = profile->compensation;
    EXPECT_EQ(c.locations_modelled, uint64_t(RANKS));
    EXPECT_EQ(c.locations_unmodelled, 0u);
    EXPECT_EQ(c.causality_violations, 0u);
    EXPECT_EQ(c.unresolved, 0u);
    EXPECT_EQ(c.over_compensated, 0u);
    // The program has receives that waited and that did not, and
    // collectives where members waited.
    EXPECT_GT(c.waits_inherited, 0u);
    EXPECT_GT(c.collective_lowered + c.collective_raised, 0u);
    ASSERT_EQ(c.location_count, size_t(RANKS));
    size_t checked = 0;
    for (size_t l = 0; l < c.location_count; l++) {
        const adt_report_compensated_location &location = c.locations[l];
        auto truth = instants(int(location.rank));
        ASSERT_EQ(location.count, truth.size()) << "rank " << location.rank;
        for (size_t k = 0; k < location.count; k++) {
            ASSERT_EQ(location.measured[k], truth[k].first);
            EXPECT_LE(std::llabs((long long)location.compensated[k] - (long long)truth[k].second), 1)
                << "rank " << location.rank << " instant " << k << " measured " << location.measured[k];
            checked++;
        }
    }
    EXPECT_GT(checked, 300u);
    // Per rank, the model's cost is the cost injected on its own events;
    // the span removed is its measured span less its true one (the waits
    // it inherited from the others' costs too).
    Figures figures = true_figures(simulation_);
    for (int r = 0; r < RANKS; r++) {
        const auto &records = simulation_.records(r);
        double measured_span = double(records.back().measured - records.front().measured) / RESOLUTION;
        EXPECT_NEAR(c.rank_model_seconds[r], double(simulation_.injected(r)) / RESOLUTION, 1e-9) << "rank " << r;
        EXPECT_NEAR(c.rank_removed_seconds[r], measured_span - figures.span[r], 3e-9) << "rank " << r;
    }
    // The report's figures are the true run's.
    for (int r = 0; r < RANKS; r++) {
        EXPECT_NEAR(profile->ranks[r].span_seconds, figures.span[r], 3e-9) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].mpi_seconds, figures.mpi[r], 1e-7) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].late_sender_seconds, figures.late_sender[r], 1e-7) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].collective_wait_seconds, figures.collective_wait[r], 1e-7) << "rank " << r;
    }
    adt_report_free(profile);
}

// The model as the runtime writes it since issue #26: a class's inside and
// after parts are means over all its timed calls, its before part over
// those timed from their wrapper's entry. Taking each part over its own
// count gives every instant, the short calls' Leaves among them (an
// MPI_Wait of 50 ns whose inside cost is up to 700 ns), its true time.
TEST_F(Compensation, ModelWithPartsTimedOverTheirOwnCountsGivesTrueTimes)
{
    write_summary(directory_.path(), {.factor = 1, .timed_before = 1});
    adt_report_profile *profile = read(ADT_REPORT_COMPENSATE_MODEL);
    ASSERT_NE(profile, nullptr);
    const adt_report_compensation &c = profile->compensation;
    EXPECT_EQ(c.locations_modelled, uint64_t(RANKS));
    EXPECT_EQ(c.over_compensated, 0u);
    EXPECT_EQ(c.causality_violations, 0u);
    size_t checked = 0, short_calls = 0;
    for (size_t l = 0; l < c.location_count; l++) {
        const adt_report_compensated_location &location = c.locations[l];
        auto truth = instants(int(location.rank));
        ASSERT_EQ(location.count, truth.size()) << "rank " << location.rank;
        for (size_t k = 0; k < location.count; k++) {
            EXPECT_LE(std::llabs((long long)location.compensated[k] - (long long)truth[k].second), 1)
                << "rank " << location.rank << " instant " << k << " measured " << location.measured[k];
            // A call whose true duration is below its measured inside part.
            if (k > 0 && truth[k].second - truth[k - 1].second <= WAIT_SEND_NS &&
                location.measured[k] - location.measured[k - 1] > truth[k].second - truth[k - 1].second)
                short_calls++;
            checked++;
        }
    }
    EXPECT_GT(checked, 300u);
    EXPECT_GT(short_calls, 0u);
    Figures figures = true_figures(simulation_);
    for (int r = 0; r < RANKS; r++) {
        EXPECT_NEAR(c.rank_model_seconds[r], double(simulation_.injected(r)) / RESOLUTION, 1e-9) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].mpi_seconds, figures.mpi[r], 1e-7) << "rank " << r;
    }
    adt_report_free(profile);
}

// MPI_Comm_rank's time per call in a profile, seconds (-1: not there).
double comm_rank_call_seconds(const adt_report_profile *profile)
{
    for (size_t f = 0; f < profile->mpi_function_count; f++)
        if (std::string(profile->mpi_functions[f].name) == "MPI_Comm_rank")
            return profile->mpi_functions[f].seconds / double(profile->mpi_functions[f].calls);
    return -1;
}

// The costs per record kind (version 2 of the model): the short local
// call, whose adaptrace cost is half a point-to-point call's, comes out
// at its true 20 ns per call, every instant at its true time.
TEST_F(Compensation, ModelPerRecordKindGivesTheShortLocalCallItsTrueTime)
{
    write_summary(directory_.path(), {});
    adt_report_profile *profile = read(ADT_REPORT_COMPENSATE_MODEL);
    ASSERT_NE(profile, nullptr);
    EXPECT_EQ(profile->compensation.over_compensated, 0u);
    EXPECT_EQ(profile->compensation.causality_violations, 0u);
    EXPECT_NEAR(comm_rank_call_seconds(profile), COMM_RANK_NS * 1e-9, 1e-12);
    adt_report_free(profile);
}

// An archive written before the kinds (one "cost_mpi" for every MPI
// call) is still read, every MPI call taking that one row: here the
// point-to-point calls', twice the local call's cost, so that the cold
// MPI_Comm_rank calls are compensated below 0, counted as such, and their
// time and the instants after them are not the true ones. This is the
// model per gap class alone that issue #26 left: one cost for a short
// local call and a message's call.
TEST_F(Compensation, ModelOfOneKindForEveryMpiCallOverCompensatesTheShortLocalCall)
{
    write_summary(directory_.path(), {.one_mpi_kind = true});
    adt_report_profile *profile = read(ADT_REPORT_COMPENSATE_MODEL);
    ASSERT_NE(profile, nullptr);
    const adt_report_compensation &c = profile->compensation;
    EXPECT_EQ(c.locations_modelled, uint64_t(RANKS));
    EXPECT_GT(c.over_compensated, 0u);
    EXPECT_EQ(c.causality_violations, 0u);
    EXPECT_LT(comm_rank_call_seconds(profile), 0.5 * COMM_RANK_NS * 1e-9);
    size_t off = 0;
    for (size_t l = 0; l < c.location_count; l++) {
        auto truth = instants(int(c.locations[l].rank));
        ASSERT_EQ(c.locations[l].count, truth.size());
        for (size_t k = 0; k < c.locations[l].count; k++)
            off += std::llabs((long long)c.locations[l].compensated[k] - (long long)truth[k].second) > 1;
    }
    EXPECT_GT(off, 0u);
    adt_report_free(profile);
}

TEST_F(Compensation, MeasuredTimesAreNotTheTrueOnes)
{
    // The premise of the test above: the injected cost moves the figures.
    write_summary(directory_.path(), {});
    adt_report_profile *profile = read(ADT_REPORT_MEASURED);
    ASSERT_NE(profile, nullptr);
    Figures figures = true_figures(simulation_);
    for (int r = 0; r < RANKS; r++)
        EXPECT_GT(profile->ranks[r].span_seconds - figures.span[r], 1e-6) << "rank " << r;
    EXPECT_EQ(profile->compensation.mode, ADT_REPORT_MEASURED);
    adt_report_free(profile);
}

TEST_F(Compensation, TooLargeAModelOverCompensatesAndSaysSoKeepingCausality)
{
    write_summary(directory_.path(), {.factor = 3});
    adt_report_profile *profile = read(ADT_REPORT_COMPENSATE_MODEL);
    ASSERT_NE(profile, nullptr);
    const adt_report_compensation &c = profile->compensation;
    EXPECT_GT(c.over_compensated, 0u);
    EXPECT_GT(c.over_compensated_seconds, 0.0);
    EXPECT_EQ(c.causality_violations, 0u);
    for (size_t l = 0; l < c.location_count; l++)
        for (size_t k = 1; k < c.locations[l].count; k++)
            ASSERT_GE(c.locations[l].compensated[k], c.locations[l].compensated[k - 1]) << "instant " << k;
    adt_report_free(profile);
}

TEST_F(Compensation, ConstantModelIsNotExactWhereCostVariesWithTheGap)
{
    write_summary(directory_.path(), {});
    adt_report_profile *profile = read(ADT_REPORT_COMPENSATE_CONSTANT);
    ASSERT_NE(profile, nullptr);
    const adt_report_compensation &c = profile->compensation;
    EXPECT_EQ(c.causality_violations, 0u);
    Figures figures = true_figures(simulation_);
    double error = 0;
    for (int r = 0; r < RANKS; r++)
        error += std::fabs(profile->ranks[r].span_seconds - figures.span[r]);
    // The warmest class's cost for every event leaves most of the cold
    // events' cost in.
    EXPECT_GT(error, 1e-6);
    adt_report_free(profile);
}

TEST_F(Compensation, WrittenArchiveHoldsEveryRecordAtItsTrueTime)
{
    write_summary(directory_.path(), {});
    ScratchDirectory written("adt-compensation-archive");
    adt_report_error error{};
    adt_report_options options{};
    options.compensate = ADT_REPORT_COMPENSATE_MODEL;
    options.write_archive = written.path().c_str();
    adt_report_profile *profile = adt_report_read(directory_.path().c_str(), &options, &error);
    ASSERT_NE(profile, nullptr) << error.text;
    const adt_report_written_archive copy = profile->compensation.archive;
    EXPECT_TRUE(copy.written);
    EXPECT_EQ(copy.locations, uint64_t(RANKS));
    EXPECT_EQ(copy.clamped, 0u);
    adt_report_free(profile);
    // Every record of every rank, in its order and of its kind, at its
    // true time within 1 ns.
    ReadBack events = read_back(written.path());
    ASSERT_EQ(events.size(), size_t(RANKS));
    uint64_t total = 0;
    for (int r = 0; r < RANKS; r++) {
        const auto &records = simulation_.records(r);
        const auto &back = events[uint64_t(r)];
        ASSERT_EQ(back.size(), records.size()) << "rank " << r;
        for (size_t k = 0; k < records.size(); k++) {
            ASSERT_EQ(back[k].first, records[k].kind) << "rank " << r << " record " << k;
            EXPECT_LE(std::llabs((long long)back[k].second - (long long)records[k].truth), 1)
                << "rank " << r << " record " << k << " measured " << records[k].measured;
        }
        total += back.size();
    }
    EXPECT_EQ(total, copy.events);
    // Its report, not compensated again, has the true run's figures; and
    // compensating it again is refused.
    options = adt_report_options{};
    profile = adt_report_read(written.path().c_str(), &options, &error);
    ASSERT_NE(profile, nullptr) << error.text;
    Figures figures = true_figures(simulation_);
    for (int r = 0; r < RANKS; r++) {
        EXPECT_NEAR(profile->ranks[r].span_seconds, figures.span[r], 3e-9) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].mpi_seconds, figures.mpi[r], 1e-7) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].late_sender_seconds, figures.late_sender[r], 1e-7) << "rank " << r;
        EXPECT_NEAR(profile->ranks[r].collective_wait_seconds, figures.collective_wait[r], 1e-7) << "rank " << r;
    }
    adt_report_free(profile);
    options.compensate = ADT_REPORT_COMPENSATE_MODEL;
    EXPECT_EQ(adt_report_read(written.path().c_str(), &options, &error), nullptr);
    EXPECT_NE(std::string(error.text).find("compensated already"), std::string::npos) << error.text;
}

TEST_F(Compensation, ArchiveThatCannotBeWrittenFailsTheReadWithItsReason)
{
    write_summary(directory_.path(), {});
    adt_report_error error{};
    adt_report_options options{};
    options.compensate = ADT_REPORT_COMPENSATE_MODEL;
    std::string target = directory_.path() + "/summary.json/compensated"; // under a regular file
    options.write_archive = target.c_str();
    EXPECT_EQ(adt_report_read(directory_.path().c_str(), &options, &error), nullptr);
    EXPECT_FALSE(error.damaged);
    EXPECT_NE(std::string(error.text).find("cannot write the compensated archive " + target), std::string::npos)
        << error.text;
}

TEST_F(Compensation, ReportStatesTheRunsMeasurementCostPerRankCompensatedOrNot)
{
    write_summary(directory_.path(), {});
    for (adt_report_compensation_mode mode : {ADT_REPORT_MEASURED, ADT_REPORT_COMPENSATE_MODEL}) {
        adt_report_profile *profile = read(mode);
        ASSERT_NE(profile, nullptr);
        ASSERT_EQ(profile->measurement_cost.rank_count, size_t(RANKS));
        for (int r = 0; r < RANKS; r++) {
            EXPECT_DOUBLE_EQ(profile->measurement_cost.seconds[r], 0.001 * (r + 1)) << "rank " << r;
            EXPECT_DOUBLE_EQ(profile->measurement_cost.share[r], 0.01 * (r + 1)) << "rank " << r;
        }
        char *text = nullptr;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        adt_report_print_text(profile, out);
        fclose(out);
        EXPECT_NE(std::string(text).find("rank 1 0.002000 s (2.000 %), rank 2 0.003000 s (3.000 %)"),
                  std::string::npos)
            << text;
        free(text);
        adt_report_free(profile);
    }
    // A summary whose lists are not one per rank states none.
    std::ofstream(directory_.path() + "/summary.json")
        << "{\n  \"measurement_cost_per_rank_s\": [0.001, 0.002],\n  \"measurement_share_per_rank\": [0.01, 0.02]\n}\n";
    adt_report_profile *profile = read(ADT_REPORT_MEASURED);
    ASSERT_NE(profile, nullptr);
    EXPECT_EQ(profile->measurement_cost.rank_count, 0u);
    adt_report_free(profile);
}

TEST_F(Compensation, ArchiveWithoutACostModelIsRefusedWithItsReason)
{
    std::ofstream(directory_.path() + "/summary.json") << "{\n  \"per_location\": [\n  ]\n}\n";
    adt_report_error error{};
    adt_report_options options{};
    options.compensate = ADT_REPORT_COMPENSATE_MODEL;
    EXPECT_EQ(adt_report_read(directory_.path().c_str(), &options, &error), nullptr);
    EXPECT_NE(std::string(error.text).find("needs a cost model"), std::string::npos) << error.text;
}

} // namespace

// The archive of a 4-rank run whose clock synchronisation measured rank 2
// 150 µs late (on one host, where all ranks read the same clock, the
// ping-pong's noise makes such offsets: docs/compensation.md): as read,
// rank 3 receives rank 2's messages before they are sent. Replayed in
// measured time order, the compensation met those receives before their
// sends, left them unresolved and counted them as its own violations;
// replayed send before receive, it puts every receive after its send and
// counts the archive's own violations apart.
TEST_F(Compensation, ReceivesTheClocksPutBeforeTheirSendsComeAfterThemCountedApart)
{
    ScratchDirectory skewed("adt-compensation-skewed");
    const int64_t clock_offsets[RANKS] = {0, 0, 150000, 0};
    write_archive(skewed.path(), simulation_, clock_offsets);
    ASSERT_FALSE(HasFatalFailure());
    write_summary(skewed.path(), {});
    adt_report_error error{};
    adt_report_options options{};
    options.compensate = ADT_REPORT_COMPENSATE_MODEL;
    options.keep_compensated_times = true;
    adt_report_profile *profile = adt_report_read(skewed.path().c_str(), &options, &error);
    ASSERT_NE(profile, nullptr) << error.text;
    const adt_report_compensation &c = profile->compensation;
    EXPECT_GT(c.measured_violations, 0u);
    EXPECT_EQ(c.measured_violations_left, 0u);
    EXPECT_EQ(c.causality_violations, 0u);
    EXPECT_EQ(c.unresolved, 0u);
    EXPECT_GT(c.receive_floors + c.waits_inherited, 0u);
    ASSERT_EQ(c.location_count, size_t(RANKS));
    for (size_t l = 0; l < c.location_count; l++)
        for (size_t k = 1; k < c.locations[l].count; k++)
            ASSERT_GE(c.locations[l].compensated[k], c.locations[l].compensated[k - 1]) << "instant " << k;
    adt_report_free(profile);
    // The same run with its clocks agreeing has none in the archive.
    write_summary(directory_.path(), {});
    profile = read(ADT_REPORT_COMPENSATE_MODEL);
    ASSERT_NE(profile, nullptr);
    EXPECT_EQ(profile->compensation.measured_violations, 0u);
    EXPECT_EQ(profile->compensation.causality_violations, 0u);
    adt_report_free(profile);
}
