// The event feed's analyses (feed/feed.h): the MPI profile per function
// and rank, and the sampled profile's exclusive and inclusive figures, as
// adaptrace-report's reader and the analyzer's stream decoder drive them.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <set>
#include <vector>

extern "C" {
#include "feed/feed.h"
}

namespace {

TEST(FeedMpiProfile, CallsAndBytesAddUpPerFunctionAndRank)
{
    adt_feed_mpi_profile profile;
    ASSERT_EQ(adt_feed_mpi_profile_create(&profile, 2, 1, 0), 0);
    ASSERT_EQ(adt_feed_mpi_call(&profile, 0, 0, 100, false), 0);
    ASSERT_EQ(adt_feed_mpi_call(&profile, 1, 0, 50, false), 0);
    ASSERT_EQ(adt_feed_mpi_bytes(&profile, 1, 0, 64, 8), 0);
    // A function beyond the ones made room for: the table grows.
    ASSERT_EQ(adt_feed_mpi_call(&profile, 1, 5, 7, true), 0);
    ASSERT_EQ(adt_feed_mpi_bytes(&profile, 1, 5, 0, 32), 0);
    EXPECT_EQ(profile.functions, 6u);
    EXPECT_EQ(adt_feed_mpi_of(&profile, 0, 0).calls, 1u);
    EXPECT_EQ(adt_feed_mpi_of(&profile, 1, 0).bytes_sent, 64u);
    EXPECT_EQ(adt_feed_mpi_of(&profile, 1, 0).bytes_received, 8u);
    EXPECT_EQ(adt_feed_mpi_of(&profile, 0, 0).bytes_sent, 0u);
    adt_feed_mpi_figures total = adt_feed_mpi_function(&profile, 0);
    EXPECT_EQ(total.calls, 2u);
    EXPECT_EQ(total.ticks, 150u);
    adt_feed_mpi_figures folded = adt_feed_mpi_of(&profile, 1, 5);
    EXPECT_EQ(folded.calls, 1u);
    EXPECT_EQ(folded.estimated_calls, 1u);
    EXPECT_EQ(folded.estimated_ticks, 7u);
    EXPECT_EQ(folded.bytes_received, 32u);
    EXPECT_EQ(adt_feed_mpi_of(&profile, 0, 3).calls, 0u) << "a function between: zeros";
    EXPECT_EQ(adt_feed_mpi_of(&profile, 0, 9).calls, 0u) << "beyond: zeros";
    // Without a clock known from the start, no seconds are summed.
    EXPECT_EQ(adt_feed_mpi_function_seconds(&profile, 0).seconds, 0.0);
    EXPECT_EQ(profile.rank_seconds[1], 0.0);
    adt_feed_mpi_profile_free(&profile);
}

TEST(FeedMpiProfile, ARankThatIsNoneIsRefused)
{
    adt_feed_mpi_profile profile;
    ASSERT_EQ(adt_feed_mpi_profile_create(&profile, 2, 1, 0), 0);
    EXPECT_EQ(adt_feed_mpi_call(&profile, 2, 0, 1, false), -1);
    EXPECT_EQ(adt_feed_mpi_bytes(&profile, 2, 0, 1, 1), -1);
    EXPECT_EQ(adt_feed_mpi_function(&profile, 0).calls, 0u);
    adt_feed_mpi_profile_free(&profile);
}

// The stream's totals records: calls a rank could only send as sums.
TEST(FeedMpiProfile, SumsAddToTheCallsOneByOne)
{
    adt_feed_mpi_profile profile;
    ASSERT_EQ(adt_feed_mpi_profile_create(&profile, 1, 2, 0), 0);
    ASSERT_EQ(adt_feed_mpi_call(&profile, 0, 1, 250, false), 0);
    adt_feed_mpi_figures sums{};
    sums.calls = 1000;
    sums.ticks = 7000;
    sums.bytes_sent = 64000;
    sums.bytes_received = 3;
    ASSERT_EQ(adt_feed_mpi_sums(&profile, 0, 1, &sums), 0);
    adt_feed_mpi_figures figures = adt_feed_mpi_of(&profile, 0, 1);
    EXPECT_EQ(figures.calls, 1001u);
    EXPECT_EQ(figures.ticks, 7250u);
    EXPECT_EQ(figures.bytes_sent, 64000u);
    EXPECT_EQ(figures.bytes_received, 3u);
    EXPECT_EQ(adt_feed_mpi_rank_ticks(&profile, 0), 7250u);
    adt_feed_mpi_profile_free(&profile);
}

// With the clock known from the start, each call's seconds are added in
// the order the calls came (adaptrace-report's figures, to the bit), per
// function and per rank, the estimated ones apart too.
TEST(FeedMpiProfile, SecondsAreSummedCallByCallInTheOrderTheyCame)
{
    const uint64_t rate = 2400000001u;  // ticks whose seconds are inexact
    const uint64_t ticks[] = {3, 1000000007, 5, 999999937, 11, 7, 123456789, 1};
    adt_feed_mpi_profile profile;
    ASSERT_EQ(adt_feed_mpi_profile_create(&profile, 2, 1, rate), 0);
    double function_seconds = 0.0, rank_seconds[2] = {0.0, 0.0}, estimated = 0.0;
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        uint32_t rank = static_cast<uint32_t>(i % 2);
        bool folded = i % 3 == 0;
        ASSERT_EQ(adt_feed_mpi_call(&profile, rank, 0, ticks[i], folded), 0);
        double seconds = static_cast<double>(ticks[i]) / static_cast<double>(rate);
        function_seconds += seconds;
        rank_seconds[rank] += seconds;
        estimated += folded ? seconds : 0.0;
    }
    EXPECT_EQ(adt_feed_mpi_function_seconds(&profile, 0).seconds, function_seconds);
    EXPECT_EQ(adt_feed_mpi_function_seconds(&profile, 0).estimated_seconds, estimated);
    EXPECT_EQ(profile.rank_seconds[0], rank_seconds[0]);
    EXPECT_EQ(profile.rank_seconds[1], rank_seconds[1]);
    adt_feed_mpi_profile_free(&profile);
}

TEST(FeedMatrix, MessagesAddUpPerSenderAndReceiver)
{
    adt_feed_matrix matrix{};
    ASSERT_EQ(adt_feed_matrix_create(&matrix, 3), 0);
    EXPECT_EQ(adt_feed_message(&matrix, 0, 2, 100), 0);
    EXPECT_EQ(adt_feed_message(&matrix, 0, 2, 28), 0);
    EXPECT_EQ(adt_feed_message(&matrix, 2, 0, 0), 0);
    EXPECT_EQ(adt_feed_message(&matrix, 1, 1, 8), 0) << "a rank's message to itself";
    // Row sends to column.
    EXPECT_EQ(matrix.messages[0 * 3 + 2], 2u);
    EXPECT_EQ(matrix.bytes[0 * 3 + 2], 128u);
    EXPECT_EQ(matrix.messages[2 * 3 + 0], 1u);
    EXPECT_EQ(matrix.bytes[2 * 3 + 0], 0u);
    EXPECT_EQ(matrix.messages[1 * 3 + 1], 1u);
    EXPECT_EQ(matrix.messages[2 * 3 + 1], 0u);
    EXPECT_EQ(adt_feed_message(&matrix, 3, 0, 1), -1) << "a sender that is no rank";
    EXPECT_EQ(adt_feed_message(&matrix, 0, 3, 1), -1) << "a receiver that is no rank";
    uint64_t messages = 0;
    for (int cell = 0; cell < 9; cell++)
        messages += matrix.messages[cell];
    EXPECT_EQ(messages, 4u) << "nothing added for the refused ones";
    adt_feed_matrix_free(&matrix);
    EXPECT_EQ(matrix.bytes, nullptr);
}

// A producer's totals (the stream's per-receiver totals records) add
// their count of messages at once.
TEST(FeedMatrix, TotalsAddTheirCountOfMessages)
{
    adt_feed_matrix matrix{};
    ASSERT_EQ(adt_feed_matrix_create(&matrix, 2), 0);
    EXPECT_EQ(adt_feed_message(&matrix, 1, 0, 10), 0);
    EXPECT_EQ(adt_feed_messages(&matrix, 1, 0, 500, 5000), 0);
    EXPECT_EQ(matrix.messages[1 * 2 + 0], 501u);
    EXPECT_EQ(matrix.bytes[1 * 2 + 0], 5010u);
    EXPECT_EQ(adt_feed_messages(&matrix, 1, 2, 7, 70), -1) << "a receiver that is no rank";
    EXPECT_EQ(matrix.messages[0] + matrix.messages[1] + matrix.messages[2] + matrix.messages[3], 501u);
    adt_feed_matrix_free(&matrix);
}

struct RankFigures {
    double span;
    double mpi;
};

TEST(FeedSpread, MinMeanMaxAndImbalanceOfAFieldOverTheRanks)
{
    const RankFigures ranks[] = {{10.0, 1.0}, {10.0, 3.0}, {10.0, 2.0}, {10.0, 6.0}};
    adt_feed_spread spread = adt_feed_spread_of(&ranks[0].mpi, 4, sizeof ranks[0]);
    EXPECT_EQ(spread.min, 1.0);
    EXPECT_EQ(spread.max, 6.0);
    EXPECT_EQ(spread.mean, 3.0);
    EXPECT_EQ(spread.imbalance, 2.0);
    const double none[] = {0.0, 0.0};
    spread = adt_feed_spread_of(none, 2, sizeof none[0]);
    EXPECT_EQ(spread.imbalance, 1.0) << "no time anywhere: balanced";
    spread = adt_feed_spread_of(nullptr, 0, sizeof(double));
    EXPECT_EQ(spread.mean, 0.0);
    EXPECT_EQ(spread.imbalance, 1.0);
}

TEST(FeedOrder, IndicesByAFieldLargestFirstEqualOnesByIndex)
{
    const RankFigures ranks[] = {{10.0, 1.0}, {10.0, 3.0}, {10.0, 1.0}, {10.0, 6.0}, {10.0, 3.0}};
    uint32_t *order = adt_feed_order_by(ranks, 5, sizeof ranks[0], offsetof(RankFigures, mpi));
    ASSERT_NE(order, nullptr);
    EXPECT_EQ(std::vector<uint32_t>(order, order + 5), (std::vector<uint32_t>{3, 1, 4, 0, 2}));
    free(order);
    order = adt_feed_order_by(nullptr, 0, sizeof(double), 0);
    EXPECT_NE(order, nullptr) << "no elements: an empty order, not a failure";
    free(order);
}

TEST(FeedOrder, RanksWaitingMostByTheirLateSenderAndCollectiveTicks)
{
    // Rank 1 waits most in sum though rank 0 has the most late sender
    // ticks; ranks 2 and 3 wait as long in sum, split otherwise: by rank.
    const uint64_t late_sender[] = {50, 30, 10, 0, 0};
    const uint64_t collective[] = {0, 40, 5, 15, 0};
    uint32_t *order = adt_feed_ranks_waiting_most(late_sender, collective, 5);
    ASSERT_NE(order, nullptr);
    EXPECT_EQ(std::vector<uint32_t>(order, order + 5), (std::vector<uint32_t>{1, 0, 2, 3, 4}));
    free(order);
}

enum { kMain, kSolve, kKernel, kFunctions };

TEST(FeedSpan, FromTheEarliestToTheLatestEventInWhateverOrderTheyCame)
{
    adt_feed_span span = {};
    // A stream's chunk headers: the earliest and latest so far, a sample
    // taken before MPI_Init's Enter coming after it.
    adt_feed_span_event(&span, 1000);
    adt_feed_span_event(&span, 5000);
    adt_feed_span_event(&span, 400);
    adt_feed_span_event(&span, 4000);
    EXPECT_TRUE(span.seen);
    EXPECT_EQ(span.first, 400u);
    EXPECT_EQ(span.last, 5000u);
    adt_feed_rank_time time = adt_feed_rank_time_of(&span, 1000, 1.5);
    EXPECT_EQ(time.span_seconds, 4.6);
    EXPECT_EQ(time.mpi_seconds, 1.5);
    EXPECT_DOUBLE_EQ(time.computation_seconds, 3.1);
    // The division adaptrace-report made before the feed had it: the
    // ticks over the resolution, each as a double, to the bit.
    EXPECT_EQ(time.span_seconds, (double)(5000 - 400) / (double)1000);
}

TEST(FeedSpan, NoEventNoClockOrMoreMpiThanSpanLeaveZeros)
{
    adt_feed_span none = {};
    adt_feed_rank_time time = adt_feed_rank_time_of(&none, 1000, 0.25);
    EXPECT_EQ(time.span_seconds, 0.0);
    EXPECT_EQ(time.computation_seconds, 0.0) << "no negative computation";
    adt_feed_span one = {};
    adt_feed_span_event(&one, 7);
    EXPECT_EQ(adt_feed_rank_time_of(&one, 1000, 0).span_seconds, 0.0) << "a single event spans nothing";
    adt_feed_span_event(&one, 2007);
    EXPECT_EQ(adt_feed_rank_time_of(&one, 0, 0).span_seconds, 0.0) << "no clock rate known yet";
    // Time in MPI beyond the span (another thread's calls count too).
    time = adt_feed_rank_time_of(&one, 1000, 3.0);
    EXPECT_EQ(time.span_seconds, 2.0);
    EXPECT_EQ(time.computation_seconds, 0.0);
}

TEST(FeedSegments, InstancesOfAKeySumUpWithQuantilesLongestAndSlowestRank)
{
    adt_feed_segments segments = {};
    // Barrier -> Allreduce on locations 0 and 1 (ranks 0 and 1): 8 steps
    // of 100 ticks, location 1's step 5 of 800; and one other key.
    for (uint32_t step = 0; step < 8; step++) {
        ASSERT_EQ(adt_feed_segment(&segments, 7, 9, 0, 100, false), 0);
        ASSERT_EQ(adt_feed_segment(&segments, 7, 9, 1, step == 5 ? 800 : 100, step == 7), 0);
    }
    ASSERT_EQ(adt_feed_segment(&segments, 9, 7, 0, 50, false), 0);
    ASSERT_EQ(segments.key_count, 2u);
    const uint32_t location_ranks[] = {0, 1};
    adt_feed_segment_figures figures[2];
    ASSERT_EQ(adt_feed_segments_summarise(&segments, location_ranks, 2, 1000, figures), 0);
    const adt_feed_segment_figures &step = figures[0];
    EXPECT_EQ(step.from_call, 7u);
    EXPECT_EQ(step.to_call, 9u);
    EXPECT_EQ(step.count, 16u);
    EXPECT_DOUBLE_EQ(step.total_seconds, 2.3);
    EXPECT_DOUBLE_EQ(step.mean_seconds, 2.3 / 16);
    EXPECT_DOUBLE_EQ(step.min_seconds, 0.1);
    EXPECT_DOUBLE_EQ(step.median_seconds, 0.1);
    EXPECT_DOUBLE_EQ(step.p95_seconds, 0.8) << "nearest rank: the 16th of 16";
    EXPECT_DOUBLE_EQ(step.max_seconds, 0.8);
    EXPECT_EQ(step.max_rank, 1u);
    EXPECT_EQ(step.max_iteration, 5u);
    EXPECT_EQ(step.slowest_rank, 1u);
    EXPECT_DOUBLE_EQ(step.slowest_rank_mean_seconds, 1.5 / 8);
    EXPECT_EQ(step.estimated_count, 1u);
    EXPECT_EQ(step.histogram[0], 15u);
    EXPECT_EQ(step.histogram[ADT_FEED_SEGMENT_BINS - 1], 1u) << "the longest alone in the last bin";
    EXPECT_EQ(figures[1].count, 1u);
    EXPECT_EQ(figures[1].histogram[0], 1u) << "one instance: no width, the first bin";
    adt_feed_segments_free(&segments);
    EXPECT_EQ(segments.key_count, 0u);
}

TEST(FeedSegments, EqualLongestInstancesGiveTheLowestRanksFirstWhateverTheFeedingOrder)
{
    // Ranks 0 and 1 (locations 1 and 0: numbered otherwise) each with a
    // longest instance of 50 ticks, fed rank 1 first, then rank 0 first.
    const uint32_t location_ranks[] = {1, 0};
    for (int rank_1_first = 0; rank_1_first < 2; rank_1_first++) {
        adt_feed_segments segments = {};
        const uint32_t order[2][2] = {{1, 0}, {0, 1}};
        for (uint32_t location : order[rank_1_first]) {
            ASSERT_EQ(adt_feed_segment(&segments, 1, 2, location, 10, false), 0);
            ASSERT_EQ(adt_feed_segment(&segments, 1, 2, location, 50, false), 0);
            ASSERT_EQ(adt_feed_segment(&segments, 1, 2, location, 50, false), 0);
        }
        adt_feed_segment_figures figures;
        ASSERT_EQ(adt_feed_segments_summarise(&segments, location_ranks, 2, 1000, &figures), 0);
        EXPECT_EQ(figures.max_rank, 0u) << rank_1_first;
        EXPECT_EQ(figures.max_iteration, 1u) << "its first longest";
        adt_feed_segments_free(&segments);
    }
}

TEST(FeedSegments, ManyKeysGrowTheTableAndKeepTheirOrder)
{
    adt_feed_segments segments = {};
    for (uint64_t key = 0; key < 1000; key++)
        for (uint64_t again = 0; again < 2; again++)
            ASSERT_EQ(adt_feed_segment(&segments, key, key + 1, 0, key + again, false), 0);
    ASSERT_EQ(segments.key_count, 1000u);
    for (size_t k = 0; k < segments.key_count; k++) {
        EXPECT_EQ(segments.keys[k].from_call, k);
        EXPECT_EQ(segments.keys[k].count, 2u);
    }
    adt_feed_segments_free(&segments);
}

TEST(FeedSampledProfile, ASampleCountsForItsFunctionAndOnceForEveryFunctionOnItsPath)
{
    adt_feed_samples samples{};
    samples.counters = 1;
    // main -> solve -> solve (recursion) -> kernel, and main -> solve.
    ASSERT_EQ(adt_feed_context_define(&samples, 1, ADT_FEED_NO_PARENT, kMain), 0);
    ASSERT_EQ(adt_feed_context_define(&samples, 2, 1, kSolve), 0);
    ASSERT_EQ(adt_feed_context_define(&samples, 3, 2, kSolve), 0);
    ASSERT_EQ(adt_feed_context_define(&samples, 4, 3, kKernel), 0);
    const double cycles[] = {100.0};
    ASSERT_EQ(adt_feed_sample(&samples, 4, 0.001, cycles), 0);
    ASSERT_EQ(adt_feed_sample(&samples, 4, 0.002, nullptr), 0);
    ASSERT_EQ(adt_feed_sample(&samples, 2, 0.001, cycles), 0);
    adt_feed_function_profile functions[kFunctions] = {};
    ASSERT_EQ(adt_feed_sampled_functions(&samples, functions, kFunctions), 0);
    EXPECT_EQ(functions[kMain].exclusive_samples, 0u);
    EXPECT_EQ(functions[kMain].inclusive_samples, 3u);
    EXPECT_EQ(functions[kSolve].exclusive_samples, 1u);
    EXPECT_EQ(functions[kSolve].inclusive_samples, 3u) << "recursion counts once";
    EXPECT_EQ(functions[kKernel].exclusive_samples, 2u);
    EXPECT_EQ(functions[kKernel].inclusive_samples, 2u);
    EXPECT_DOUBLE_EQ(functions[kKernel].exclusive_seconds, 0.003);
    EXPECT_DOUBLE_EQ(functions[kSolve].inclusive_seconds, 0.004);
    EXPECT_EQ(functions[kKernel].exclusive_counts[0], 100.0);
    EXPECT_EQ(functions[kSolve].exclusive_counts[0], 100.0);
    EXPECT_EQ(functions[kMain].inclusive_counts[0], 200.0);
    adt_feed_samples_free(&samples);
}

// The archive's reader gives the samples first and the contexts'
// functions at the end; nodes without a function are passed over.
TEST(FeedSampledProfile, SamplesBeforeTheirNodesFunctionStayAndNodesWithoutOneArePassedOver)
{
    adt_feed_samples samples{};
    ASSERT_EQ(adt_feed_sample(&samples, 2, 0.5, nullptr), 0);
    ASSERT_EQ(adt_feed_sample(&samples, 7, 0.25, nullptr), 0);  // never given a function
    ASSERT_EQ(adt_feed_context_define(&samples, 0, ADT_FEED_NO_PARENT, kMain), 0);
    ASSERT_EQ(adt_feed_context_define(&samples, 1, 0, ADT_FEED_NO_FUNCTION), 0);
    ASSERT_EQ(adt_feed_context_define(&samples, 2, 1, kKernel), 0);
    adt_feed_function_profile functions[kFunctions] = {};
    ASSERT_EQ(adt_feed_sampled_functions(&samples, functions, kFunctions), 0);
    EXPECT_EQ(functions[kKernel].exclusive_samples, 1u);
    EXPECT_EQ(functions[kKernel].exclusive_seconds, 0.5);
    EXPECT_EQ(functions[kMain].inclusive_samples, 1u) << "above the node without a function";
    EXPECT_EQ(functions[kMain].exclusive_samples, 0u);
    EXPECT_EQ(functions[kSolve].inclusive_samples, 0u);
    adt_feed_samples_free(&samples);
}

TEST(FeedSampledProfile, ANodeBeyondTheLimitIsRefused)
{
    adt_feed_samples samples{};
    EXPECT_EQ(adt_feed_context_define(&samples, ADT_FEED_CONTEXTS_MAX, ADT_FEED_NO_PARENT, kMain), -1);
    EXPECT_EQ(adt_feed_sample(&samples, ADT_FEED_CONTEXTS_MAX, 1.0, nullptr), -1);
    EXPECT_EQ(samples.count, 0u);
    adt_feed_samples_free(&samples);
}

// Property: on random trees, each function's figures are those of the
// definition: exclusive, the samples whose node is its own; inclusive,
// the samples with it anywhere on their path, once each.
TEST(FeedSampledProfile, RandomTreesAgreeWithTheDefinition)
{
    std::mt19937 random(28);
    for (int round = 0; round < 200; round++) {
        const uint32_t nodes = 1 + random() % 60, functions = 1 + random() % 8;
        adt_feed_samples samples{};
        std::vector<uint32_t> parent(nodes), function(nodes);
        std::vector<uint64_t> taken(nodes, 0);
        for (uint32_t id = 0; id < nodes; id++) {
            parent[id] = id == 0 || random() % 5 == 0 ? ADT_FEED_NO_PARENT : static_cast<uint32_t>(random() % id);
            function[id] = static_cast<uint32_t>(random() % functions);
            ASSERT_EQ(adt_feed_context_define(&samples, id, parent[id], function[id]), 0);
        }
        for (int s = 0; s < 300; s++) {
            uint32_t id = static_cast<uint32_t>(random() % nodes);
            taken[id]++;
            ASSERT_EQ(adt_feed_sample(&samples, id, 1.0, nullptr), 0);
        }
        std::vector<adt_feed_function_profile> profile(functions);
        ASSERT_EQ(adt_feed_sampled_functions(&samples, profile.data(), functions), 0);
        std::vector<uint64_t> exclusive(functions, 0), inclusive(functions, 0);
        for (uint32_t id = 0; id < nodes; id++) {
            exclusive[function[id]] += taken[id];
            std::set<uint32_t> on_path;
            for (uint32_t node = id; node != ADT_FEED_NO_PARENT; node = parent[node])
                on_path.insert(function[node]);
            for (uint32_t f : on_path)
                inclusive[f] += taken[id];
        }
        for (uint32_t f = 0; f < functions; f++) {
            EXPECT_EQ(profile[f].exclusive_samples, exclusive[f]) << "round " << round << " function " << f;
            EXPECT_EQ(profile[f].inclusive_samples, inclusive[f]) << "round " << round << " function " << f;
            EXPECT_EQ(profile[f].inclusive_seconds, static_cast<double>(inclusive[f]));
        }
        adt_feed_samples_free(&samples);
    }
}

// ---- Waiting: late sender and collective waiting ----

adt_feed_message_end End(uint32_t sender, uint32_t receiver, uint32_t tag, uint64_t enter, uint32_t comm = 0)
{
    adt_feed_message_end end{};
    end.comm = comm;
    end.sender = sender;
    end.receiver = receiver;
    end.tag = tag;
    end.bytes = 8;
    end.time = enter + 1;
    end.enter_time = enter;
    return end;
}

TEST(FeedWaiting, AReceiveEnteredBeforeItsSendWaitsForTheSenderEitherEndFirst)
{
    for (bool send_first : { true, false }) {
        adt_feed_waiting waiting;
        ASSERT_EQ(adt_feed_waiting_create(&waiting, 2), 0);
        adt_feed_message_end send = End(1, 0, 5, 300), receive = End(1, 0, 5, 100);
        if (send_first) {
            ASSERT_EQ(adt_feed_message_end_add(&waiting, true, &send), 0);
            ASSERT_EQ(adt_feed_message_end_add(&waiting, false, &receive), 0);
        } else {
            ASSERT_EQ(adt_feed_message_end_add(&waiting, false, &receive), 0);
            ASSERT_EQ(adt_feed_message_end_add(&waiting, true, &send), 0);
        }
        EXPECT_EQ(waiting.late_sender_ticks[0], 200u) << "the receiver waited";
        EXPECT_EQ(waiting.late_sender_ticks[1], 0u);
        EXPECT_EQ(waiting.messages_matched, 1u);
        EXPECT_EQ(waiting.message_ends, 2u);
        adt_feed_waiting_free(&waiting);
    }
}

TEST(FeedWaiting, ASendEnteredFirstMakesNoLateSender)
{
    adt_feed_waiting waiting;
    ASSERT_EQ(adt_feed_waiting_create(&waiting, 2), 0);
    adt_feed_message_end send = End(0, 1, 0, 100), receive = End(0, 1, 0, 300);
    ASSERT_EQ(adt_feed_message_end_add(&waiting, true, &send), 0);
    ASSERT_EQ(adt_feed_message_end_add(&waiting, false, &receive), 0);
    EXPECT_EQ(waiting.late_sender_ticks[1], 0u);
    EXPECT_EQ(waiting.messages_matched, 1u);
    adt_feed_waiting_free(&waiting);
}

struct Matches {
    std::vector<std::pair<uint64_t, uint64_t>> messages; // send enter, receive enter
    std::vector<std::vector<uint32_t>> collectives;      // the members' ranks
};

void OnMatched(void *data, const adt_feed_message_end *send, const adt_feed_message_end *receive)
{
    static_cast<Matches *>(data)->messages.emplace_back(send->enter_time, receive->enter_time);
}

void OnCollective(void *data, const adt_feed_collective_entry *entries, uint32_t count)
{
    std::vector<uint32_t> ranks;
    for (uint32_t i = 0; i < count; i++)
        ranks.push_back(entries[i].rank);
    static_cast<Matches *>(data)->collectives.push_back(ranks);
}

// MPI keeps the order of one (communicator, sender, receiver, tag): the
// n-th send of a key matches its n-th receive; other tags and
// communicators are other keys.
TEST(FeedWaiting, TheNthSendOfAKeyMatchesItsNthReceive)
{
    adt_feed_waiting waiting;
    ASSERT_EQ(adt_feed_waiting_create(&waiting, 2), 0);
    Matches matches;
    waiting.matched = OnMatched;
    waiting.data = &matches;
    std::vector<adt_feed_message_end> sends = { End(0, 1, 1, 10), End(0, 1, 2, 20), End(0, 1, 1, 30),
                                                End(0, 1, 1, 40, 7) };
    std::vector<adt_feed_message_end> receives = { End(0, 1, 1, 11, 7), End(0, 1, 2, 21), End(0, 1, 1, 31),
                                                   End(0, 1, 1, 41) };
    for (const auto &send : sends)
        ASSERT_EQ(adt_feed_message_end_add(&waiting, true, &send), 0);
    for (const auto &receive : receives)
        ASSERT_EQ(adt_feed_message_end_add(&waiting, false, &receive), 0);
    std::vector<std::pair<uint64_t, uint64_t>> expected = { { 40, 11 }, { 20, 21 }, { 10, 31 }, { 30, 41 } };
    EXPECT_EQ(matches.messages, expected);
    EXPECT_EQ(waiting.late_sender_ticks[1], 29u) << "only the send on communicator 7 came after its receive";
    adt_feed_waiting_free(&waiting);
}

TEST(FeedWaiting, EndsWithoutTheirOtherSideStayUnmatched)
{
    adt_feed_waiting waiting;
    ASSERT_EQ(adt_feed_waiting_create(&waiting, 3), 0);
    adt_feed_message_end send = End(0, 1, 0, 10), other = End(2, 1, 0, 20), receive = End(0, 2, 0, 5);
    ASSERT_EQ(adt_feed_message_end_add(&waiting, true, &send), 0);
    ASSERT_EQ(adt_feed_message_end_add(&waiting, false, &other), 0);
    ASSERT_EQ(adt_feed_message_end_add(&waiting, false, &receive), 0);
    EXPECT_EQ(waiting.messages_matched, 0u);
    EXPECT_EQ(waiting.message_ends, 3u);
    adt_feed_message_end beyond = End(0, 3, 0, 1);
    EXPECT_EQ(adt_feed_message_end_add(&waiting, true, &beyond), -1) << "rank 3 of 3";
    EXPECT_EQ(waiting.message_ends, 3u);
    adt_feed_waiting_free(&waiting);
}

adt_feed_collective_entry Entry(uint32_t rank, uint64_t enter)
{
    return adt_feed_collective_entry{ rank, rank, enter, enter + 1000 };
}

TEST(FeedWaiting, EachMemberWaitsForTheLastMemberToEnter)
{
    adt_feed_waiting waiting;
    ASSERT_EQ(adt_feed_waiting_create(&waiting, 3), 0);
    Matches matches;
    waiting.collective_matched = OnCollective;
    waiting.data = &matches;
    for (auto entry : { Entry(0, 10), Entry(2, 30) })
        ASSERT_EQ(adt_feed_collective_end(&waiting, 4, 3, &entry), 0);
    EXPECT_EQ(waiting.collectives_matched, 0u) << "rank 1 has not finished it";
    auto last = Entry(1, 20);
    ASSERT_EQ(adt_feed_collective_end(&waiting, 4, 3, &last), 0);
    EXPECT_EQ(waiting.collectives_matched, 1u);
    EXPECT_EQ(waiting.collective_wait_ticks[0], 20u);
    EXPECT_EQ(waiting.collective_wait_ticks[1], 10u);
    EXPECT_EQ(waiting.collective_wait_ticks[2], 0u) << "the last to enter waits for nobody";
    EXPECT_EQ(matches.collectives, (std::vector<std::vector<uint32_t>>{ { 0, 2, 1 } }));
    auto beyond = Entry(3, 0);
    EXPECT_EQ(adt_feed_collective_end(&waiting, 4, 3, &beyond), -1);
    adt_feed_waiting_free(&waiting);
}

// A rank's n-th collective on a communicator is instance n, however far
// ahead of the others it is; instances on other communicators are apart.
TEST(FeedWaiting, ARanksNthCollectiveOnACommunicatorIsInstanceN)
{
    adt_feed_waiting waiting;
    ASSERT_EQ(adt_feed_waiting_create(&waiting, 2), 0);
    for (auto entry : { Entry(0, 100), Entry(0, 200), Entry(0, 300) })
        ASSERT_EQ(adt_feed_collective_end(&waiting, 0, 2, &entry), 0);
    auto self = Entry(1, 5);
    ASSERT_EQ(adt_feed_collective_end(&waiting, 1, 1, &self), 0) << "a communicator of one";
    EXPECT_EQ(waiting.collectives_matched, 1u);
    for (auto entry : { Entry(1, 150), Entry(1, 160) })
        ASSERT_EQ(adt_feed_collective_end(&waiting, 0, 2, &entry), 0);
    EXPECT_EQ(waiting.collectives_matched, 3u);
    EXPECT_EQ(waiting.collective_wait_ticks[0], 50u) << "instance 0: rank 0 entered at 100, rank 1 at 150";
    EXPECT_EQ(waiting.collective_wait_ticks[1], 40u) << "instance 1: rank 1 entered at 160, rank 0 at 200";
    adt_feed_waiting_free(&waiting);
}

// Any producer: each rank's ends come in its own order, the ranks'
// interleaved in any way (an archive's locations read one after another,
// a stream's chunks as they arrive): the figures are the same.
TEST(FeedWaiting, TheFiguresDoNotDependOnHowTheRanksInterleave)
{
    const uint32_t ranks = 4;
    std::mt19937 random(28);
    // Per rank, its ends in program order: a ring of sends then receives
    // (sends before receives: no deadlock), and an allreduce-like
    // collective on communicator 3 after each round.
    struct Event {
        int kind; // 0 send, 1 receive, 2 collective
        adt_feed_message_end end;
        adt_feed_collective_entry entry;
    };
    std::vector<std::vector<Event>> per_rank(ranks);
    for (uint32_t round = 0; round < 20; round++) {
        std::vector<uint64_t> collective_enter(ranks);
        for (uint32_t r = 0; r < ranks; r++) {
            uint32_t next = (r + 1) % ranks, previous = (r + ranks - 1) % ranks;
            uint64_t base = round * 10000;
            per_rank[r].push_back({ 0, End(r, next, round % 3, base + random() % 1000), {} });
            per_rank[r].push_back({ 1, End(previous, r, round % 3, base + random() % 1000), {} });
            per_rank[r].push_back({ 2, {}, Entry(r, base + 5000 + random() % 1000) });
        }
    }
    auto run = [&](std::mt19937 &order) {
        adt_feed_waiting waiting;
        EXPECT_EQ(adt_feed_waiting_create(&waiting, ranks), 0);
        std::vector<size_t> at(ranks);
        size_t left = 0;
        for (const auto &events : per_rank)
            left += events.size();
        for (; left > 0; left--) {
            uint32_t r;
            do
                r = order() % ranks;
            while (at[r] == per_rank[r].size());
            const Event &event = per_rank[r][at[r]++];
            if (event.kind == 2)
                EXPECT_EQ(adt_feed_collective_end(&waiting, 3, ranks, &event.entry), 0);
            else
                EXPECT_EQ(adt_feed_message_end_add(&waiting, event.kind == 0, &event.end), 0);
        }
        std::vector<uint64_t> figures(waiting.late_sender_ticks, waiting.late_sender_ticks + ranks);
        figures.insert(figures.end(), waiting.collective_wait_ticks, waiting.collective_wait_ticks + ranks);
        figures.push_back(waiting.messages_matched);
        figures.push_back(waiting.collectives_matched);
        adt_feed_waiting_free(&waiting);
        return figures;
    };
    std::mt19937 first_order(1);
    std::vector<uint64_t> expected = run(first_order);
    EXPECT_EQ(expected[2 * ranks], 20u * ranks);
    EXPECT_EQ(expected[2 * ranks + 1], 20u);
    uint64_t late = 0;
    for (uint32_t r = 0; r < ranks; r++)
        late += expected[r];
    EXPECT_GT(late, 0u);
    for (unsigned seed = 2; seed < 50; seed++) {
        std::mt19937 order(seed);
        EXPECT_EQ(run(order), expected) << "interleaving " << seed;
    }
}

// Numbered by the producer, a rank's collective end lost before the feed
// leaves its instance incomplete and the later ones in place; numbers that
// do not grow are refused.
TEST(FeedWaiting, ProducerNumberedCollectivesSurviveALostEnd)
{
    adt_feed_waiting waiting{};
    ASSERT_EQ(adt_feed_waiting_create(&waiting, 2), 0);
    auto end = [&](uint32_t rank, uint64_t enter, uint64_t sequence) {
        adt_feed_collective_entry entry{rank, rank, enter, enter + 1};
        return adt_feed_collective_end_numbered(&waiting, 0, 2, &entry, sequence);
    };
    EXPECT_EQ(end(0, 100, 0), 0);
    EXPECT_EQ(end(0, 300, 1), 0);
    EXPECT_EQ(end(0, 500, 2), 0);
    EXPECT_EQ(end(1, 150, 0), 0);
    EXPECT_EQ(end(1, 520, 2), 0) << "rank 1's instance 1 was lost";
    EXPECT_EQ(waiting.collectives_matched, 2u);
    EXPECT_EQ(waiting.collective_wait_ticks[0], 70u);
    EXPECT_EQ(waiting.collective_wait_ticks[1], 0u);
    EXPECT_EQ(end(1, 600, 2), -1) << "instance 2 again";
    EXPECT_EQ(waiting.collectives_matched, 2u);
    adt_feed_waiting_free(&waiting);
}

}  // namespace
