// The run summary's losses: every loss counter of ADT_RUN_COUNTERS and
// every cause of ADT_RUN_LOSSES_BY_CAUSE, enumerated from the tables
// themselves, reaches summary.json under its key and the stderr summary
// with its words, so that a loss added to a table cannot stay unseen.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../core/capture_stderr.hpp"
#include "../scratch_directory.hpp"

extern "C" {
#include "runtime/runtime_internal.h"
}

namespace {

struct Loss {
    std::string json_key;   // "key", or "by_cause_key.cause"
    std::string words;      // on stderr after the number
    uint64_t value;
};

// Distinct values of one width, so that none is part of another.
uint64_t next_value(std::vector<Loss> &losses)
{
    return 7000001 + 1013 * losses.size();
}

// Sets every loss counter of counters to a distinct value and returns them.
std::vector<Loss> set_every_loss(adt_run_counters &counters)
{
    std::vector<Loss> losses;
#define SET_LOSS(combine, field, key, loss, words)            \
    if (std::string(#loss) != "NO") {                         \
        uint64_t value = next_value(losses);                  \
        counters.field = value;                               \
        losses.push_back({key, words, value});                \
    }
    ADT_RUN_COUNTERS(SET_LOSS)
#undef SET_LOSS
#define CAUSE_ROW(cause, key, words) { key, words },
#define SET_CAUSES(field, causes, count, key, loss)                               \
    {                                                                              \
        const std::pair<const char *, const char *> rows[] = { causes(CAUSE_ROW) }; \
        static_assert(sizeof rows / sizeof rows[0] == count, "one row per cause"); \
        for (unsigned cause = 0; cause < count; cause++) {                         \
            uint64_t value = next_value(losses);                                   \
            counters.field[cause] = value;                                         \
            losses.push_back({std::string(key) + "." + rows[cause].first, rows[cause].second, value}); \
        }                                                                          \
    }
    ADT_RUN_LOSSES_BY_CAUSE(SET_CAUSES)
#undef SET_CAUSES
#undef CAUSE_ROW
    return losses;
}

// The text of a key of summary.json: "a" at the top level, "a.b" inside
// the object "a"; "" when absent.
std::string json_value(const std::string &json, const std::string &key)
{
    std::string scope = json, name = key;
    size_t dot = key.find('.');
    if (dot != std::string::npos) {
        size_t object = json.find("\"" + key.substr(0, dot) + "\": {");
        if (object == std::string::npos)
            return "";
        scope = json.substr(object, json.find('}', object) - object);
        name = key.substr(dot + 1);
    }
    std::smatch match;
    if (!std::regex_search(scope, match, std::regex("\"" + name + "\": ([0-9.]+)")))
        return "";
    return match[1];
}

const adt_run_ending *no_ending = nullptr;

class SummaryLosses : public ::testing::Test {
protected:
    void SetUp() override
    {
        archive_ = scratch_.path();
        ASSERT_FALSE(archive_.empty());
    }

    // Publishes counters as a one-rank run with sampling; returns stderr.
    std::string publish(const adt_run_counters &counters)
    {
        return capture_stderr([&] {
            EXPECT_EQ(adt_summary_publish(&adt_collectives_serial, &counters, nullptr, archive_.c_str(), 1000,
                                          false, no_ending, ""),
                      0);
        });
    }

    std::string summary_json() const
    {
        std::ifstream file(archive_ + "/summary.json");
        std::stringstream text;
        text << file.rdbuf();
        return text.str();
    }

    ScratchDirectory scratch_{"adt-summary-test"};
    std::string archive_;
};

TEST_F(SummaryLosses, EveryLossReachesSummaryJsonAndStderr)
{
    adt_run_counters counters{};
    std::vector<Loss> losses = set_every_loss(counters);
    ASSERT_GT(losses.size(), 10u);
    std::string err = publish(counters);
    std::string json = summary_json();
    ASSERT_FALSE(json.empty());
    for (const Loss &loss : losses) {
        SCOPED_TRACE(loss.json_key);
        EXPECT_EQ(json_value(json, loss.json_key), std::to_string(loss.value)) << json;
        EXPECT_NE(err.find(std::to_string(loss.value) + " " + loss.words), std::string::npos) << err;
    }
    // Not one line is cut at adt_log's limit, even with every cause at once.
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);)
        EXPECT_LT(line.size() + 1, size_t(ADT_LOG_LINE_MAX) - 1) << line;
}

// A loss that lost nothing is not listed on stderr, one that did is.
TEST_F(SummaryLosses, StderrListsOnlyTheLossesThatLostSomething)
{
    adt_run_counters counters{};
    counters.samples_taken = 12;
    counters.samples_kept = 10;
    counters.samples_dropped = 2;
    counters.samples_lost[ADT_SAMPLE_LOST_NO_CHUNK] = 2;
    counters.mpi_files_untracked = 3;
    counters.mpi_files_lost[ADT_MPI_UNTRACKED_COMMUNICATOR] = 3;
    std::string err = publish(counters);
    EXPECT_NE(err.find("samples: 12 taken, 10 kept, 0 removed, 0 skipped (0 while code was being unloaded or "
                       "registered), 2 dropped: 2 no free chunk\n"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("MPI objects not traced, their events missing: 0 requests, 0 communicators, 0 windows, "
                       "3 files (3 files on a communicator adaptrace did not follow)\n"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("0 MPI events (0 dropped)\n"), std::string::npos) << err;
}

// With ADAPTRACE_ONLINE_OUTPUT=profile the samples the stream took never
// reached the buffer: the line says how many before the buffer's counts,
// which alone read as none taken.
TEST_F(SummaryLosses, ProfileOutputSaysTheSamplesStreamedInPlaceOfTheBuffer)
{
    adt_run_counters counters{};
    counters.online_profile_only = 1;
    counters.online_samples_streamed = 3478;
    std::string err = publish(counters);
    EXPECT_NE(err.find("samples: 3478 streamed to the analyzers in place of the buffer "
                       "(ADAPTRACE_ONLINE_OUTPUT=profile); in the buffer 0 taken, 0 kept, 0 removed, 0 skipped"),
              std::string::npos)
        << err;
}

// A flush spills an event chain: offline it held MPI events alone; with
// ADAPTRACE_ONLINE_OUTPUT=trace the main thread's chain also kept its
// samples (they stay there while the analyzer falls behind), and the line
// says so with their count.
TEST_F(SummaryLosses, FlushesSayWhatFilledTheBuffer)
{
    adt_run_counters counters{};
    counters.flushes = 3;
    counters.first_flush_ns = 1500000000;
    std::string err = publish(counters);
    EXPECT_NE(err.find("flushes: MPI events alone filled the buffer (the first time 1.5 s after start)"),
              std::string::npos)
        << err;
    counters.samples_kept = 4242;
    counters.samples_in_event_chains = 4242;
    err = publish(counters);
    EXPECT_EQ(err.find("MPI events alone"), std::string::npos) << err;
    EXPECT_NE(err.find("flushes: the event chains, MPI events and the 4242 samples they kept "
                       "(ADAPTRACE_ONLINE_OUTPUT=trace), filled the buffer (the first time 1.5 s after start)"),
              std::string::npos)
        << err;
    EXPECT_NE(json_value(summary_json(), "samples_in_event_chains"), "") << "the count is in summary.json";
}

} // namespace
