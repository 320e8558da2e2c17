// Multi-rank writer test, run under mpirun: every rank records synthetic
// data with partly shared, partly rank-specific definitions registered in
// different orders, the archive is written collectively over
// adt_collectives_mpi_create, and rank 0 reads it back and checks the
// unified communicators, regions, calling contexts and events.
// Exit status 0 = all checks passed on all ranks.
#include <mpi.h>

#include <cstdio>
#include <set>
#include <string>

#include "synthetic.hpp"

using synthetic::Location;
using synthetic::Trace;
using synthetic::kUndef;

static int failures = 0;

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond);    \
            std::fprintf(stderr, __VA_ARGS__);                                   \
            std::fprintf(stderr, "\n");                                          \
            ++failures;                                                          \
        }                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0)
            std::fprintf(stderr, "usage: %s ARCHIVE_DIR\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    std::string dir = argv[1];
    if (rank == 0) {
        std::string command = "rm -rf '" + dir + "' && mkdir -p \"$(dirname '" + dir + "')\"";
        CHECK(std::system(command.c_str()) == 0, "preparing %s", dir.c_str());
    }
    MPI_Barrier(MPI_COMM_WORLD);

    Trace t(4u << 20, 4096, 4, true);
    // rank-specific region first on odd ranks: local ids differ between ranks
    std::string own = "kernel_of_rank_" + std::to_string(rank);
    uint32_t own_region = 0;
    if (rank % 2)
        own_region = t.region(own, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);
    uint32_t main_region = t.region("main", ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);
    uint32_t solve = t.region("solve", ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);
    uint32_t send = t.region("MPI_Send", ADT_ROLE_POINT2POINT);
    uint32_t allreduce = t.region("MPI_Allreduce", ADT_ROLE_COLL_ALL2ALL);
    if (rank % 2 == 0)
        own_region = t.region(own, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);

    std::vector<uint32_t> world_members, half_members;
    for (int r = 0; r < size; ++r) {
        world_members.push_back((uint32_t)r);
        if (r % 2 == rank % 2)
            half_members.push_back((uint32_t)r);
    }
    uint32_t self = 0, world = 0;
    if (rank % 2) {
        self = t.comm((uint32_t)rank, 2, "MPI_COMM_SELF", {}, true);
        world = t.comm(0, 0, "MPI_COMM_WORLD", world_members);
    } else {
        world = t.comm(0, 0, "MPI_COMM_WORLD", world_members);
        self = t.comm((uint32_t)rank, 2, "MPI_COMM_SELF", {}, true);
    }
    uint32_t half = t.comm(half_members[0], 1, rank % 2 ? "odd" : "even", half_members, false, {}, world);

    uint32_t n_main = t.node(main_region, kUndef);
    uint32_t n_solve = t.node(solve, n_main);
    uint32_t n_own = t.node(own_region, n_solve);
    uint32_t n_send = t.node(send, n_solve);
    uint32_t n_allreduce = t.node(allreduce, n_main);
    CHECK(t.commit_nodes(), "calling contexts");

    Location &l0 = t.add_location((uint32_t)rank, 0, "Master thread", 1000);
    Location &l1 = t.add_location((uint32_t)rank, 1, "Pthread 1", 1005);
    for (int i = 0; i < 200; ++i) {
        CHECK(t.sample(l0, n_own) == ADT_APPEND_OK, "sample");
        CHECK(t.enter(l0, send, n_send), "enter");
        CHECK(t.p2p(l0, ADT_REC_MPI_SEND, world, (uint32_t)((rank + 1) % size), (uint32_t)i, 64, 0), "send");
        CHECK(t.p2p(l0, ADT_REC_MPI_SEND, half, 0, (uint32_t)i, 8, 0), "send");
        CHECK(t.p2p(l0, ADT_REC_MPI_SEND, self, 0, 1, 8, 0), "send");
        CHECK(t.leave(l0), "leave");
        CHECK(t.enter(l0, allreduce, n_allreduce), "enter");
        CHECK(t.collective_begin(l0), "begin");
        CHECK(t.collective_end(l0, ADT_REC_MPI_COLLECTIVE_END, OTF2_COLLECTIVE_OP_ALLREDUCE, world,
                               ADT_COLLECTIVE_ROOT_NONE, 8, 8, 0), "end");
        CHECK(t.leave(l0), "leave");
        CHECK(t.sample(l1, i % 2 ? n_solve : n_own) == ADT_APPEND_OK, "sample");
    }

    adt_collectives collectives;
    const MPI_Comm mpi_world = MPI_COMM_WORLD;
    CHECK(adt_collectives_mpi_create(&collectives, &mpi_world) == 0, "adt_collectives_mpi_create");
    std::vector<adt_trace_thread> threads = { { l0.location, 0, l0.name.c_str() },
                                              { l1.location, 1, l1.name.c_str() } };
    adt_trace_input input{};
    input.archive_dir = dir.c_str();
    std::string host = "host" + std::to_string(rank / 2);
    input.hostname = host.c_str();
    input.threads = threads.data();
    input.thread_count = threads.size();
    input.defs = t.defs();
    input.calling_context_style = true;
    input.initial_rate_hz = t.initial_rate();
    input.creator = "adaptrace mpi test";
    adt_trace_result result;
    int rc = adt_trace_write(&input, &collectives, &result);
    CHECK(rc == 0, "write: %s", result.error);

    // a second write to the same path fails on every rank, archive intact
    adt_trace_result again;
    CHECK(adt_trace_write(&input, &collectives, &again) == -1, "second write to %s succeeded", dir.c_str());
    CHECK(std::string(again.error).find(dir) != std::string::npos, "error: %s", again.error);
    adt_collectives_mpi_destroy(&collectives);

    if (rank == 0 && rc == 0) {
        std::string anchor = dir + "/traces.otf2";
        CHECK(readback::validate(anchor) == 0, "otf2-print --silent -Werror rejects %s", anchor.c_str());
        readback::Archive a;
        std::string why;
        CHECK(readback::read(anchor, a, why), "%s", why.c_str());
        CHECK(a.locations.size() == 2u * (size_t)size, "%zu locations", a.locations.size());
        CHECK(a.location_groups.size() == (size_t)size, "%zu location groups", a.location_groups.size());
        CHECK(a.system_tree.size() == 1u + (size_t)(size + 1) / 2, "%zu system tree nodes", a.system_tree.size());
        std::multiset<std::string> region_names;
        for (auto &r : a.regions)
            region_names.insert(r.name);
        CHECK(region_names.count("MPI_Send") == 1, "MPI_Send defined once");
        for (int r = 0; r < size; ++r)
            CHECK(region_names.count("kernel_of_rank_" + std::to_string(r)) == 1, "rank %d's kernel", r);
        CHECK(a.regions.size() == 4u + (size_t)size, "%zu regions", a.regions.size());
        std::multiset<std::string> paths;
        for (uint32_t c = 0; c < a.calling_contexts.size(); ++c) {
            paths.insert(a.path(c));
            CHECK(a.calling_contexts[c].parent == OTF2_UNDEFINED_CALLING_CONTEXT || a.calling_contexts[c].parent < c,
                  "parent of %u after it", c);
        }
        CHECK(paths.count("MPI_Send<solve<main") == 1, "shared node merged");
        CHECK(a.calling_contexts.size() == 4u + (size_t)size, "%zu calling contexts", a.calling_contexts.size());
        std::multiset<std::string> comm_names;
        for (auto &c : a.comms)
            comm_names.insert(c.name);
        CHECK(comm_names.count("MPI_COMM_WORLD") == 1, "one world");
        CHECK(comm_names.count("even") == 1 && comm_names.count("odd") == 1, "even and odd once each");
        CHECK(comm_names.count("MPI_COMM_SELF") == (size_t)size, "one self comm per creator");
        for (auto &c : a.comms) {
            const auto &g = a.groups.at(c.group);
            if (c.name == "MPI_COMM_WORLD")
                CHECK(g.members.size() == (size_t)size && g.type == OTF2_GROUP_TYPE_COMM_GROUP, "world group");
            if (c.name == "odd")
                CHECK(g.members.size() == (size_t)size / 2 && g.members[0] == 1, "odd group");
            if (c.name == "MPI_COMM_SELF")
                CHECK(g.type == OTF2_GROUP_TYPE_COMM_SELF, "self group");
        }
        CHECK(a.groups[0].type == OTF2_GROUP_TYPE_COMM_LOCATIONS && a.groups[0].members.size() == (size_t)size,
              "COMM_LOCATIONS");
    }
    // each rank checks its own locations against what it recorded
    MPI_Barrier(MPI_COMM_WORLD);
    if (rc == 0) {
        readback::Archive a;
        std::string why;
        CHECK(readback::read(dir + "/traces.otf2", a, why), "%s", why.c_str());
        for (Location *l : { &l0, &l1 }) {
            uint64_t id = (uint64_t)rank + ((uint64_t)l->thread_index << 32);
            auto expected = t.expected(*l, [](uint64_t time) { return time; });
            auto got = synthetic::describe(a, id);
            CHECK(got == expected, "location %llu: %zu events read, %zu expected", (unsigned long long)id, got.size(),
                  expected.size());
            CHECK(a.locations[id].events == got.size(), "event count of %llu", (unsigned long long)id);
        }
    }
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && all_failures == 0)
        std::printf("ok: %d ranks\n", size);
    return all_failures == 0 ? 0 : 1;
}
