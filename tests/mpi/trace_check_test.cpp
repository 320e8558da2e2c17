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
    enum Kind { call, members, intercomm } kind;
    std::string name;                // call
    std::vector<uint32_t> local;     // members, intercomm
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
    for (const auto &[rank, expectations] : fixture().expected) {
        std::vector<const Call *> calls = mpi_calls(rank);
        size_t next_call = 0;
        const Call *last = nullptr;
        for (const Expectation &e : expectations) {
            if (e.kind == Expectation::call) {
                if (fixture().wrapped.count(e.name))
                    last = next_call < calls.size() ? calls[next_call++] : nullptr;
                continue;
            }
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
                continue;
            }
            ASSERT_TRUE(definition.inter)
                << "rank " << rank << ", " << last->name << ": comm " << *comm
                << " is not an InterComm";
            std::optional<std::vector<uint32_t>> a = trace().world_members(definition.group_a, rank);
            std::optional<std::vector<uint32_t>> b = trace().world_members(definition.group_b, rank);
            bool a_is_local = a && std::find(a->begin(), a->end(), rank) != a->end();
            EXPECT_EQ(a_is_local ? a : b, e.local) << "rank " << rank << ": local group";
            EXPECT_EQ(a_is_local ? b : a, e.remote) << "rank " << rank << ": remote group";
        }
    }
    EXPECT_GT(checked, 0u);
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
