// Shared by the writer tests: a scratch directory (removed when the test
// program ends), writing a synthetic trace, and the full check of a written
// archive (otf2-print validation, read-back comparison, counts).
#pragma once

#include <gtest/gtest.h>

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "synthetic.hpp"

using synthetic::Location;
using synthetic::Trace;
using synthetic::kUndef;

namespace {

std::string scratch_dir()
{
    static std::string dir = [] {
        std::string path = std::string(::testing::TempDir()) + "adt-format-XXXXXX";
        char *made = mkdtemp(&path[0]);
        return std::string(made ? made : "/tmp");
    }();
    return dir;
}

int remove_entry(const char *path, const struct stat *, int, struct FTW *) { return remove(path); }

// The scratch directory goes away with the test program.
class ScratchCleanup : public ::testing::Environment {
  public:
    void TearDown() override { nftw(scratch_dir().c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS); }
};
const auto *const scratch_cleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

std::string fresh_path(const std::string &name)
{
    static int counter = 0;
    return scratch_dir() + "/" + name + "-" + std::to_string(counter++);
}

bool exists(const std::string &path)
{
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

// Entries of dir whose names start with prefix.
std::vector<std::string> entries_starting(const std::string &dir, const std::string &prefix)
{
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    if (!d)
        return out;
    while (dirent *e = readdir(d))
        if (std::string(e->d_name).rfind(prefix, 0) == 0)
            out.push_back(e->d_name);
    closedir(d);
    return out;
}

std::string basename_of(const std::string &path) { return path.substr(path.rfind('/') + 1); }

struct Written {
    int rc;
    adt_trace_result result;
    readback::Archive archive;
};

Written write_trace(Trace &trace, const std::string &dir, const adt_clock_offset offsets[2] = nullptr,
                    uint32_t rank = 0)
{
    std::vector<adt_trace_thread> threads;
    for (Location &l : trace.locations())
        threads.push_back({ l.location, l.thread_index, l.name.c_str() });
    adt_trace_input input{};
    input.archive_dir = dir.c_str();
    input.hostname = "testhost";
    input.threads = threads.data();
    input.thread_count = threads.size();
    input.defs = trace.defs();
    input.calling_context_style = trace.cc_style();
    input.initial_rate_hz = trace.initial_rate();
    if (offsets) {
        input.clock_offsets[0] = offsets[0];
        input.clock_offsets[1] = offsets[1];
    }
    input.creator = "adaptrace format test";
    (void)rank;
    Written w{};
    w.rc = adt_trace_write(&input, &adt_collectives_serial, &w.result);
    return w;
}

// Writes, then checks the archive: validates, reads back, compares every
// location's events and the counts; returns the read-back archive.
[[maybe_unused]] readback::Archive write_and_check(Trace &trace, const std::string &dir, const adt_clock_offset *offsets = nullptr)
{
    Written w = write_trace(trace, dir, offsets);
    EXPECT_EQ(w.rc, 0) << w.result.error;
    EXPECT_TRUE(exists(dir + "/traces.otf2"));
    EXPECT_TRUE(entries_starting(scratch_dir(), basename_of(dir) + ".tmp-").empty());
    std::string anchor = dir + "/traces.otf2";
    EXPECT_EQ(readback::validate(anchor), 0) << "otf2-print --silent -Werror rejects " << anchor;
    readback::Archive a;
    std::string why;
    EXPECT_TRUE(readback::read(anchor, a, why)) << why;
    auto time_of = [&](uint64_t t) -> uint64_t {
        if (!offsets)
            return t;
        double slope = (double)(offsets[1].offset - offsets[0].offset) /
                       ((double)offsets[1].local_time - (double)offsets[0].local_time);
        return t + offsets[0].offset + (int64_t)std::rint(slope * ((double)t - (double)offsets[0].local_time));
    };
    uint64_t total = 0, first = UINT64_MAX, last = 0;
    for (Location &l : trace.locations()) {
        uint64_t id = l.thread_index == 0 ? 0 : ((uint64_t)l.thread_index << 32);
        EXPECT_EQ(synthetic::describe(a, id), trace.expected(l, time_of)) << "location " << id;
        EXPECT_EQ(a.locations[id].events, a.events[id].size());
        EXPECT_EQ(a.locations[id].name, l.name);
        if (offsets) {
            EXPECT_EQ(a.clock_offsets[id], 2);
        }
        total += a.events[id].size();
        for (const readback::Event &e : a.events[id]) {
            first = std::min(first, e.time);
            last = std::max(last, e.time);
        }
    }
    EXPECT_EQ(w.result.events_written, total);
    EXPECT_GT(w.result.bytes_written, 0u);
    EXPECT_EQ(a.locations.size(), trace.locations().size());
    if (total) {
        EXPECT_EQ(a.global_offset, first);
        EXPECT_EQ(a.global_offset + a.trace_length, last);
    }
    EXPECT_EQ(a.resolution, 1000000000u);
    EXPECT_EQ(a.creator, "adaptrace format test");
    return a;
}

// Regions, communicators and a calling-context tree used by most tests.
struct World {
    uint32_t main_region, solve, kernel, mpi_send, mpi_recv, mpi_allreduce, mpi_wait;
    uint32_t world, self, split, inter;
    uint32_t n_main, n_solve, n_kernel, n_send, n_recv, n_allreduce, n_kernel_deep, n_wait;

    explicit World(Trace &t)
    {
        main_region = t.region("main", ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);
        solve = t.region("solve", ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);
        kernel = t.region("kernel", ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING);
        mpi_send = t.region("MPI_Send", ADT_ROLE_POINT2POINT);
        mpi_recv = t.region("MPI_Recv", ADT_ROLE_POINT2POINT);
        mpi_allreduce = t.region("MPI_Allreduce", ADT_ROLE_COLL_ALL2ALL);
        mpi_wait = t.region("MPI_Wait");
        world = t.comm(0, 0, "MPI_COMM_WORLD", { 0 });
        self = t.comm(0, 1, "MPI_COMM_SELF", {}, true);
        split = t.comm(0, 2, "split", { 0 }, false, {}, world);
        inter = t.comm(0, 3, "inter", { 0 }, false, { 0 }, world);
        n_main = t.node(main_region, kUndef);
        n_solve = t.node(solve, n_main);
        n_kernel = t.node(kernel, n_solve);
        n_send = t.node(mpi_send, n_solve);
        n_recv = t.node(mpi_recv, n_main);
        n_allreduce = t.node(mpi_allreduce, n_solve);
        n_kernel_deep = t.node(kernel, n_kernel);
        n_wait = t.node(mpi_wait, n_main);
    }
};

}  // namespace
