// The run summary over the binomial tree of the ranks, among threads that
// stand for ranks (adt_thread_group_collectives): the totals in
// summary.json equal a gather's combination in rank order, every
// location's line reaches summary.json once, in rank order, and a rank
// whose message fails leaves no rank waiting and no summary.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "../core/capture_stderr.hpp"
#include "../scratch_directory.hpp"
#include "process_support.hpp"

extern "C" {
#include "runtime/runtime_internal.h"
}

namespace {

constexpr uint32_t initial_rate_hz = 1000;

// Rank r's locations: none on every third rank, more than one piece of
// lines (256) on rank 5, a few elsewhere.
uint64_t locations_of(uint32_t rank)
{
    if (rank == 5)
        return 600;
    return rank % 3 == 2 ? 0 : 1 + rank % 4;
}

// Every fourth rank lost its online analyzer, at (rank + 1) / 2 s (500
// ticks per rank of 1000 a second), on each of its lines.
bool analyzer_lost(uint32_t rank) { return rank % 4 == 3; }

std::vector<adt_location_summary> lines_of(uint32_t rank)
{
    std::vector<adt_location_summary> lines(locations_of(rank));
    for (uint64_t i = 0; i < lines.size(); i++)
        lines[i] = adt_location_summary{ rank, i << 32 | rank, (rank + i) % 5, i % 2, 100 * rank + i, 90 * rank + i,
                                         1000 + i, 7 * rank + i, 3 * i, i % 2, 11 * i, {}, {}, 1000, 0,
                                         analyzer_lost(rank), analyzer_lost(rank) ? 500 * (rank + 1) : 0 };
    return lines;
}

// Distinct values for every counter of a rank, of each kind of combination:
// sums and maxima vary with the rank, the earliest time is 0 (none) on some
// ranks, times and means are exact in their printed digits.
adt_run_counters counters_of(uint32_t rank, uint32_t ranks)
{
    adt_run_counters counters{};
    uint64_t row = 0;
#define VALUE_SUM(field) counters.field = 11 * rank + row
#define VALUE_MAX(field) counters.field = (rank * 7 + row) % (ranks + 3)
#define VALUE_EARLIEST(field) counters.field = rank % 4 == 0 ? 0 : 1000000ull * (ranks - rank + row)
#define VALUE_LONGEST(field) counters.field = 0.25 * ((rank * 3 + row) % 9)
#define VALUE_MEAN(field) counters.field = 1000.0 + rank + row
#define SET(combine, field, key, loss, words) \
    VALUE_##combine(field);                   \
    row++;
    ADT_RUN_COUNTERS(SET)
#undef SET
#define SET_CAUSES(field, causes, count, key, loss) \
    for (unsigned cause = 0; cause < count; cause++) \
        counters.field[cause] = 3 * rank + cause;
    ADT_RUN_LOSSES_BY_CAUSE(SET_CAUSES)
#undef SET_CAUSES
    counters.locations = locations_of(rank);
    counters.location_entries = locations_of(rank);
    return counters;
}

// What summary.json says for each counter, combined as a gather to rank 0
// did before the tree: in rank order, means as the sum of value / ranks.
std::map<std::string, double> gathered_totals(uint32_t ranks)
{
    adt_run_counters total{};
    for (uint32_t rank = 0; rank < ranks; rank++) {
        adt_run_counters c = counters_of(rank, ranks);
#define TOTAL_SUM(field) total.field += c.field
#define TOTAL_MAX(field) total.field = std::max(total.field, c.field)
#define TOTAL_LONGEST TOTAL_MAX
#define TOTAL_EARLIEST(field) \
    total.field = c.field != 0 && (total.field == 0 || c.field < total.field) ? c.field : total.field
#define TOTAL_MEAN(field) total.field += c.field / ranks
#define ADD(combine, field, key, loss, words) TOTAL_##combine(field);
        ADT_RUN_COUNTERS(ADD)
#undef ADD
    }
    std::map<std::string, double> totals;
#define PRINTED_SUM(field) double(total.field)
#define PRINTED_MAX PRINTED_SUM
#define PRINTED_EARLIEST(field) total.field / 1e9
#define PRINTED_LONGEST(field) total.field
#define PRINTED_MEAN(field) total.field
#define PRINTED(combine, field, key, loss, words) totals[key] = PRINTED_##combine(field);
    ADT_RUN_COUNTERS(PRINTED)
#undef PRINTED
    return totals;
}

// A rank's receive that reports a failure, after taking the message, on
// its n-th receive from one rank: as a transfer that arrived garbled.
struct FailingReceive {
    adt_collectives inner;
    uint32_t from;
    unsigned nth;
    unsigned received = 0;
};

thread_local FailingReceive *failing_here = nullptr;

int failing_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    FailingReceive *failing = failing_here;
    int rc = failing->inner.recv(context, data, bytes, from);
    if (from == failing->from && failing->received++ == failing->nth)
        return -1;
    return rc;
}

struct Failure {
    uint32_t rank = UINT32_MAX; // the rank whose receive fails; none by default
    uint32_t from = 0;
    unsigned nth = 0;
};

class SummaryTree : public ::testing::Test {
protected:
    void SetUp() override
    {
        archive_ = scratch_.path();
        ASSERT_FALSE(archive_.empty());
    }

    // Publishes every rank's summary from a thread of its own; returns
    // what they wrote on stderr, each rank's result in results_.
    std::string publish(uint32_t ranks, const std::string &archive, Failure failure = {})
    {
        adt_thread_group *group = adt_thread_group_create(ranks);
        EXPECT_NE(group, nullptr);
        results_.assign(ranks, 99);
        std::string err = capture_stderr([&] {
            std::vector<std::thread> threads;
            for (uint32_t rank = 0; rank < ranks; rank++)
                threads.emplace_back([&, rank] {
                    adt_collectives c = adt_thread_group_collectives(group, rank);
                    FailingReceive failing{ c, failure.from, failure.nth };
                    if (rank == failure.rank) {
                        failing_here = &failing;
                        c.recv = failing_recv;
                    }
                    adt_run_counters counters = counters_of(rank, ranks);
                    std::vector<adt_location_summary> lines = lines_of(rank);
                    results_[rank] = adt_summary_publish(&c, &counters, lines.data(), archive.c_str(),
                                                         initial_rate_hz, false, nullptr, "");
                });
            for (std::thread &thread : threads)
                thread.join();
        });
        adt_thread_group_destroy(group);
        return err;
    }

    void expect_totals_and_lines(uint32_t ranks)
    {
        std::string err = publish(ranks, archive_);
        for (uint32_t rank = 0; rank < ranks; rank++)
            EXPECT_EQ(results_[rank], 0) << "rank " << rank << ": " << err;

        std::map<std::string, double> summary = process::read_summary(archive_);
        ASSERT_FALSE(summary.empty()) << err;
        EXPECT_EQ(summary["ranks"], ranks);
        for (const auto &[key, expected] : gathered_totals(ranks)) {
            SCOPED_TRACE(key);
            ASSERT_EQ(summary.count(key), 1u);
            if (key == "delivered_rate_hz" || key == "sample_handler_mean_ns")
                EXPECT_NEAR(summary[key], expected, 0.05) << "printed with one decimal";
            else
                EXPECT_EQ(summary[key], expected);
        }

        std::vector<std::map<std::string, double>> written = process::read_summary_locations(archive_);
        std::vector<adt_location_summary> expected;
        std::map<unsigned, uint64_t> locations_at_shift;
        for (uint32_t rank = 0; rank < ranks; rank++)
            for (const adt_location_summary &line : lines_of(rank)) {
                expected.push_back(line);
                locations_at_shift[line.halvings]++;
            }
        ASSERT_EQ(written.size(), expected.size());
        for (size_t i = 0; i < expected.size(); i++) {
            SCOPED_TRACE("line " + std::to_string(i));
            EXPECT_EQ(written[i]["rank"], expected[i].rank);
            EXPECT_EQ(written[i]["thread"], expected[i].thread);
            EXPECT_EQ(written[i]["halvings"], expected[i].halvings);
            EXPECT_EQ(written[i]["samples_taken"], expected[i].samples_taken);
            EXPECT_EQ(written[i]["samples_kept"], expected[i].samples_kept);
            EXPECT_EQ(written[i]["mpi_events"], expected[i].mpi_events);
        }

        // Which ranks lost their analyzer, and when, from their lines (a
        // rank without lines has none to say it).
        std::string lost_at, without, named;
        uint32_t lost = 0;
        for (uint32_t rank = 0; rank < ranks; rank++) {
            bool listed = analyzer_lost(rank) && locations_of(rank) > 0;
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%.3f", (rank + 1) / 2.0);
            lost_at += (rank ? ", " : "") + (listed ? std::string(seconds) : "null");
            if (listed) {
                without += (lost ? ", " : "") + std::to_string(rank);
                named += (lost ? ", " : "") + std::to_string(rank) + " (at " + seconds + " s)";
                lost++;
            }
        }
        std::string text = process::read_file(archive_ + "/summary.json");
        EXPECT_NE(text.find("\"online_analyzer_lost_at_s_per_rank\": [" + lost_at + "]"), std::string::npos) << text;
        EXPECT_NE(text.find("\"online_ranks_without_analyzer\": [" + without + "]"), std::string::npos) << text;
        bool said = err.find("lost their analyzer") != std::string::npos ||
                    err.find("lost its analyzer") != std::string::npos;
        EXPECT_EQ(said, lost > 0) << err;
        if (lost > 0) {
            EXPECT_NE(err.find(std::to_string(lost) + (lost == 1 ? " rank lost its" : " ranks lost their") +
                               " analyzer and went on with"),
                      std::string::npos)
                << err;
            EXPECT_NE(err.find(": rank" + std::string(lost == 1 ? " " : "s ") + named + "\n"), std::string::npos) << err;
        }

        // stderr gives the locations at each end rate, from every line.
        std::string rates;
        for (const auto &[shift, count] : locations_at_shift) {
            char text[96];
            std::snprintf(text, sizeof text, "%s%.1f Hz on %llu location%s", rates.empty() ? "" : ", ",
                          initial_rate_hz / std::ldexp(1.0, int(shift)), (unsigned long long)count,
                          count == 1 ? "" : "s");
            rates += text;
        }
        EXPECT_NE(err.find("at the end " + rates + " ("), std::string::npos) << err;
    }

    // Every rank returned (none waits for another); only rank 0, which
    // writes the summary, says it failed.
    void expect_only_rank_0_failed() const
    {
        ASSERT_FALSE(results_.empty());
        EXPECT_EQ(results_[0], -1);
        for (size_t rank = 1; rank < results_.size(); rank++)
            EXPECT_EQ(results_[rank], 0) << "rank " << rank;
    }

    bool exists(const std::string &path) const { return access(path.c_str(), F_OK) == 0; }

    ScratchDirectory scratch_{"adt-summary-tree-test"};
    std::string archive_;
    std::vector<int> results_;
};

TEST_F(SummaryTree, OneRank) { expect_totals_and_lines(1); }

TEST_F(SummaryTree, ThreeRanks) { expect_totals_and_lines(3); }

TEST_F(SummaryTree, SixteenRanks) { expect_totals_and_lines(16); }

TEST_F(SummaryTree, ThirtyThreeRanks) { expect_totals_and_lines(33); }

// Rank 2's record from its child 3 does not arrive: rank 0 lacks rank 3's
// counters, says so and writes no summary.json; every rank returns.
TEST_F(SummaryTree, ARecordThatDoesNotArriveLeavesNoSummaryAndNoRankWaiting)
{
    std::string err = publish(16, archive_, Failure{ 2, 3, 0 });
    expect_only_rank_0_failed();
    EXPECT_NE(err.find("cannot gather the run summary of 16 ranks"), std::string::npos) << err;
    EXPECT_FALSE(exists(archive_ + "/summary.json"));
}

// Rank 0's receive of rank 5's second piece of lines fails: rank 5 still
// sends its third, the ranks after it are still asked, and the incomplete
// summary.json is removed.
TEST_F(SummaryTree, LinesThatDoNotArriveLeaveNoSummaryAndNoRankWaiting)
{
    // Rank 5's record goes to rank 4: rank 0 receives from it only its
    // count of lines (receive 0) and its pieces (1, 2, 3).
    std::string err = publish(33, archive_, Failure{ 0, 5, 2 });
    expect_only_rank_0_failed();
    EXPECT_NE(err.find("cannot receive the location lines of rank 5"), std::string::npos) << err;
    EXPECT_FALSE(exists(archive_ + "/summary.json"));
    EXPECT_FALSE(exists(archive_ + "/summary.json.partial"));
}

// Rank 0 cannot create summary.json: no rank waits to be asked for lines.
TEST_F(SummaryTree, ASummaryThatCannotBeCreatedLeavesNoRankWaiting)
{
    std::string missing = archive_ + "/missing";
    std::string err = publish(16, missing);
    expect_only_rank_0_failed();
    EXPECT_NE(err.find("cannot create " + missing + "/summary.json.partial"), std::string::npos) << err;
}

} // namespace
