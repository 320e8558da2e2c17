// Checks an OTF2 archive written by adaptrace for a run of one of the
// whole-run test programs (families.c, families.f90) against what the
// program says it did (EXPECT_DIR/rank.<r>.txt, format in families.c).
//
// usage: adaptrace-mpi-trace-check --archive DIR --expect DIR --api FILE [gtest options]
//   FILE is mpi-events/mpi.api: a call is expected in the trace exactly when
//   its function is listed there.
#include <gtest/gtest.h>

#include <otf2/otf2.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "trace_model.h"

namespace adaptrace_test {
namespace {

struct Expectation {
    enum Kind { call, members, intercomm, window, rma, group } kind;
    std::string name;                // call; rma: put, get or atomic
    std::vector<uint32_t> local;     // members, intercomm, window, group; rma: target sent received window
    std::vector<uint32_t> remote;    // intercomm
};

struct Options {
    std::string archive;
    std::string expect;
    std::string api;
};

Options options;

std::string lower(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

bool is_mpi(const std::string &name) { return lower(name).rfind("mpi_", 0) == 0; }

std::vector<uint32_t> parse_ranks(std::istringstream &in)
{
    std::vector<uint32_t> ranks;
    std::string word;
    while (in >> word && word != "|")
        ranks.push_back(static_cast<uint32_t>(std::stoul(word)));
    return ranks;
}

std::map<uint32_t, std::vector<Expectation>> read_expectations(const std::string &directory)
{
    std::map<uint32_t, std::vector<Expectation>> by_rank;
    for (uint32_t rank = 0;; rank++) {
        std::ifstream file(directory + "/rank." + std::to_string(rank) + ".txt");
        if (!file)
            break;
        std::string line;
        while (std::getline(file, line)) {
            std::istringstream in(line);
            std::string keyword;
            in >> keyword;
            Expectation e{Expectation::call, {}, {}, {}};
            if (keyword == "call") {
                in >> e.name;
                e.name = lower(e.name);
            } else if (keyword == "members") {
                e.kind = Expectation::members;
                e.local = parse_ranks(in);
            } else if (keyword == "window" || keyword == "group") {
                e.kind = keyword == "window" ? Expectation::window : Expectation::group;
                e.local = parse_ranks(in);
            } else if (keyword == "rma") {
                e.kind = Expectation::rma;
                in >> e.name;
                e.local = parse_ranks(in);
            } else if (keyword == "intercomm") {
                e.kind = Expectation::intercomm;
                e.local = parse_ranks(in);
                e.remote = parse_ranks(in);
            } else {
                ADD_FAILURE() << directory << "/rank." << rank << ".txt: unknown line '" << line
                              << "'";
                continue;
            }
            by_rank[rank].push_back(e);
        }
    }
    return by_rank;
}

std::set<std::string> read_wrapped_functions(const std::string &api_path)
{
    std::set<std::string> names;
    std::ifstream file(api_path);
    std::string line;
    while (std::getline(file, line)) {
        std::istringstream in(line);
        std::string name;
        if (in >> name && is_mpi(name))
            names.insert(lower(name));
    }
    return names;
}

// Everything the tests share, loaded once.
struct Fixture {
    Trace trace;
    std::string error;
    bool loaded = false;
    std::map<uint32_t, std::vector<Expectation>> expected;
    std::set<std::string> wrapped;
};

const Fixture &fixture()
{
    static Fixture f = [] {
        Fixture loaded;
        loaded.loaded = read_trace(options.archive + "/traces.otf2", loaded.trace, loaded.error);
        loaded.expected = read_expectations(options.expect);
        loaded.wrapped = read_wrapped_functions(options.api);
        return loaded;
    }();
    return f;
}

class TraceCheck : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_TRUE(fixture().loaded) << fixture().error;
        ASSERT_FALSE(fixture().expected.empty()) << "no " << options.expect << "/rank.0.txt";
        ASSERT_FALSE(fixture().wrapped.empty()) << "no MPI functions in " << options.api;
    }
    const Trace &trace() const { return fixture().trace; }
    // The MPI calls of a location, in order.
    std::vector<const Call *> mpi_calls(uint64_t location) const
    {
        std::vector<const Call *> calls;
        auto found = trace().by_location.find(location);
        if (found == trace().by_location.end())
            return calls;
        for (const Call &call : found->second.calls)
            if (is_mpi(call.name))
                calls.push_back(&call);
        return calls;
    }
    // Calls check(rank, note, call) for every note of one of kinds, with
    // the call the program made last before writing it (nullptr when the
    // trace ends before that call).
    template <typename Check>
    void for_each_note(std::initializer_list<Expectation::Kind> kinds, Check check) const
    {
        for (const auto &[rank, expectations] : fixture().expected) {
            std::vector<const Call *> calls = mpi_calls(rank);
            size_t next_call = 0;
            const Call *last = nullptr;
            for (const Expectation &e : expectations) {
                if (e.kind == Expectation::call) {
                    if (fixture().wrapped.count(e.name))
                        last = next_call < calls.size() ? calls[next_call++] : nullptr;
                } else if (std::find(kinds.begin(), kinds.end(), e.kind) != kinds.end()) {
                    check(rank, e, last);
                }
            }
        }
    }
    // The program's calls that the trace must show, as lower-case names.
    std::vector<std::string> expected_calls(uint32_t rank) const
    {
        std::vector<std::string> names;
        for (const Expectation &e : fixture().expected.at(rank))
            if (e.kind == Expectation::call && fixture().wrapped.count(e.name))
                names.push_back(e.name);
        return names;
    }
};

std::string context(const std::vector<std::string> &names, size_t at)
{
    std::string text;
    size_t first = at >= 3 ? at - 3 : 0;
    for (size_t i = first; i < names.size() && i < at + 4; i++)
        text += (i == at ? " [" : " ") + names[i] + (i == at ? "]" : "");
    return text;
}

TEST_F(TraceCheck, OneLocationPerRankNamedByWorldRank)
{
    const size_t ranks = fixture().expected.size();
    std::vector<uint64_t> expected_locations;
    for (uint64_t rank = 0; rank < ranks; rank++)
        expected_locations.push_back(rank);
    std::vector<uint64_t> locations = trace().locations;
    std::sort(locations.begin(), locations.end());
    EXPECT_EQ(locations, expected_locations);
    EXPECT_EQ(trace().comm_locations, expected_locations)
        << "COMM_LOCATIONS member i must be the location of world rank i";
}

TEST_F(TraceCheck, RegionsNestAndEveryRegionIsLeft)
{
    for (const auto &[location, lt] : trace().by_location)
        for (const std::string &error : lt.errors)
            ADD_FAILURE() << "location " << location << ": " << error;
    EXPECT_NE(trace().calling_context_events, trace().enter_leave_events)
        << "a trace has either Enter/Leave or CallingContextEnter/Leave events, exactly one kind";
}

TEST_F(TraceCheck, EveryCallOnItsRankInOrder)
{
    for (const auto &[rank, ignored] : fixture().expected) {
        std::vector<std::string> expected = expected_calls(rank);
        std::vector<std::string> actual;
        for (const Call *call : mpi_calls(rank))
            actual.push_back(lower(call->name));
        // MPI_Finalize writes the trace, so the runtime may end it before
        // MPI_Finalize's own region.
        if (!expected.empty() && expected.back() == "mpi_finalize" &&
            (actual.empty() || actual.back() != "mpi_finalize"))
            expected.pop_back();
        size_t common = std::min(expected.size(), actual.size());
        size_t at = 0;
        while (at < common && expected[at] == actual[at])
            at++;
        EXPECT_TRUE(at == expected.size() && at == actual.size())
            << "rank " << rank << ": " << expected.size() << " calls expected, " << actual.size()
            << " in the trace; first difference at call " << at
            << "\n  expected:" << context(expected, at) << "\n  traced:  " << context(actual, at);
    }
}

TEST_F(TraceCheck, EverySendMatchesOneReceiveWithEqualCommTagAndBytes)
{
    // (sender location, receiver location, comm, tag) -> (order, bytes),
    // ordered as MPI matches them: by when the send or receive was posted.
    using Key = std::tuple<uint64_t, uint64_t, uint32_t, uint32_t>;
    std::map<Key, std::vector<std::pair<uint64_t, uint64_t>>> sends, receives;
    size_t messages = 0;
    for (const auto &[location, lt] : trace().by_location) {
        std::map<uint64_t, uint64_t> irecv_posted;
        for (const Call &call : lt.calls) {
            for (const Event &event : call.events) {
                if (event.kind == EventKind::irecv_request)
                    irecv_posted[*event.request] = event.position;
                if (event.kind != EventKind::send && event.kind != EventKind::receive)
                    continue;
                std::optional<uint64_t> peer = trace().location_of(event.comm, event.peer, location);
                if (!peer) {
                    ADD_FAILURE() << "location " << location << ", " << call.name << ": peer rank "
                                  << event.peer << " of comm " << event.comm
                                  << " names no location";
                    continue;
                }
                if (event.kind == EventKind::send) {
                    sends[{location, *peer, event.comm, event.tag}].push_back(
                        {event.position, event.bytes});
                    messages++;
                } else {
                    uint64_t posted = event.position;
                    if (event.request && irecv_posted.count(*event.request))
                        posted = irecv_posted[*event.request];
                    receives[{*peer, location, event.comm, event.tag}].push_back(
                        {posted, event.bytes});
                }
            }
        }
    }
    EXPECT_GT(messages, 0u);
    std::set<Key> keys;
    for (const auto &entry : sends)
        keys.insert(entry.first);
    for (const auto &entry : receives)
        keys.insert(entry.first);
    for (const Key &key : keys) {
        auto bytes_in_order = [](std::vector<std::pair<uint64_t, uint64_t>> list) {
            std::sort(list.begin(), list.end());
            std::vector<uint64_t> bytes;
            for (const auto &item : list)
                bytes.push_back(item.second);
            return bytes;
        };
        EXPECT_EQ(bytes_in_order(sends[key]), bytes_in_order(receives[key]))
            << "message sizes from location " << std::get<0>(key) << " to location "
            << std::get<1>(key) << " on comm " << std::get<2>(key) << " with tag "
            << std::get<3>(key) << " (sent, then received)";
    }
}

bool completes_requests(const std::string &call)
{
    std::string name = lower(call);
    return name.rfind("mpi_wait", 0) == 0 || name.rfind("mpi_test", 0) == 0 ||
           name == "mpi_cancel" || name == "mpi_request_free";
}

TEST_F(TraceCheck, EveryNonblockingRequestCompletesExactlyOnce)
{
    enum class Pending { isend, irecv, collective };
    size_t requests = 0;
    for (const auto &[location, lt] : trace().by_location) {
        std::map<uint64_t, Pending> in_flight;
        auto start = [&](const Call &call, uint64_t request, Pending kind) {
            EXPECT_EQ(in_flight.count(request), 0u)
                << "location " << location << ", " << call.name << ": request " << request
                << " started while still in flight";
            in_flight[request] = kind;
            requests++;
        };
        auto finish = [&](const Call &call, uint64_t request, std::optional<Pending> kind) {
            auto found = in_flight.find(request);
            bool known = found != in_flight.end() && (!kind || found->second == *kind);
            EXPECT_TRUE(known) << "location " << location << ", " << call.name
                               << ": completion of request " << request << " that is not in flight";
            EXPECT_TRUE(completes_requests(call.name))
                << "location " << location << ": request " << request << " completed in "
                << call.name;
            if (known)
                in_flight.erase(found);
        };
        for (const Call &call : lt.calls) {
            for (const Event &event : call.events) {
                switch (event.kind) {
                case EventKind::send:
                    if (event.request)
                        start(call, *event.request, Pending::isend);
                    break;
                case EventKind::irecv_request:
                    start(call, *event.request, Pending::irecv);
                    break;
                case EventKind::nb_collective_request:
                    start(call, *event.request, Pending::collective);
                    break;
                case EventKind::isend_complete:
                    finish(call, *event.request, Pending::isend);
                    break;
                case EventKind::receive:
                    if (event.request)
                        finish(call, *event.request, Pending::irecv);
                    break;
                case EventKind::nb_collective_complete:
                    finish(call, *event.request, Pending::collective);
                    break;
                case EventKind::request_cancelled:
                    finish(call, *event.request, std::nullopt);
                    break;
                case EventKind::request_test:
                    EXPECT_EQ(in_flight.count(*event.request), 1u)
                        << "location " << location << ", " << call.name << ": test of request "
                        << *event.request << " that is not in flight";
                    break;
                default:
                    break;
                }
            }
        }
        for (const auto &[request, kind] : in_flight)
            ADD_FAILURE() << "location " << location << ": request " << request << " (kind "
                          << static_cast<int>(kind) << ") never completed";
    }
    EXPECT_GT(requests, 0u);
}

// The OTF2 operation a collective MPI function must record.
std::optional<OTF2_CollectiveOp> operation_of(const std::string &call)
{
    static const std::map<std::string, OTF2_CollectiveOp> operations = {
        {"barrier", OTF2_COLLECTIVE_OP_BARRIER},
        {"bcast", OTF2_COLLECTIVE_OP_BCAST},
        {"gather", OTF2_COLLECTIVE_OP_GATHER},
        {"gatherv", OTF2_COLLECTIVE_OP_GATHERV},
        {"scatter", OTF2_COLLECTIVE_OP_SCATTER},
        {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
        {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
        {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
        {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
        {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
        {"alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
        {"reduce", OTF2_COLLECTIVE_OP_REDUCE},
        {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
        {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
        {"reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
        {"scan", OTF2_COLLECTIVE_OP_SCAN},
        {"exscan", OTF2_COLLECTIVE_OP_EXSCAN},
    };
    std::string name = lower(call).substr(4);
    auto found = operations.find(name);
    if (found == operations.end() && !name.empty() && name[0] == 'i')
        found = operations.find(name.substr(1));
    if (found == operations.end())
        return std::nullopt;
    return found->second;
}

TEST_F(TraceCheck, CollectivesAppearOnAllMembersWithSameOperationAndRoot)
{
    struct Instance {
        uint64_t order;
        std::string call;
        uint32_t op, comm, root;
        uint64_t sent, received;
    };
    std::map<uint64_t, std::vector<Instance>> by_location;
    std::set<uint32_t> comms;
    for (const auto &[location, lt] : trace().by_location) {
        std::map<uint64_t, std::pair<uint64_t, std::string>> initiated;
        for (const Call &call : lt.calls) {
            bool begun = false;
            for (const Event &event : call.events) {
                if (event.kind == EventKind::collective_begin)
                    begun = true;
                if (event.kind == EventKind::nb_collective_request)
                    initiated[*event.request] = {event.position, call.name};
                if (event.kind != EventKind::collective_end &&
                    event.kind != EventKind::nb_collective_complete)
                    continue;
                Instance instance{event.position, call.name,       event.collective_op,
                                  event.comm,     event.root,      event.sent,
                                  event.received};
                if (event.kind == EventKind::collective_end) {
                    EXPECT_TRUE(begun) << "location " << location << ", " << call.name
                                       << ": MpiCollectiveEnd without MpiCollectiveBegin";
                } else if (initiated.count(*event.request)) {
                    instance.order = initiated[*event.request].first;
                    instance.call = initiated[*event.request].second;
                }
                std::optional<OTF2_CollectiveOp> op = operation_of(instance.call);
                EXPECT_TRUE(op && *op == instance.op)
                    << "location " << location << ": " << instance.call
                    << " recorded collective operation " << instance.op;
                by_location[location].push_back(instance);
                comms.insert(event.comm);
            }
        }
        std::sort(by_location[location].begin(), by_location[location].end(),
                  [](const Instance &a, const Instance &b) { return a.order < b.order; });
    }
    ASSERT_FALSE(comms.empty());
    for (uint32_t comm : comms) {
        auto definition = trace().comms.find(comm);
        ASSERT_NE(definition, trace().comms.end()) << "collective on undefined comm " << comm;
        if (definition->second.inter)
            continue;
        std::vector<uint64_t> members;
        for (uint64_t location : trace().locations) {
            std::optional<std::vector<uint32_t>> world =
                trace().world_members(definition->second.group, location);
            ASSERT_TRUE(world) << "comm " << comm << " has no COMM_GROUP/COMM_SELF group";
            std::optional<uint32_t> me = trace().world_rank_of(location);
            if (me && std::find(world->begin(), world->end(), *me) != world->end())
                members.push_back(location);
        }
        std::map<uint64_t, std::vector<Instance>> on_comm;
        for (const auto &[location, instances] : by_location)
            for (const Instance &instance : instances)
                if (instance.comm == comm)
                    on_comm[location].push_back(instance);
        for (const auto &[location, instances] : on_comm)
            EXPECT_NE(std::find(members.begin(), members.end(), location), members.end())
                << "location " << location << " recorded " << instances.size()
                << " collectives on comm " << comm << " without being a member";
        // A self-like comm has one member per location; compare within it only.
        if (trace().groups.at(definition->second.group).type == OTF2_GROUP_TYPE_COMM_SELF)
            continue;
        const std::vector<Instance> &reference = on_comm[members.front()];
        for (uint64_t member : members) {
            const std::vector<Instance> &mine = on_comm[member];
            ASSERT_EQ(mine.size(), reference.size())
                << "comm " << comm << ": location " << member << " has " << mine.size()
                << " collectives, location " << members.front() << " has " << reference.size();
        }
        for (size_t i = 0; i < reference.size(); i++) {
            uint64_t sent = 0, received = 0;
            for (uint64_t member : members) {
                const Instance &instance = on_comm[member][i];
                EXPECT_EQ(instance.op, reference[i].op)
                    << "comm " << comm << ", collective " << i << " on location " << member;
                EXPECT_EQ(instance.root, reference[i].root)
                    << "comm " << comm << ", " << instance.call << " on location " << member;
                sent += instance.sent;
                received += instance.received;
            }
            EXPECT_TRUE(reference[i].root == OTF2_COLLECTIVE_ROOT_NONE ||
                        reference[i].root < members.size())
                << "comm " << comm << ", " << reference[i].call << ": root " << reference[i].root;
            EXPECT_EQ(sent, received)
                << "comm " << comm << ", " << reference[i].call
                << ": bytes sent by all members must equal bytes received by all members";
            if (reference[i].op != OTF2_COLLECTIVE_OP_BARRIER) {
                EXPECT_GT(sent, 0u) << "comm " << comm << ", " << reference[i].call;
            }
        }
    }
}

// The communicator of the first message or collective event of a call.
std::optional<uint32_t> comm_of(const Call &call)
{
    for (const Event &event : call.events)
        if (event.kind == EventKind::send || event.kind == EventKind::receive ||
            event.kind == EventKind::collective_end)
            return event.comm;
    return std::nullopt;
}

TEST_F(TraceCheck, CommunicatorsHaveTheMembersTheProgramBuilt)
{
    size_t checked = 0;
    for_each_note({Expectation::members, Expectation::intercomm}, [&](uint32_t rank, const Expectation &e,
                                                                   const Call *last) {
        ASSERT_NE(last, nullptr) << "rank " << rank << ": trace ends before a checked call";
        std::optional<uint32_t> comm = comm_of(*last);
        ASSERT_TRUE(comm) << "rank " << rank << ", " << last->name
                          << ": no message or collective event to name the communicator";
        const Comm &definition = trace().comms.at(*comm);
        checked++;
        if (e.kind == Expectation::members) {
            ASSERT_FALSE(definition.inter) << "rank " << rank << ", " << last->name;
            EXPECT_EQ(trace().world_members(definition.group, rank), e.local)
                << "rank " << rank << ", " << last->name << " on comm " << *comm;
            return;
        }
        ASSERT_TRUE(definition.inter)
            << "rank " << rank << ", " << last->name << ": comm " << *comm
            << " is not an InterComm";
        std::optional<std::vector<uint32_t>> a = trace().world_members(definition.group_a, rank);
        std::optional<std::vector<uint32_t>> b = trace().world_members(definition.group_b, rank);
        bool a_is_local = a && std::find(a->begin(), a->end(), rank) != a->end();
        EXPECT_EQ(a_is_local ? a : b, e.local) << "rank " << rank << ": local group";
        EXPECT_EQ(a_is_local ? b : a, e.remote) << "rank " << rank << ": remote group";
    });
    EXPECT_GT(checked, 0u);
}

// ---- one-sided communication (rma.c) ------------------------------------

bool is_rma_operation(EventKind kind)
{
    return kind == EventKind::rma_put || kind == EventKind::rma_get || kind == EventKind::rma_atomic;
}

const char *operation_name(EventKind kind)
{
    return kind == EventKind::rma_put ? "put" : kind == EventKind::rma_get ? "get" : "atomic";
}

// The windows a location created, in creation order.
std::vector<uint32_t> windows_created(const LocationTrace &lt)
{
    std::vector<uint32_t> windows;
    for (const Call &call : lt.calls)
        for (const Event &event : call.events)
            if (event.kind == EventKind::rma_win_create)
                windows.push_back(event.win);
    return windows;
}

TEST_F(TraceCheck, RmaWindowsAndOperationsAreTheOnesTheProgramMade)
{
    size_t operations = 0, windows = 0;
    for_each_note({Expectation::window, Expectation::rma, Expectation::group}, [&](uint32_t rank,
                                                                               const Expectation &e,
                                                                               const Call *last) {
        std::vector<uint32_t> created = windows_created(trace().by_location.at(rank));
        ASSERT_NE(last, nullptr) << "rank " << rank << ": trace ends before a checked call";
        std::vector<const Event *> found;
        for (const Event &event : last->events)
            if ((e.kind == Expectation::window && event.kind == EventKind::rma_win_create) ||
                (e.kind == Expectation::group && event.kind == EventKind::rma_group_sync) ||
                (e.kind == Expectation::rma && is_rma_operation(event.kind)))
                found.push_back(&event);
        ASSERT_EQ(found.size(), 1u) << "rank " << rank << ", " << last->name
                                    << ": one window creation, group synchronisation or RMA operation";
        const Event &event = *found.front();
        if (e.kind == Expectation::window) {
            auto comm = trace().rma_win_comms.find(event.win);
            ASSERT_NE(comm, trace().rma_win_comms.end()) << "rank " << rank << ": RmaWin " << event.win;
            EXPECT_EQ(trace().world_members(trace().comms.at(comm->second).group, rank), e.local)
                << "rank " << rank << ", " << last->name << ": the window's group";
            windows++;
        } else if (e.kind == Expectation::group) {
            EXPECT_EQ(trace().world_members(event.group, rank), e.local)
                << "rank " << rank << ", " << last->name << ": the epoch's group";
        } else {
            ASSERT_EQ(e.local.size(), 4u);
            EXPECT_EQ(operation_name(event.kind), e.name) << "rank " << rank << ", " << last->name;
            EXPECT_EQ(event.peer, e.local[0]) << "rank " << rank << ", " << last->name << ": target";
            EXPECT_EQ(event.sent, e.local[1]) << "rank " << rank << ", " << last->name << ": bytes sent";
            EXPECT_EQ(event.received, e.local[2]) << "rank " << rank << ", " << last->name << ": bytes received";
            ASSERT_LT(e.local[3], created.size()) << "rank " << rank << ": window " << e.local[3];
            EXPECT_EQ(event.win, created[e.local[3]]) << "rank " << rank << ", " << last->name << ": window";
            operations++;
        }
    });
    EXPECT_GT(windows, 0u);
    EXPECT_GT(operations, 0u);
}

// Every RMA event happens between the RmaWinCreate and the RmaWinDestroy
// of its window on its location, and these two each happen once, inside
// RmaCollectiveBegin/End of the creating or freeing call; the members of
// the window's group are exactly the locations that created it.
TEST_F(TraceCheck, RmaWindowsLiveBetweenCollectiveCreateAndDestroy)
{
    std::map<uint32_t, std::set<uint64_t>> creators;
    for (const auto &[location, lt] : trace().by_location) {
        std::set<uint32_t> alive, ended;
        for (const Call &call : lt.calls) {
            bool begun = false;
            std::optional<uint32_t> created, destroyed;
            for (const Event &event : call.events) {
                switch (event.kind) {
                case EventKind::rma_collective_begin:
                    EXPECT_FALSE(begun) << "location " << location << ", " << call.name;
                    begun = true;
                    break;
                case EventKind::rma_win_create:
                    EXPECT_TRUE(begun && !alive.count(event.win) && !ended.count(event.win))
                        << "location " << location << ", " << call.name << ": window " << event.win;
                    alive.insert(event.win);
                    creators[event.win].insert(location);
                    created = event.win;
                    break;
                case EventKind::rma_win_destroy:
                    EXPECT_TRUE(begun && alive.count(event.win))
                        << "location " << location << ", " << call.name << ": window " << event.win;
                    alive.erase(event.win);
                    ended.insert(event.win);
                    destroyed = event.win;
                    break;
                case EventKind::rma_collective_end: {
                    EXPECT_TRUE(begun) << "location " << location << ", " << call.name;
                    begun = false;
                    uint32_t op = event.collective_op;
                    uint32_t expected[2] = { OTF2_COLLECTIVE_OP_BARRIER, OTF2_COLLECTIVE_OP_BARRIER };
                    if (created) {
                        expected[0] = OTF2_COLLECTIVE_OP_CREATE_HANDLE;
                        expected[1] = OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE;
                    } else if (destroyed) {
                        expected[0] = OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
                        expected[1] = OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE;
                    }
                    EXPECT_TRUE(op == expected[0] || op == expected[1])
                        << "location " << location << ", " << call.name << ": collective operation " << op;
                    EXPECT_TRUE(alive.count(event.win) || destroyed == event.win)
                        << "location " << location << ", " << call.name << ": window " << event.win;
                    break;
                }
                default:
                    if (event.kind >= EventKind::rma_group_sync) {
                        EXPECT_TRUE(alive.count(event.win))
                            << "location " << location << ", " << call.name << ": RMA event on window "
                            << event.win << " outside its life";
                    }
                    break;
                }
            }
            EXPECT_FALSE(begun) << "location " << location << ", " << call.name << ": RmaCollectiveBegin without End";
        }
        EXPECT_TRUE(alive.empty()) << "location " << location << ": " << alive.size() << " windows never destroyed";
    }
    ASSERT_FALSE(creators.empty());
    for (const auto &[win, locations] : creators) {
        uint32_t comm = trace().rma_win_comms.at(win);
        std::set<uint64_t> members;
        for (uint64_t location : trace().locations) {
            std::optional<std::vector<uint32_t>> world = trace().world_members(trace().comms.at(comm).group, location);
            ASSERT_TRUE(world) << "window " << win;
            for (uint32_t rank : *world)
                members.insert(trace().comm_locations.at(rank));
        }
        EXPECT_EQ(locations, members) << "window " << win << ": its creators and its group";
    }
}

bool synchronises_rma(const std::string &call)
{
    std::string name = lower(call);
    return name.rfind("mpi_win_", 0) == 0 || name.rfind("mpi_wait", 0) == 0 || name.rfind("mpi_test", 0) == 0;
}

// Every operation's matching id ends exactly once locally (blocking in a
// synchronisation call, or non-blocking in the completion of its request),
// at most once at the target and never before the local end; operations
// sharing an id share window and target; locks requested are released.
TEST_F(TraceCheck, EveryRmaOperationCompletesOnceAndEveryLockIsReleased)
{
    size_t completed = 0;
    for (const auto &[location, lt] : trace().by_location) {
        struct Pending {
            uint32_t win, target;
            bool local = false, remote = false;
        };
        std::map<uint64_t, Pending> pending;
        std::set<std::pair<uint32_t, uint32_t>> locked;
        for (const Call &call : lt.calls) {
            for (const Event &event : call.events) {
                std::string where = "location " + std::to_string(location) + ", " + call.name;
                if (is_rma_operation(event.kind)) {
                    auto found = pending.find(*event.request);
                    if (found == pending.end()) {
                        pending[*event.request] = Pending{event.win, event.peer};
                    } else {
                        EXPECT_FALSE(found->second.local) << where << ": operation joins id " << *event.request
                                                          << " that was completed";
                        EXPECT_EQ(found->second.win, event.win) << where;
                        EXPECT_EQ(found->second.target, event.peer) << where;
                    }
                    continue;
                }
                bool local = event.kind == EventKind::rma_complete_blocking ||
                             event.kind == EventKind::rma_complete_nonblocking;
                if (local || event.kind == EventKind::rma_complete_remote || event.kind == EventKind::rma_op_test) {
                    auto found = pending.find(*event.request);
                    ASSERT_NE(found, pending.end()) << where << ": completion of unknown id " << *event.request;
                    EXPECT_EQ(found->second.win, event.win) << where;
                    EXPECT_TRUE(synchronises_rma(call.name)) << where << ": completion here";
                    if (local) {
                        EXPECT_FALSE(found->second.local) << where << ": id " << *event.request << " ended twice";
                        found->second.local = true;
                        completed++;
                    } else if (event.kind == EventKind::rma_complete_remote) {
                        EXPECT_TRUE(found->second.local && !found->second.remote)
                            << where << ": remote completion of id " << *event.request;
                        found->second.remote = true;
                    } else {
                        EXPECT_FALSE(found->second.local) << where << ": test of completed id " << *event.request;
                    }
                }
                if (event.kind == EventKind::rma_request_lock) {
                    EXPECT_TRUE(locked.insert({event.win, event.peer}).second) << where << ": locked twice";
                    EXPECT_EQ(lower(call.name).rfind("mpi_win_lock", 0), 0u) << where;
                }
                if (event.kind == EventKind::rma_release_lock) {
                    EXPECT_EQ(locked.erase({event.win, event.peer}), 1u) << where << ": release without lock";
                    EXPECT_EQ(lower(call.name).rfind("mpi_win_unlock", 0), 0u) << where;
                }
            }
        }
        for (const auto &[id, state] : pending)
            EXPECT_TRUE(state.local) << "location " << location << ": RMA operation " << id << " never completed";
        EXPECT_TRUE(locked.empty()) << "location " << location << ": " << locked.size() << " locks never released";
    }
    EXPECT_GT(completed, 0u);
}

}  // namespace
}  // namespace adaptrace_test

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    using adaptrace_test::options;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string flag = argv[i];
        if (flag == "--archive")
            options.archive = argv[i + 1];
        else if (flag == "--expect")
            options.expect = argv[i + 1];
        else if (flag == "--api")
            options.api = argv[i + 1];
        else {
            fprintf(stderr, "adaptrace-mpi-trace-check: unknown option '%s' (accepted: --archive DIR "
                            "--expect DIR --api FILE)\n", argv[i]);
            return 2;
        }
    }
    if (options.archive.empty() || options.expect.empty() || options.api.empty()) {
        fprintf(stderr, "usage: %s --archive DIR --expect DIR --api FILE [gtest options]\n", argv[0]);
        return 2;
    }
    return RUN_ALL_TESTS();
}
