// The life of a measured process, seen from outside: runtime_probe runs
// with the adaptrace library preloaded, in a fresh working directory, and
// the tests check its output, its exit status, the archive it leaves and
// summary.json.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include "otf2_readback.hpp"
#include "process_support.hpp"
#include "../scratch_directory.hpp"

namespace {

using ProbeRun = process::Result;
using process::read_file;
using process::read_summary;
using process::read_summary_locations;

bool exists(const std::string &path)
{
    struct stat info;
    return stat(path.c_str(), &info) == 0;
}

std::vector<std::string> lines_starting_with(const std::string &text, const std::string &prefix)
{
    std::vector<std::string> found;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(prefix, 0) == 0)
            found.push_back(line);
    return found;
}

int otf2_print_status(const std::string &archive)
{
    std::string command = std::string("'") + ADT_TEST_OTF2_PRINT + "' '" + archive + "/traces.otf2' >/dev/null 2>&1";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The archive read back with the format tests' OTF2 reader helper.
struct ArchiveContents {
    bool opened = false;
    readback::Archive archive;

    uint64_t count(const std::string &type) const
    {
        uint64_t total = 0;
        for (const auto &location : archive.events)
            total += static_cast<uint64_t>(std::count_if(location.second.begin(), location.second.end(),
                                                         [&](const readback::Event &e) { return e.type == type; }));
        return total;
    }

    std::vector<std::string> names() const
    {
        std::vector<std::string> result;
        for (const auto &location : archive.locations)
            result.push_back(location.second.name);
        return result;
    }
};

ArchiveContents read_archive(const std::string &archive)
{
    ArchiveContents contents;
    std::string why;
    contents.opened = readback::read(archive + "/traces.otf2", contents.archive, why);
    return contents;
}

// Issue #14, the adaptive buffer at work: every sampled location carries
// the sampling-rate metric, one Metric event with the initial rate where
// its sampling started, at or before its first other event (halvings
// before its first kept record are marked too), then one at each halving
// with the rate halved: as many as summary.json counts halvings for it,
// at times that never decrease (a drop over several empty levels marks
// each shift it passed at one time) and stay within the run. With each
// halving, two buffer-use Metric events at its time:
// the arena's bytes in use before the drop, then after it, within the
// arena, not more after (the probe's one location is the only one taking
// chunks).
void expect_halving_marks(const std::string &archive, unsigned least_halvings)
{
    std::map<std::string, double> summary = read_summary(archive);
    std::vector<std::map<std::string, double>> lines = read_summary_locations(archive);
    ArchiveContents contents = read_archive(archive);
    ASSERT_TRUE(contents.opened);
    const std::vector<std::string> &members = contents.archive.metric_names;
    const auto &classes = contents.archive.metric_classes;
    // The class of the one metric name, or classes.size() when none.
    auto class_of = [&](const char *name) {
        auto member = std::find(members.begin(), members.end(), name);
        const std::vector<uint32_t> only = {static_cast<uint32_t>(member - members.begin())};
        return static_cast<uint64_t>(std::find(classes.begin(), classes.end(), only) - classes.begin());
    };
    const uint64_t class_id = class_of("sampling rate");
    const uint64_t use_class = class_of("buffer use");
    ASSERT_LT(class_id, classes.size()) << "no metric class of the sampling rate alone";
    ASSERT_LT(use_class, classes.size()) << "no metric class of the buffer use alone";
    ASSERT_FALSE(lines.empty());
    // A halving may come after the location's last kept record (the
    // sample whose append asked for the drop was taken before it, and the
    // run may end before the next one): within the run, not within the
    // location's other events.
    const uint64_t run_end = contents.archive.global_offset + contents.archive.trace_length;
    for (const auto &line : lines) {
        SCOPED_TRACE("rank " + std::to_string(line.at("rank")) + " thread " + std::to_string(line.at("thread")));
        uint64_t location = static_cast<uint64_t>(line.at("rank")) + (static_cast<uint64_t>(line.at("thread")) << 32);
        const std::vector<readback::Event> &events = contents.archive.events[location];
        ASSERT_FALSE(events.empty());
        std::vector<readback::Event> marks, uses;
        uint64_t first = UINT64_MAX;
        for (const readback::Event &event : events) {
            if (event.type == "Metric" && event.fields.at(0) == class_id) {
                marks.push_back(event);
                continue;
            }
            if (event.type == "Metric" && event.fields.at(0) == use_class) {
                uses.push_back(event);
                continue;
            }
            first = std::min(first, event.time);
        }
        auto halvings = static_cast<unsigned>(line.at("halvings"));
        EXPECT_GE(halvings, least_halvings);
        ASSERT_EQ(marks.size(), 1u + halvings);
        EXPECT_LE(marks[0].time, first) << "the initial rate from the start of the location's sampling";
        for (size_t k = 0; k < marks.size(); k++) {
            ASSERT_EQ(marks[k].fields.size(), 2u);
            double hz;
            std::memcpy(&hz, &marks[k].fields[1], sizeof hz);
            EXPECT_EQ(hz, summary.at("initial_rate_hz") / std::ldexp(1.0, static_cast<int>(k))) << "step " << k;
            EXPECT_LE(marks[k].time, run_end) << "step " << k;
            if (k > 0) {
                EXPECT_GE(marks[k].time, marks[k - 1].time) << "step " << k;
            }
        }
        ASSERT_EQ(uses.size(), 2u * halvings);
        for (size_t k = 1; k < marks.size(); k++) {
            const readback::Event &before = uses[2 * (k - 1)], &after = uses[2 * (k - 1) + 1];
            EXPECT_EQ(before.time, marks[k].time) << "step " << k;
            EXPECT_EQ(after.time, marks[k].time) << "step " << k;
            EXPECT_GT(before.fields.at(1), 0u) << "step " << k;
            EXPECT_LE(before.fields.at(1), summary.at("arena_bytes")) << "step " << k;
            EXPECT_LE(after.fields.at(1), before.fields.at(1)) << "step " << k;
        }
    }
}

class Runtime : public ::testing::Test {
protected:
    void SetUp() override
    {
        root_ = scratch_.path();
        ASSERT_FALSE(root_.empty());
        work_ = root_ + "/work";
        ASSERT_EQ(mkdir(work_.c_str(), 0700), 0);
    }

    // The environment of this process without anything adaptrace, plus
    // the library preloaded and the settings given.
    std::vector<std::string> probe_environment(const std::map<std::string, std::string> &settings)
    {
        std::map<std::string, std::string> all_settings = {{"ADAPTRACE_QUIET", "off"}};
        for (const auto &setting : settings)
            all_settings[setting.first] = setting.second;
        std::string preload = ADT_TEST_PRELOAD;
        if (std::strlen(ADT_TEST_SANITIZER_RUNTIME) > 0) {
            preload = std::string(ADT_TEST_SANITIZER_RUNTIME) + ":" + preload;
            // Faults end the probe by the kernel's default action, as in
            // the uninstrumented build, not by ASan's report; the OTF2
            // archive a failed write abandons is a known, deliberate leak.
            all_settings.emplace("ASAN_OPTIONS", "handle_segv=0");
            all_settings.emplace("LSAN_OPTIONS", "suppressions=" ADT_TEST_LSAN_SUPPRESSIONS);
        }
        all_settings["LD_PRELOAD"] = preload;
        return process::clean_environment(all_settings);
    }

    ProbeRun run_probe(const std::vector<std::string> &args, const std::map<std::string, std::string> &settings = {})
    {
        std::vector<std::string> argv = {ADT_TEST_PROBE};
        argv.insert(argv.end(), args.begin(), args.end());
        return process::run(argv, probe_environment(settings), work_, root_ + "/probe");
    }

    static bool ends_with(const std::string &text, const std::string &suffix)
    {
        return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
    }

    // Entries of the working directory with the default archive name: the
    // <archive>.ended files (how runs ended), or everything else.
    std::vector<std::string> default_named(bool ending_markers)
    {
        std::vector<std::string> found;
        DIR *dir = opendir(work_.c_str());
        if (!dir)
            return found;
        while (struct dirent *entry = readdir(dir)) {
            std::string name = entry->d_name;
            if (name.rfind("adaptrace-", 0) == 0 && ends_with(name, ".ended") == ending_markers)
                found.push_back(work_ + "/" + name);
        }
        closedir(dir);
        return found;
    }

    std::vector<std::string> ending_markers() { return default_named(true); }

    // An ending without the final write: the exit status it has untraced,
    // exactly one line from adaptrace holding piece and saying where the
    // data was saved and how to recover it, the same line in the one
    // <archive>.ended, no archive yet. Returns the archive's path.
    std::string expect_ending_saved_once(const ProbeRun &run, int exit_status, const std::string &piece)
    {
        EXPECT_EQ(run.exit_status, exit_status) << run.err;
        std::vector<std::string> lines = lines_starting_with(run.err, "adaptrace: ");
        EXPECT_EQ(lines.size(), 1u) << run.err;
        std::vector<std::string> markers = ending_markers();
        EXPECT_EQ(markers.size(), 1u);
        if (lines.size() != 1 || markers.size() != 1)
            return "";
        EXPECT_NE(lines[0].find(piece), std::string::npos) << lines[0];
        std::string archive = markers[0].substr(0, markers[0].size() - std::strlen(".ended"));
        EXPECT_NE(lines[0].find(" were saved in " + archive + ".rescue; after the job, run: adaptrace-recover " +
                                archive + " "),
                  std::string::npos)
            << lines[0];
        EXPECT_FALSE(exists(archive)) << "no archive before the recovery";
        EXPECT_EQ(process::read_file(markers[0]), lines[0] + "\n");
        return archive;
    }

    // adaptrace-recover ARCHIVE, as the user runs it after the job.
    process::Result recover(const std::string &archive)
    {
        return process::run({ADT_TEST_RECOVER, archive}, process::clean_environment({}), work_, root_ + "/recover");
    }

    // The recovered archive: written, readable by OTF2's own reader, its
    // summary says how the run ended; the rescue files are gone.
    std::map<std::string, double> expect_recovered(const std::string &archive, const std::string &how)
    {
        process::Result recovered = recover(archive);
        EXPECT_EQ(recovered.exit_status, 0) << recovered.err;
        EXPECT_EQ(otf2_print_status(archive), 0);
        std::string summary = process::read_file(archive + "/summary.json");
        EXPECT_NE(summary.find("\"ending\": {\"how\": \"" + how + "\""), std::string::npos) << summary;
        EXPECT_FALSE(exists(archive + ".rescue")) << "rescue files left after the recovery";
        EXPECT_NE(recovered.err.find("adaptrace: recovered: the run ended by " + how), std::string::npos)
            << recovered.err;
        return read_summary(archive);
    }

    // Directories the runtime named by default in the working directory.
    std::vector<std::string> default_archives() { return default_named(false); }

    ScratchDirectory scratch_{"adt-runtime-test"};
    std::string root_;
    std::string work_;
};

TEST_F(Runtime, SerialProgramWritesArchiveAndConsistentSummaryAtExit)
{
    ProbeRun run = run_probe({"compute"}, {{"ADAPTRACE_BUFFER_SIZE", "1M"}, {"ADAPTRACE_SAMPLING_RATE", "5kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_NE(run.out.find("probe compute done"), std::string::npos);
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << run.err;
    const std::string &archive = archives[0];
    EXPECT_TRUE(std::regex_match(archive.substr(archive.rfind('/') + 1),
                                 std::regex("adaptrace-[0-9]{8}-[0-9]{6}-[0-9]+")))
        << archive;
    EXPECT_EQ(otf2_print_status(archive), 0);

    std::map<std::string, double> summary = read_summary(archive);
    for (const char *field : {"ranks", "locations", "mpi_events", "samples_taken", "samples_kept", "samples_removed",
                              "halvings", "initial_rate_hz", "final_rate_hz", "skipped_samples", "flushes",
                              "buffer_bytes", "bytes_written", "write_seconds", "samples_dropped",
                              "delivered_rate_hz", "chunks_high_water"})
        EXPECT_EQ(summary.count(field), 1u) << "summary.json lacks " << field;
    EXPECT_EQ(summary["ranks"], 1);
    EXPECT_EQ(summary["locations"], 1);
    EXPECT_EQ(summary["mpi_events"], 0);
    EXPECT_EQ(summary["buffer_bytes"], 1 << 20);
    EXPECT_EQ(summary["arena_bytes"] + summary["context_bytes"] + summary["skeleton_share_bytes"], summary["buffer_bytes"]);
    EXPECT_EQ(summary["chunk_bytes"], 1024) << "a small arena gets the smallest chunks";
    EXPECT_EQ(summary["initial_rate_hz"], 5000);
    EXPECT_EQ(summary["final_rate_hz"], 5000 / std::ldexp(1.0, (int)summary["most_halvings_per_location"]));
    EXPECT_GT(summary["samples_taken"], 0);
    EXPECT_EQ(summary["samples_taken"], summary["timer_signals"]);
    EXPECT_EQ(summary["samples_taken"], summary["samples_kept"] + summary["samples_removed"] +
                                            summary["skipped_samples"] + summary["samples_dropped"]);
    EXPECT_GT(summary["bytes_written"], 0);
    std::vector<std::map<std::string, double>> lines = read_summary_locations(archive);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["rank"], 0);
    EXPECT_EQ(lines[0]["thread"], 0);
    EXPECT_EQ(lines[0]["halvings"], summary["most_halvings_per_location"]);
    EXPECT_EQ(lines[0]["halvings"], summary["halvings"]);
    EXPECT_EQ(lines[0]["overload_halvings"], summary["overload_halvings"]);
    EXPECT_EQ(lines[0]["rate_hz"], summary["final_rate_hz"]);
    EXPECT_EQ(lines[0]["samples_taken"], summary["samples_taken"]);
    EXPECT_EQ(lines[0]["samples_kept"], summary["samples_kept"]);
    EXPECT_EQ(lines[0]["mpi_events"], 0);

    ArchiveContents contents = read_archive(archive);
    ASSERT_TRUE(contents.opened);
    EXPECT_EQ(contents.archive.locations.size(), 1u);
    EXPECT_EQ(contents.count("CallingContextSample"), summary["samples_kept"]);
    EXPECT_EQ(contents.count("BufferFlush"), summary["flushes"]);

    std::vector<std::string> summary_lines = lines_starting_with(run.err, "adaptrace: ");
    ASSERT_FALSE(summary_lines.empty());
    EXPECT_EQ(summary_lines.back(), "adaptrace: trace: " + archive + "/traces.otf2");
}

TEST_F(Runtime, QuietRunPrintsNothing)
{
    ProbeRun run = run_probe({"compute"}, {{"ADAPTRACE_QUIET", "on"}, {"ADAPTRACE_SAMPLING", "off"}});
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_EQ(run.err, "");
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u);
    std::map<std::string, double> summary = read_summary(archives[0]);
    EXPECT_EQ(summary["samples_taken"], 0);
    EXPECT_EQ(summary["initial_rate_hz"], 0);
    EXPECT_EQ(otf2_print_status(archives[0]), 0);
}

// An output path the end of the run would refuse is reported at start-up,
// with its cause, and the program runs unmeasured (no location from the
// start); nothing is written anywhere.
TEST_F(Runtime, ExistingOutputDirectoryIsReportedAtStartAndNeverOverwritten)
{
    std::string output = work_ + "/taken";
    ASSERT_EQ(mkdir(output.c_str(), 0700), 0);
    std::ofstream(output + "/precious") << "keep me\n";
    ProbeRun run = run_probe({"location"}, {{"ADAPTRACE_OUTPUT", output}, {"ADAPTRACE_SAMPLING_RATE", "1kHz"}});
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_EQ(run.out, "location null\nprobe location done\n");
    EXPECT_EQ(run.err, "adaptrace: ADAPTRACE_OUTPUT='" + output +
                           "': the path exists already, and a trace is never written over an existing path "
                           "(File exists); the program runs unmeasured\n");
    EXPECT_EQ(read_file(output + "/precious"), "keep me\n");
    EXPECT_FALSE(exists(output + "/summary.json"));
    EXPECT_FALSE(exists(output + "/traces.otf2"));
    EXPECT_TRUE(default_archives().empty());
}

TEST_F(Runtime, OutputWithoutParentDirectoryIsReportedAtStart)
{
    std::string output = work_ + "/missing-parent/trace";
    ProbeRun run = run_probe({"location"}, {{"ADAPTRACE_OUTPUT", output}, {"ADAPTRACE_SAMPLING", "off"}});
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_EQ(run.out, "location null\nprobe location done\n");
    EXPECT_EQ(run.err, "adaptrace: ADAPTRACE_OUTPUT='" + output + "': its parent directory '" + work_ +
                           "/missing-parent' does not exist (No such file or directory); the program runs "
                           "unmeasured\n");
    EXPECT_FALSE(exists(work_ + "/missing-parent"));
    EXPECT_TRUE(default_archives().empty());
}

TEST_F(Runtime, OutputUnderAFileIsReportedAtStart)
{
    std::string file = work_ + "/a-file";
    std::ofstream(file) << "not a directory\n";
    std::string output = file + "/trace";
    ProbeRun run = run_probe({"location"}, {{"ADAPTRACE_OUTPUT", output}, {"ADAPTRACE_SAMPLING", "off"}});
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_EQ(run.out, "location null\nprobe location done\n");
    EXPECT_EQ(run.err, "adaptrace: ADAPTRACE_OUTPUT='" + output + "': its parent '" + file +
                           "' is not a directory (Not a directory); the program runs unmeasured\n");
    EXPECT_TRUE(default_archives().empty());
}

TEST_F(Runtime, OutputDirectoryGivenIsUsed)
{
    std::string output = work_ + "/my-trace";
    ProbeRun run = run_probe({"compute"}, {{"ADAPTRACE_OUTPUT", output}, {"ADAPTRACE_SAMPLING_RATE", "1kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_TRUE(exists(output + "/traces.otf2"));
    EXPECT_TRUE(exists(output + "/summary.json"));
    EXPECT_TRUE(default_archives().empty());
}

TEST_F(Runtime, BadConfigurationPrintsOneLineAndTheProgramRuns)
{
    ProbeRun run = run_probe({"compute"}, {{"ADAPTRACE_BUFFER_SIZE", "64Q"}});
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_NE(run.out.find("probe compute done"), std::string::npos);
    std::vector<std::string> lines = lines_starting_with(run.err, "");
    ASSERT_EQ(lines.size(), 1u) << run.err;
    EXPECT_EQ(lines[0].rfind("adaptrace: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("ADAPTRACE_BUFFER_SIZE"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("64Q"), std::string::npos) << lines[0];
    EXPECT_TRUE(default_archives().empty());
}

TEST_F(Runtime, MisspelledVariableIsReportedOnceAtStartAndTheRunGoesOn)
{
    ProbeRun run = run_probe({"system"}, {{"ADAPTRACE_BUFER_SIZE", "1M"},
                                          {"ADAPTRACE_SAMPLING", "off"},
                                          {"ADAPTRACE_QUIET", "on"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    // Said at start, even with --quiet on: the measured process warns, its
    // child (inert, the same environment) does not.
    EXPECT_EQ(run.err, "adaptrace: unknown variable ADAPTRACE_BUFER_SIZE is ignored; did you mean "
                       "ADAPTRACE_BUFFER_SIZE? (adaptrace --help lists every variable)\n");
    EXPECT_NE(run.out.find("child ran, location null"), std::string::npos) << run.out;
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << run.err;
    EXPECT_EQ(read_summary(archives[0])["buffer_bytes"], 64 << 20) << "the misspelled value is not used";
}

TEST_F(Runtime, ChildStartedWithSystemRunsUndisturbedAndWritesNothing)
{
    ProbeRun run = run_probe({"system"}, {{"ADAPTRACE_SAMPLING_RATE", "2kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_NE(run.out.find("child ran, location null"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("child status 0"), std::string::npos) << run.out;
    ASSERT_EQ(default_archives().size(), 1u) << run.err;
    // Only the parent speaks: one summary, one trace line.
    EXPECT_EQ(lines_starting_with(run.err, "adaptrace: trace: ").size(), 1u) << run.err;
    EXPECT_EQ(read_summary(default_archives()[0])["ranks"], 1);
}

TEST_F(Runtime, ForkedChildIsInertAndWritesNothing)
{
    ProbeRun run = run_probe({"fork"}, {{"ADAPTRACE_SAMPLING_RATE", "2kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_NE(run.out.find("fork child location null"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("fork child status 0"), std::string::npos) << run.out;
    ASSERT_EQ(default_archives().size(), 1u) << run.err;
    EXPECT_EQ(lines_starting_with(run.err, "adaptrace: trace: ").size(), 1u) << run.err;
}

TEST_F(Runtime, ThreadsGetTheirOwnLocations)
{
    ProbeRun run = run_probe({"threads", "3"}, {{"ADAPTRACE_SAMPLING_RATE", "2kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    for (const char *line : {"thread 1 location set", "thread 2 location set", "thread 3 location set"})
        EXPECT_NE(run.out.find(line), std::string::npos) << run.out;
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << run.err;
    std::map<std::string, double> summary = read_summary(archives[0]);
    EXPECT_EQ(summary["locations"], 4);
    // 64 MiB, 56 MiB of arena: the largest power of two giving 4096 chunks.
    EXPECT_EQ(summary["chunk_bytes"], 8192);
    ArchiveContents contents = read_archive(archives[0]);
    ASSERT_TRUE(contents.opened);
    std::vector<std::string> names = contents.names();
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"Master thread", "Thread 1", "Thread 2", "Thread 3"}));

    // One summary line per location, adding up to the totals.
    std::vector<std::map<std::string, double>> lines = read_summary_locations(archives[0]);
    ASSERT_EQ(lines.size(), 4u);
    std::set<double> threads;
    double halvings = 0, taken = 0, kept = 0, slowest = 2000;
    for (auto &line : lines) {
        EXPECT_EQ(line["rank"], 0);
        threads.insert(line["thread"]);
        halvings += line["halvings"];
        taken += line["samples_taken"];
        kept += line["samples_kept"];
        EXPECT_EQ(line["rate_hz"], 2000 / std::ldexp(1.0, int(line["halvings"])));
        slowest = std::min(slowest, line["rate_hz"]);
    }
    EXPECT_EQ(threads, (std::set<double>{0, 1, 2, 3}));
    EXPECT_EQ(halvings, summary["halvings"]);
    EXPECT_EQ(taken, summary["samples_taken"]);
    EXPECT_EQ(kept, summary["samples_kept"]);
    EXPECT_EQ(slowest, summary["final_rate_hz"]);
}

TEST_F(Runtime, ExitFromAThreadWritesTheArchive)
{
    ProbeRun run = run_probe({"exit-in-thread"}, {{"ADAPTRACE_SAMPLING_RATE", "2kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_NE(run.out.find("thread calls exit"), std::string::npos);
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << run.err;
    EXPECT_EQ(otf2_print_status(archives[0]), 0);
    EXPECT_EQ(read_summary(archives[0])["locations"], 2);
}

TEST_F(Runtime, FinishRunsOnceAndEndsTheMeasurement)
{
    ProbeRun run = run_probe({"finish-twice"}, {{"ADAPTRACE_SAMPLING_RATE", "2kHz"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_NE(run.out.find("finish 0 0, location after finish null"), std::string::npos) << run.out;
    EXPECT_EQ(default_archives().size(), 1u) << run.err;
    EXPECT_EQ(lines_starting_with(run.err, "adaptrace: trace: ").size(), 1u) << run.err;
}

TEST_F(Runtime, ExitWithoutMpiFinalizeSavesAndIsRecovered)
{
    std::string archive = expect_ending_saved_once(run_probe({"mpi-no-finalize"}), 0,
                                                   "adaptrace: rank 1 exited without calling MPI_Finalize: its ");
    ASSERT_FALSE(archive.empty());
    // Rank 1 of 2 was saved; rank 0 (never started here) is in the archive
    // as an empty location, so that communicators keep their members.
    std::map<std::string, double> summary = expect_recovered(archive, "exit without MPI_Finalize");
    EXPECT_EQ(summary["ranks"], 2);
    EXPECT_EQ(summary["ranks_saved"], 1);
    EXPECT_GT(summary["samples_kept"], 0);
    EXPECT_EQ(read_archive(archive).count("CallingContextSample"), summary["samples_kept"]);
}

// The settings under which the probe's "halve" modes halve its location:
// the smallest buffer, a fast wall-clock timer.
const std::map<std::string, std::string> halving_settings = {
    {"ADAPTRACE_BUFFER_SIZE", "64K"}, {"ADAPTRACE_SAMPLING_RATE", "20kHz"}, {"ADAPTRACE_SAMPLING_CLOCK", "wall"}};

TEST_F(Runtime, EachHalvingIsMarkedInTheArchive)
{
    ProbeRun run = run_probe({"halve"}, halving_settings);
    EXPECT_EQ(run.exit_status, 0) << run.err;
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << run.err;
    EXPECT_EQ(otf2_print_status(archives[0]), 0);
    expect_halving_marks(archives[0], 4);
}

// A run killed before its end keeps its halving marks through the rescue
// file and adaptrace-recover.
TEST_F(Runtime, AKilledRunsRecoveredArchiveKeepsItsHalvingMarks)
{
    std::string archive =
        expect_ending_saved_once(run_probe({"halve-then-term"}, halving_settings), 128 + SIGTERM, "was ended by SIGTERM");
    ASSERT_FALSE(archive.empty());
    expect_recovered(archive, "SIGTERM");
    expect_halving_marks(archive, 4);
}

// A process killed while it saved leaves rank-<r>.adtr.partial: the
// recovery names it and treats that rank as not saved.
TEST_F(Runtime, ASaveCutShortIsNamedAndItsRankNotSaved)
{
    std::string archive = expect_ending_saved_once(run_probe({"mpi-no-finalize"}), 0, "exited without calling");
    ASSERT_FALSE(archive.empty());
    std::string saved = read_file(archive + ".rescue/rank-1.adtr");
    ASSERT_GT(saved.size(), 1000u);
    std::ofstream(archive + ".rescue/rank-0.adtr.partial") << saved.substr(0, saved.size() / 2);
    process::Result recovered = recover(archive);
    EXPECT_EQ(recovered.exit_status, 0) << recovered.err;
    EXPECT_NE(recovered.err.find("1 save cut short by a kill: rank-0.adtr"), std::string::npos) << recovered.err;
    std::map<std::string, double> summary = read_summary(archive);
    EXPECT_EQ(summary["saves_cut_short"], 1);
    EXPECT_EQ(summary["ranks_saved"], 1);
    EXPECT_EQ(summary["ranks"], 2);
    EXPECT_EQ(otf2_print_status(archive), 0);
    EXPECT_FALSE(exists(archive + ".rescue"));
}

TEST_F(Runtime, AbortSavesAndIsRecovered)
{
    std::string archive =
        expect_ending_saved_once(run_probe({"abort"}), 0, "adaptrace: rank 1 called MPI_Abort: its ");
    ASSERT_FALSE(archive.empty());
    expect_recovered(archive, "MPI_Abort");
}

// A write that fails on this (the only) process names its cause and the
// file, not "another rank" (issue #11).
TEST_F(Runtime, WriteFailureNamesItsCause)
{
    ProbeRun run = run_probe({"small-file-limit"});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    std::vector<std::string> lines = lines_starting_with(run.err, "adaptrace: no trace written: ");
    ASSERT_EQ(lines.size(), 1u) << run.err;
    EXPECT_EQ(lines[0].find("another rank"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("too large"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(".tmp-"), std::string::npos) << lines[0];
    EXPECT_TRUE(default_archives().empty());
}

// Issue #10: the signals that end a run. Each ends the process exactly as
// without adaptrace (exit status 128 + signal, the application's own
// handlers run); the process saves its data first, and the ending is said
// once.
TEST_F(Runtime, TerminationBySignalSavesAndKeepsItsExitStatus)
{
    ProbeRun run = run_probe({"raise-term"});
    EXPECT_EQ(run.out.find("still running"), std::string::npos) << run.out;
    std::string archive = expect_ending_saved_once(
        run, 128 + SIGTERM, "adaptrace: the process was ended by SIGTERM before the end of the run: its ");
    ASSERT_FALSE(archive.empty());
    std::map<std::string, double> summary = expect_recovered(archive, "SIGTERM");
    EXPECT_EQ(summary["ranks"], 1);
    EXPECT_EQ(summary["signal"], SIGTERM);
    EXPECT_GT(summary["samples_kept"], 0);
    ArchiveContents contents = read_archive(archive);
    ASSERT_TRUE(contents.opened);
    EXPECT_EQ(contents.count("CallingContextSample"), summary["samples_kept"]);
    EXPECT_EQ(contents.count("MeasurementOnOff"), 1u) << "the ending is marked";
}

TEST_F(Runtime, FatalSignalSavesAndStillKillsTheProcess)
{
    std::string archive = expect_ending_saved_once(run_probe({"segv"}), 128 + SIGSEGV, "was ended by SIGSEGV");
    ASSERT_FALSE(archive.empty());
    expect_recovered(archive, "SIGSEGV");
}

// adaptrace watches the ending signals without changing what they do to
// the application: a SIGTERM handler installed without SA_RESTART still
// cuts a blocking read short, and an ignored SIGHUP interrupts nothing.
TEST_F(Runtime, WatchedSignalsInterruptCallsAsTheApplicationSetThem)
{
    ProbeRun run = run_probe({"watched-signals"});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    EXPECT_NE(run.out.find("read_interrupted 1 ignored_signal_cut_sleep 0"), std::string::npos) << run.out;
}

// The application's handlers run and decide how the process ends (here
// with _exit from the SIGSEGV handler: no exit path of adaptrace runs);
// what it held was saved before each of them ran.
TEST_F(Runtime, ApplicationHandlersOfEndingSignalsStillRunAndTheDataIsSaved)
{
    ProbeRun run = run_probe({"own-handlers"});
    EXPECT_EQ(run.exit_status, 7) << run.err;
    EXPECT_NE(run.out.find("own SIGTERM handler ran"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("own SIGSEGV handler ran at the faulting address"), std::string::npos) << run.out;
    // The handlers decided how the process ends; adaptrace claims nothing.
    EXPECT_TRUE(lines_starting_with(run.err, "adaptrace: ").empty()) << run.err;
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << "the rescue directory";
    std::string archive = archives[0].substr(0, archives[0].size() - std::strlen(".rescue"));
    std::map<std::string, double> summary = expect_recovered(archive, "snapshot (SIGSEGV)");
    EXPECT_GT(summary["samples_kept"], 0);
}

// The hard way: the save runs in a handler that interrupted the thread in
// the middle of an append to its own buffer, or inside malloc with the
// allocator's lock held (a save that allocated would hang there). Several
// delays, so that the signal lands at different points.
TEST_F(Runtime, TerminationInsideAnAppendOrMallocIsSavedAndRecovered)
{
    for (const char *mode : {"term-in-append", "term-in-malloc"}) {
        for (const char *delay_us : {"300", "2000", "7000"}) {
            SCOPED_TRACE(std::string(mode) + " after " + delay_us + " us");
            ProbeRun run = run_probe({mode, delay_us}, {{"ADAPTRACE_SAMPLING_RATE", "10kHz"}});
            EXPECT_EQ(run.out.find("still running"), std::string::npos) << run.out;
            std::string archive = expect_ending_saved_once(run, 128 + SIGTERM, "was ended by SIGTERM");
            ASSERT_FALSE(archive.empty());
            std::map<std::string, double> summary = expect_recovered(archive, "SIGTERM");
            if (std::string(mode) == "term-in-append") {
                ArchiveContents contents = read_archive(archive);
                ASSERT_TRUE(contents.opened);
                EXPECT_GT(contents.count("Enter"), 0u);
                EXPECT_EQ(contents.count("Enter"), contents.count("Leave")) << "the open region is closed";
                EXPECT_EQ(double(contents.count("Enter") + contents.count("Leave")),
                          summary["mpi_events"] + summary["regions_closed"]);
            }
            ASSERT_EQ(std::system(("rm -rf '" + work_ + "'/*").c_str()), 0);
        }
    }
}

// A termination request inside the real final write waits for its end: the
// archive is complete, and the process then ends by the signal.
TEST_F(Runtime, TerminationInsideTheWriterCompletesTheArchive)
{
    ProbeRun run = run_probe({"term-in-writer"});
    EXPECT_EQ(run.exit_status, 128 + SIGTERM) << run.err;
    EXPECT_NE(run.out.find("SIGTERM inside the writer"), std::string::npos) << run.out;
    std::vector<std::string> archives = default_archives();
    ASSERT_EQ(archives.size(), 1u) << "the archive only, no temporary directory, no rescue files";
    EXPECT_EQ(otf2_print_status(archives[0]), 0);
    EXPECT_TRUE(ending_markers().empty()) << "the run ended cleanly, then by the signal";
}

// SIGKILL inside the final write leaves its temporary directory;
// adaptrace-recover removes it and says why there is nothing to recover.
TEST_F(Runtime, KillInsideTheWriterLeavesNothingThatRecoverDoesNotRemove)
{
    ProbeRun run = run_probe({"kill-in-writer"});
    EXPECT_EQ(run.exit_status, 128 + SIGKILL) << run.err;
    std::vector<std::string> left = default_archives();
    ASSERT_EQ(left.size(), 1u);
    ASSERT_NE(left[0].find(".tmp-"), std::string::npos) << left[0];
    std::string archive = left[0].substr(0, left[0].find(".tmp-"));
    process::Result recovered = recover(archive);
    EXPECT_EQ(recovered.exit_status, 1);
    EXPECT_NE(recovered.err.find("killed during its final write"), std::string::npos) << recovered.err;
    EXPECT_TRUE(default_archives().empty()) << "the temporary directory is gone";
}

TEST_F(Runtime, TerminationRequestDuringTheFinalWriteWaitsForItsEnd)
{
    ProbeRun run = run_probe({"term-during-write"});
    EXPECT_EQ(run.exit_status, 128 + SIGTERM) << run.err;
    EXPECT_NE(run.out.find("still running after SIGTERM during the write"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("still running after the write"), std::string::npos) << run.out;
    EXPECT_TRUE(lines_starting_with(run.err, "adaptrace: ").empty()) << run.err;
}

// After the save of an ending without a signal (here MPI_Abort), the
// launcher's SIGTERM must not end the process before its node's other
// ranks have saved: the launcher SIGKILLs them once one rank ends (seen in
// mpi.endings.fortran.np4.no-finalize, a save cut short by a kill).
TEST_F(Runtime, TerminationRequestAfterAnEndingSaveWaitsForTheNodesOtherRanks)
{
    ProbeRun run = run_probe({"term-after-abort-save"}, {{"ADAPTRACE_OUTPUT", work_ + "/aborted"}});
    EXPECT_EQ(run.exit_status, 128 + SIGTERM) << run.err;
    EXPECT_NE(run.out.find("rank 1 saved"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find("still running after SIGTERM"), std::string::npos) << run.out;
    EXPECT_EQ(access((work_ + "/aborted.rescue/rank-0.adtr").c_str(), F_OK), 0) << run.err;
}

// An exit without MPI_Finalize: the first rank to exit makes mpirun end
// the others, so a rank that saved at its exit stays until its node's
// other ranks have saved.
TEST_F(Runtime, ExitWithoutFinalizeWaitsForTheNodesOtherRanksSaves)
{
    ProbeRun run = run_probe({"exit-save"}, {{"ADAPTRACE_OUTPUT", work_ + "/returned"}});
    EXPECT_EQ(run.exit_status, 0) << run.err;
    size_t peer = run.out.find("rank 1 saved"), own = run.out.find("exit save done");
    ASSERT_NE(peer, std::string::npos) << run.out;
    ASSERT_NE(own, std::string::npos) << run.out;
    EXPECT_LT(peer, own) << run.out;
    EXPECT_EQ(access((work_ + "/returned.rescue/rank-0.adtr").c_str(), F_OK), 0) << run.err;
}

}  // namespace
