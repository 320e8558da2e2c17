/*
 * The sampling timers' periods: drawing and setting them (also at a
 * halving), and the halt.
 *
 * Execution context: any, the signal handler included. The handler
 * re-arms its own thread's timer every ADT_DITHER_SIGNALS_PER_DRAW
 * signals and halves its own rate when it cannot keep up; the flush
 * policy halves a thread's rate from an append (the thread's own, maybe
 * inside its handler) or from another thread; the rescue halts the
 * sampler from a signal handler. So every step here is async-signal-safe
 * and never waits: clock_gettime, read, ioctl, timer_gettime and
 * timer_settime are system calls on the list of async-signal-safe
 * functions (or, read and ioctl, plain system calls without a lock), the
 * draw is arithmetic on the thread's own state (dither.h), and whoever
 * re-arms a timer takes it with one compare-and-swap on timer_state
 * rather than a lock; a contender gives up instead of waiting. No malloc,
 * no lock, no stdio.
 */
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sampler/sampler_internal.h"

static uint64_t read_clock(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* With a perf event the thread's position is the event's own count (its
 * user time since the event was enabled: what its signals measure). */
uint64_t adt_sampler_thread_clock_now(const adt_sampler_thread *thread)
{
    if (thread->perf_fd >= 0) {
        uint64_t counted = 0;
        return read(thread->perf_fd, &counted, sizeof counted) == (ssize_t)sizeof counted ? counted : 0;
    }
    return read_clock(thread->clock);
}

/* The shortest period a perf event is given. Software events fire from
 * an hrtimer at max(10 µs, period) (perf_swevent_hrtimer), and with
 * exclude_kernel an expiry that lands in the kernel sends nothing and is
 * not throttled: in the development VM, where a timer interrupt costs tens
 * of µs, a period of 10 µs kept a thread in timer interrupts until its
 * next re-arming (1.4 s of CPU time for a few signals), and periods of
 * mean 50 µs with a floor of 12.5 µs gave handlers of up to 90 ms; a
 * floor of 25 µs under a mean of 100 µs (the default 10 kHz) ran like the
 * fixed period. Shorter periods are lengthened, so above 10 kHz the mean
 * rate is a little below the asked one (the summary's delivered rate
 * shows it). */
#define PERF_SHORTEST_PERIOD_NS 25000u

/* Setting a period restarts it from now, so the time since the last
 * expiry (the signal's delivery and the handler, or a halving on another
 * thread) would be lost at every draw and the rate fall below the asked
 * one (10 kHz on the cpu clock: 7.1-9.1 kHz delivered here without this).
 * That time is made up: a POSIX timer's first expiry comes that much
 * earlier (timer_gettime tells how much of the old period was left), a
 * perf event, whose periods are all equal, gets its periods shortened by
 * a quarter of it for the block of 4 (its count since it was set, modulo
 * the period, is the time since its last expiry). */
int adt_sampler_arm_timer(adt_sampler_thread *thread, unsigned shift)
{
    unsigned capped = shift > 32 ? 32 : shift;
    uint64_t period = adt_dither_interval(&thread->dither, adt_sampler.period_ns << capped);
    uint64_t shortest = thread->perf_fd >= 0 ? PERF_SHORTEST_PERIOD_NS : 1;
    if (period < shortest)
        period = shortest;
    uint64_t ticks = (uint64_t)((double)period * (double)adt_clock_resolution() / 1e9);
    atomic_store_explicit(&thread->period_ticks, ticks > 0 ? ticks : 1, memory_order_relaxed);
    uint64_t since_expiry = 0;
    if (thread->perf_fd >= 0) {
        uint64_t count = adt_sampler_thread_clock_now(thread);
        if (thread->armed_period > 0 && count > thread->armed_count)
            since_expiry = (count - thread->armed_count) % thread->armed_period;
        uint64_t owed = since_expiry / ADT_DITHER_SIGNALS_PER_DRAW;
        uint64_t set = period > shortest + owed ? period - owed : shortest;
        thread->armed_count = count;
        thread->armed_period = set;
        return ioctl(thread->perf_fd, PERF_EVENT_IOC_PERIOD, &set);
    }
    struct itimerspec spec;
    if (thread->armed_period > 0 && timer_gettime(thread->timer, &spec) == 0) {
        uint64_t left = (uint64_t)spec.it_value.tv_sec * 1000000000ull + (uint64_t)spec.it_value.tv_nsec;
        since_expiry = left < thread->armed_period ? thread->armed_period - left : 0;
    }
    uint64_t first = period > since_expiry ? period - since_expiry : 1;
    thread->armed_period = period;
    spec.it_interval.tv_sec = (time_t)(period / 1000000000ull);
    spec.it_interval.tv_nsec = (long)(period % 1000000000ull);
    spec.it_value.tv_sec = (time_t)(first / 1000000000ull);
    spec.it_value.tv_nsec = (long)(first % 1000000000ull);
    return timer_settime(thread->timer, 0, &spec, NULL);
}

void adt_sampler_draw_period(adt_sampler_thread *thread)
{
    int live = ADT_TIMER_LIVE;
    if (!atomic_compare_exchange_strong(&thread->timer_state, &live, ADT_TIMER_BUSY))
        return;
    adt_sampler_arm_timer(thread, atomic_load(&thread->shift));
    atomic_store(&thread->timer_state, ADT_TIMER_LIVE);
}

/* Two halvings of one thread can overlap and arrive out of order, so the
 * shift only ever grows. The one that holds the timer re-arms it until
 * the period matches the largest shift seen: a halving that found the
 * timer busy leaves the re-arming to it. A timer being stopped keeps its
 * period; the shift still reaches the samples. */
void adt_sampler_halve(adt_location *location, unsigned old_shift, unsigned new_shift, void *arg)
{
    (void)old_shift;
    (void)arg;
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL)
        return;
    unsigned shift = atomic_load(&thread->shift);
    while (shift < new_shift && !atomic_compare_exchange_weak(&thread->shift, &shift, new_shift))
        ;
    for (;;) {
        int live = ADT_TIMER_LIVE;
        if (!atomic_compare_exchange_strong(&thread->timer_state, &live, ADT_TIMER_BUSY))
            return;
        unsigned armed = atomic_load(&thread->shift);
        adt_sampler_arm_timer(thread, armed);
        atomic_store(&thread->timer_state, ADT_TIMER_LIVE);
        if (atomic_load(&thread->shift) == armed)
            return;
    }
}

void adt_sampler_halt(void)
{
    atomic_store(&adt_sampler.halted, true);
}
