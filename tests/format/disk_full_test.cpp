// A write error in the middle of the write (disk full, simulated with a
// file size limit: writes fail with EFBIG). Its own program: OTF2 3.0.2
// cannot close a writer whose write failed without a double free, so the
// writer abandons the OTF2 archive object on this path and LeakSanitizer is
// told about that (lsan_otf2_abandoned.supp).
#include <signal.h>
#include <sys/resource.h>

#include <regex>
#include <string>

#include "writer_fixture.hpp"

namespace {

// Disk full, simulated with a file size limit (writes fail with EFBIG).
TEST(FormatWriter, WriteErrorsMidwayRemoveTheTemporaryDirectory)
{
    Trace t(16u << 20, 64u << 10, 2, false);
    World w(t);
    Location &l = t.add_location(0, 0, "Master thread", 100);
    for (int i = 0; i < 100000; ++i) {
        ASSERT_TRUE(t.enter(l, w.mpi_send, kUndef));
        ASSERT_TRUE(t.p2p(l, ADT_REC_MPI_SEND, w.world, 0, (uint32_t)i, (uint64_t)i, 0));
        ASSERT_TRUE(t.leave(l));
    }
    std::string dir = fresh_path("disk-full");
    struct rlimit old_limit;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    struct sigaction ignore {}, old_action {};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &old_action), 0);
    struct rlimit small = old_limit;
    small.rlim_cur = 256 * 1024;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    Written r = write_trace(t, dir);
    setrlimit(RLIMIT_FSIZE, &old_limit);
    sigaction(SIGXFSZ, &old_action, nullptr);
    EXPECT_EQ(r.rc, -1);
    EXPECT_NE(std::string(r.result.error).find(dir), std::string::npos) << r.result.error;
    // The cause, as this rank's own failure: not "another rank" (issue #11:
    // a full disk with one rank was reported that way).
    EXPECT_TRUE(r.result.failed_here);
    EXPECT_EQ(std::string(r.result.error).find("another rank"), std::string::npos) << r.result.error;
    EXPECT_NE(std::string(r.result.error).find("too large"), std::string::npos) << r.result.error;
    // How far the write got (issue #11: "errno text, path, bytes").
    std::smatch written;
    std::string error = r.result.error;
    ASSERT_TRUE(std::regex_search(error, written, std::regex("; ([0-9]+) bytes of this rank's files written\\)")))
        << error;
    EXPECT_GT(std::stoull(written[1]), 0u) << error;
    EXPECT_FALSE(exists(dir));
    EXPECT_TRUE(entries_starting(scratch_dir(), basename_of(dir) + ".tmp-").empty());
}

}  // namespace
