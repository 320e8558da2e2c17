// Concurrency with real signals: several threads append events while a
// POSIX timer per thread (CLOCK_MONOTONIC, SIGEV_THREAD_ID) interrupts them
// with a handler that appends samples to the same thread's location. The
// arena is small and the pre-flush callback drops levels, also of other
// locations, so removals race with appends. Afterwards every event must be
// there, in order, byte-identical, the samples must be exactly those
// stored with n ≡ 0 mod 2^k, each with its own payload, and every drop
// (from a handler or another thread) must have stamped the shift it
// reached, in order of the shift.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buffer/buffer.h"
#include "test_support.h"

namespace {

constexpr int kThreads = 4;
constexpr uint32_t kEventsPerThread = 3000;
constexpr uint64_t kSamplesWanted = 1500;          // per thread, enough to force removals
constexpr uint64_t kGiveUpNs = 60ull * 1000000000; // no timer signals at all: fail, not hang
constexpr long kTimerPeriodNs = 250000;            // 4 kHz
constexpr size_t kSampleLogCapacity = 1 << 17;
constexpr uint32_t kMaxSamplePayload = 320;
constexpr int kSignal = SIGPROF;
constexpr size_t kArenaBytes = 320 * 4096;
constexpr size_t kChunkBytes = 4096;

// Deterministic bytes from a seed; async-signal-safe.
void fill_payload(uint8_t *out, uint32_t size, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (uint32_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out[i] = static_cast<uint8_t>(x);
    }
}

uint32_t sample_payload_size(uint64_t index)
{
    return 64 + static_cast<uint32_t>(index * 37 % (kMaxSamplePayload - 64 + 1));
}

uint32_t event_payload_size(uint32_t index)
{
    return index * 13 % 97;
}

uint64_t sample_seed(int thread, uint64_t index)
{
    return (static_cast<uint64_t>(thread) << 40) | index;
}

uint64_t event_seed(int thread, uint32_t index)
{
    return (static_cast<uint64_t>(thread + 100) << 40) | index;
}

struct SampleEntry {
    uint64_t number;
    uint64_t time;
    adt_append_status status;
};

struct ThreadState {
    int thread = 0;
    adt_location *location = nullptr;
    std::vector<SampleEntry> log = std::vector<SampleEntry>(kSampleLogCapacity);
    std::atomic<size_t> samples{0};
    bool timed_out = false;
    int setup_error = 0;
    std::vector<adt_append_status> event_status = std::vector<adt_append_status>(kEventsPerThread);
    std::vector<uint64_t> event_time = std::vector<uint64_t>(kEventsPerThread);
};

thread_local ThreadState *tls_state;
std::atomic<uint64_t> preflush_calls{0};
std::atomic<uint64_t> preflush_from_sample{0};
std::atomic<uint64_t> other_location_drops{0};

void on_timer(int)
{
    int saved_errno = errno;
    ThreadState *state = tls_state;
    if (state != nullptr) {
        size_t index = state->samples.load(std::memory_order_relaxed);
        if (index < kSampleLogCapacity) {
            uint8_t payload[kMaxSamplePayload];
            uint32_t size = sample_payload_size(index);
            fill_payload(payload, size, sample_seed(state->thread, index));
            SampleEntry &entry = state->log[index];
            entry.time = monotonic_ns();
            entry.status = adt_buffer_append_sample(state->location, 3, entry.time, payload, size, &entry.number);
            state->samples.store(index + 1, std::memory_order_relaxed);
        }
    }
    errno = saved_errno;
}

// Runs in the failing append: in the signal handler when from_sample.
bool drop_policy(adt_buffer *buffer, const adt_preflush_request *request, void *)
{
    preflush_calls.fetch_add(1, std::memory_order_relaxed);
    if (request->from_sample)
        preflush_from_sample.fetch_add(1, std::memory_order_relaxed);
    if (request->from_sample)
        return adt_buffer_drop_lowest_level(request->requester, request) >= 0;
    // From an event append: the next location first, so that removals of
    // other threads' levels race with their signal handlers.
    size_t count = adt_buffer_location_count(buffer);
    size_t own = adt_location_id(request->requester);
    for (size_t step = 1; step <= count; step++) {
        adt_location *victim = adt_buffer_location_at(buffer, (own + step) % count);
        if (adt_buffer_drop_lowest_level(victim, request) >= 0) {
            if (victim != request->requester)
                other_location_drops.fetch_add(1, std::memory_order_relaxed);
            return true;
        }
    }
    return false;
}

void run_thread(ThreadState *state)
{
    sigevent event = {};
    // glibc 2.36 has no sigev_notify_thread_id macro; this is its field.
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = kSignal;
    event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
        state->setup_error = errno;
        return;
    }
    tls_state = state;
    itimerspec period = {{0, kTimerPeriodNs}, {0, kTimerPeriodNs}};
    timer_settime(timer, 0, &period, nullptr);

    // Events are paced by the samples taken, not by time, so that they go
    // on while samples fill the arena whatever rate the signals reach.
    uint8_t payload[128];
    uint64_t start = monotonic_ns();
    for (uint32_t index = 0; index <= kEventsPerThread && !state->timed_out; index++) {
        while (state->samples.load(std::memory_order_relaxed) * kEventsPerThread < index * kSamplesWanted) {
            if (monotonic_ns() - start > kGiveUpNs) {
                state->timed_out = true;
                break;
            }
        }
        if (index == kEventsPerThread || state->timed_out)
            break;
        uint32_t size = event_payload_size(index);
        fill_payload(payload, size, event_seed(state->thread, index));
        state->event_time[index] = monotonic_ns();
        state->event_status[index] =
            adt_buffer_append_event(state->location, 7, state->event_time[index], payload, size);
    }

    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, kSignal);
    pthread_sigmask(SIG_BLOCK, &block, nullptr);
    timer_delete(timer);
    tls_state = nullptr;
}

void verify_location(const ThreadState &state, unsigned shift)
{
    size_t samples = state.samples.load();
    uint64_t ok = 0, skipped = 0, dropped = 0;
    std::vector<const SampleEntry *> survivors;
    std::vector<size_t> survivor_index;
    for (size_t i = 0; i < samples; i++) {
        const SampleEntry &entry = state.log[i];
        if (i > 0) {
            ASSERT_GT(entry.number, state.log[i - 1].number) << "sample numbers increase";
        }
        switch (entry.status) {
        case ADT_APPEND_OK:
            ok++;
            if (entry.number % (uint64_t(1) << shift) == 0) {
                survivors.push_back(&entry);
                survivor_index.push_back(i);
            }
            break;
        case ADT_APPEND_SKIPPED:
            skipped++;
            break;
        case ADT_APPEND_DROPPED:
            dropped++;
            break;
        default:
            FAIL() << "unexpected sample status " << entry.status;
        }
    }
    adt_location_stats stats;
    adt_location_get_stats(state.location, &stats);
    EXPECT_EQ(stats.samples_taken, samples);
    EXPECT_EQ(stats.samples_skipped, skipped);
    EXPECT_EQ(stats.samples_dropped, dropped);
    EXPECT_EQ(stats.samples_kept + stats.samples_removed, ok);
    EXPECT_EQ(stats.samples_kept, survivors.size());
    EXPECT_EQ(stats.events_dropped, 0u);
    EXPECT_EQ(stats.events.records, kEventsPerThread);

    adt_reader *reader = adt_reader_open(state.location);
    ASSERT_NE(reader, nullptr);
    adt_record_view view;
    uint32_t next_event = 0;
    size_t next_sample = 0;
    uint64_t last_time = 0;
    uint8_t expected[kMaxSamplePayload];
    while (adt_reader_next(reader, &view)) {
        ASSERT_GE(view.time, last_time) << "read-out in time order";
        last_time = view.time;
        if (view.level == ADT_EVENT_LEVEL) {
            ASSERT_LT(next_event, kEventsPerThread);
            uint32_t index = next_event++;
            ASSERT_EQ(view.kind, 7);
            ASSERT_EQ(view.time, state.event_time[index]) << "event " << index;
            uint32_t size = event_payload_size(index);
            ASSERT_EQ(view.payload_size, size) << "event " << index;
            fill_payload(expected, size, event_seed(state.thread, index));
            ASSERT_EQ(0, std::memcmp(view.payload, expected, size)) << "event " << index;
        } else {
            ASSERT_LT(next_sample, survivors.size()) << "unexpected sample n=" << view.sample_number;
            const SampleEntry &entry = *survivors[next_sample];
            size_t index = survivor_index[next_sample++];
            ASSERT_EQ(view.sample_number, entry.number);
            ASSERT_EQ(view.level, static_cast<unsigned>(__builtin_ctzll(entry.number)));
            ASSERT_EQ(view.time, entry.time);
            ASSERT_EQ(view.kind, 3);
            uint32_t size = sample_payload_size(index);
            ASSERT_EQ(view.payload_size, size) << "sample n=" << entry.number;
            fill_payload(expected, size, sample_seed(state.thread, index));
            ASSERT_EQ(0, std::memcmp(view.payload, expected, size)) << "sample n=" << entry.number;
        }
    }
    adt_reader_close(reader);
    EXPECT_EQ(next_event, kEventsPerThread) << "events missing";
    EXPECT_EQ(next_sample, survivors.size()) << "samples missing";
}

}  // namespace

TEST(BufferSignals, TimerSamplesInterruptEventAppendsWithoutLoss)
{
    struct sigaction action = {};
    action.sa_handler = on_timer;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    struct sigaction previous;
    ASSERT_EQ(sigaction(kSignal, &action, &previous), 0);

    adt_buffer *buffer = adt_buffer_create(kArenaBytes, kChunkBytes, kThreads);
    ASSERT_NE(buffer, nullptr);
    adt_buffer_set_preflush(buffer, drop_policy, nullptr);
    std::vector<ThreadState> states(kThreads);
    for (int i = 0; i < kThreads; i++) {
        states[i].thread = i;
        states[i].location = adt_buffer_add_location(buffer, static_cast<uint64_t>(i));
    }
    uint64_t start_ns = monotonic_ns();
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++)
        threads.emplace_back(run_thread, &states[i]);
    for (auto &thread : threads)
        thread.join();
    uint64_t end_ns = monotonic_ns();
    sigaction(kSignal, &previous, nullptr);

    uint64_t removals = 0, skipped = 0, chunks_in_chains = 0;
    for (const auto &state : states) {
        ASSERT_EQ(state.setup_error, 0) << "timer_create failed";
        ASSERT_FALSE(state.timed_out) << "thread " << state.thread << " saw only " << state.samples.load()
                                      << " timer signals";
        for (uint32_t i = 0; i < kEventsPerThread; i++)
            ASSERT_EQ(state.event_status[i], ADT_APPEND_OK) << "thread " << state.thread << " event " << i;
        adt_location_stats stats;
        adt_location_get_stats(state.location, &stats);
        removals += stats.removals;
        skipped += stats.samples_skipped;
        chunks_in_chains += stats.events.chunks;
        for (const auto &level : stats.levels)
            chunks_in_chains += level.chunks;
        SCOPED_TRACE("thread " + std::to_string(state.thread));
        verify_location(state, stats.shift);
        // Drops from its own handler and from other threads alike.
        expect_shift_stamps(stats, start_ns, end_ns);
    }
    adt_buffer_stats buffer_stats;
    adt_buffer_get_stats(buffer, &buffer_stats);
    EXPECT_EQ(chunks_in_chains + buffer_stats.chunks_free, buffer_stats.chunks_total);
    EXPECT_GT(removals, 0u) << "the arena was sized to force level removals";
    EXPECT_GT(preflush_calls.load(), 0u);
    RecordProperty("removals", std::to_string(removals));
    RecordProperty("preflush_calls", std::to_string(preflush_calls.load()));
    RecordProperty("preflush_from_sample", std::to_string(preflush_from_sample.load()));
    RecordProperty("other_location_drops", std::to_string(other_location_drops.load()));
    RecordProperty("samples_skipped", std::to_string(skipped));
    adt_buffer_destroy(buffer);
}
