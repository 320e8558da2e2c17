/*
 * The signal handler: the sampler's hot path.
 *
 * Execution context: the sampling signal's handler, on the interrupted
 * thread. Async-signal-safe by construction: no malloc, no lock, no stdio
 * (errno is saved and restored by the dispatcher, core/signals.c). What
 * it calls elsewhere is as safe: the unwinding window and path interning
 * (paths.c), the timer's re-arming and the halving of its own rate
 * (timer.c, the buffer's adt_buffer_drop_own_level).
 *
 * Per sample it reads the clock, unwinds with unw_backtrace (libunwind's
 * cached fast path, ~0.5 µs warm at depth 32 in this VM; unw_step costs
 * 25–75 µs because it blocks and unblocks signals per frame, and a
 * frame-pointer walk is wrong for code built without frame pointers,
 * which is most of it), reads the PAPI counters, interns the path and
 * appends one ADT_REC_SAMPLE.
 *
 * It never waits: libunwind finds unwind tables in the code map
 * (code_map.c) instead of asking the dynamic loader, and a sample that
 * arrives while the map is being changed is skipped (docs/sampling.md,
 * "Why the handler never waits", goes through every step).
 */
#include <errno.h>
#include <ucontext.h>
#if ADT_WITH_PAPI
#include <papi.h>
#endif

#include "core/core.h"
#include "sampler/sampler_internal.h"

static inline uintptr_t interrupted_pc(const ucontext_t *context)
{
#if defined(__x86_64__)
    return (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)context->uc_mcontext.pc;
#else
#error "adaptrace: interrupted_pc is not written for this architecture"
#endif
}

/* The interrupted stack, innermost first, at most depth frames, in raw
 * (room for depth + ADT_SAMPLER_HANDLER_FRAMES); *innermost receives the
 * index of the interrupted frame. unw_backtrace starts in this handler; the
 * frames up to the interrupted instruction (handler, signal trampoline)
 * are cut off by finding that instruction's address. If unwinding did not
 * get through the signal frame, the path is the interrupted instruction
 * alone. *cut: the unwinding ended (not the depth) at a frame outside
 * every known object, so code was loaded since the map was built (or the
 * frame is generated code). Inside the code map window. */
static int unwind_interrupted(const ucontext_t *context, void **raw, uint32_t depth, int *innermost, bool *cut)
{
    uintptr_t pc = interrupted_pc(context);
    *innermost = 0;
    if (depth > 1) {
        int room = (int)depth + ADT_SAMPLER_HANDLER_FRAMES;
        int count = unw_backtrace(raw, room);
        for (int i = 0; i < count && i < ADT_SAMPLER_HANDLER_FRAMES; ++i) {
            if ((uintptr_t)raw[i] == pc) {
                *innermost = i;
                *cut = count < room && !adt_code_map_covers((uintptr_t)raw[count - 1]);
                return count - i < (int)depth ? count - i : (int)depth;
            }
        }
    }
    raw[0] = (void *)pc;
    *cut = !adt_code_map_covers(pc);
    return 1;
}

/* The interrupted path's calling context: the MPI region's when the
 * thread is inside one, otherwise the unwound stack (below the node of
 * the innermost user region whose beginning frame it runs through). In a catch-up after a
 * sleeping call (sleeping_calls.c) the frames below the sleeping call's
 * caller (the signal was delivered in the interposer, as the call
 * returned) are replaced by the real function the caller called, so the
 * samples stand where the timer would have found the thread. False (no
 * sample, counted) while the thread unwinds for adaptrace or the code
 * map is being changed. */
static bool sample_context(adt_sampler_thread *thread, const ucontext_t *context, const adt_sleeping_call *sleep,
                           uint32_t *context_id)
{
    if (atomic_load_explicit(&thread->busy, memory_order_relaxed)) {
        thread->samples_busy++;
        return false;
    }
    *context_id = atomic_load_explicit(&thread->region_context, memory_order_relaxed);
    if (*context_id != ADT_UNDEFINED_ID)
        return true;
    if (!adt_code_map_enter(thread)) {
        thread->samples_code_changing++;
        return false;
    }
    void *raw[ADT_UNWIND_DEPTH_MAX + ADT_SAMPLER_HANDLER_FRAMES];
    int innermost;
    bool cut;
    int count = unwind_interrupted(context, raw, adt_sampler.depth, &innermost, &cut);
    adt_code_map_leave(thread);
    if (__builtin_expect(cut, 0)) {
        thread->paths_cut++;
        atomic_store_explicit(&adt_code_map_stale, 1, memory_order_relaxed);
    }
    void **path = raw + innermost;
    if (sleep != NULL) {
        /* The caller's return address is a frame of the path; the slot
         * before it (an interposer frame, never the first of raw) takes
         * the real function, tagged exact like an interrupted pc. */
        for (int i = 1; i < count; ++i) {
            if (path[i] == sleep->caller) {
                path += i - 1;
                count -= i - 1;
                path[0] = sleep->function;
                break;
            }
        }
    }
    bool full;
    *context_id = adt_sampler_intern_grafted(thread, &thread->sample_path, path, count, ADT_CCT_KEY_EXACT, &full);
    thread->contexts_full += full;
    return true;
}

/* Appends one sample of context_id dated time, with the PAPI counters
 * read now: to the tap where it replaces the buffer (the ring keeps the
 * values too, for the event chain: tap.c), otherwise to the buffer. */
static void append_sample(adt_sampler_thread *thread, uint32_t context_id, unsigned shift, uint64_t time)
{
    uint64_t payload[(sizeof(adt_rec_sample) + ADT_METRICS_COUNT_MAX * sizeof(uint64_t)) / sizeof(uint64_t)];
    adt_rec_sample *record = (adt_rec_sample *)payload;
    record->calling_context = context_id;
    record->rate_shift = shift;
    record->metric_count = adt_sampler.metric_count;
    record->reserved = 0;
    if (adt_sampler.metric_count > 0) {
        long long values[ADT_METRICS_COUNT_MAX] = {0};
        /* PAPI_read is not on the POSIX list of async-signal-safe functions;
         * on the perf_event component it is a read(2) of the counter file
         * descriptors (or rdpmc), which is why Score-P and HPCToolkit call
         * it from their sampling handlers too. A thread whose event set
         * could not be built records zeros. (Without PAPI no metric is
         * kept: adt_sampler.metric_count is 0.) */
#if ADT_WITH_PAPI
        if (thread->metric_count > 0)
            PAPI_read(thread->papi_event_set, values);
#endif
        for (uint32_t m = 0; m < adt_sampler.metric_count; ++m)
            record->metric_values[m] = (uint64_t)values[m];
    }
    thread->last_sample_time = time;
    if (adt_sampler_tap_instead_of_buffer(thread, context_id, shift, time, record->metric_values))
        return; /* streamed, not in the buffer's levels (ADAPTRACE_ONLINE_OUTPUT=profile;
                 * with trace the thread's event chain keeps it, values and all: tap.c) */
    if (adt_buffer_append_sample(thread->location, ADT_REC_SAMPLE, time, record,
                                 (uint32_t)(sizeof(adt_rec_sample) + adt_sampler.metric_count * sizeof(uint64_t)),
                                 NULL) == ADT_APPEND_OK)
        adt_sampler_tap_sample(thread, context_id, shift, time, record->metric_values); /* the archive's samples are the stream's */
}

/* The handler's time for `samples` samples since entry; returns now. */
static uint64_t time_handler(adt_sampler_thread *thread, uint64_t entry, uint64_t samples)
{
    uint64_t end = adt_clock_now();
    thread->handler_ticks += end - entry;
    thread->window_handler_ticks += end - entry;
    thread->samples_timed += samples;
    return end;
}

/* Returns the time the sample was finished. */
static uint64_t take_sample(adt_sampler_thread *thread, const ucontext_t *context, uint64_t time)
{
    unsigned shift = atomic_load_explicit(&thread->shift, memory_order_relaxed);
    thread->signals++;
    thread->signals_weighted += 1ull << shift;
    uint32_t context_id;
    if (!sample_context(thread, context, NULL, &context_id))
        return time;
    append_sample(thread, context_id, shift, time);
    return time_handler(thread, time, 1);
}

/* The mean timer period at shift (periods are drawn around it, dither.h). */
static uint64_t mean_period_ticks(unsigned shift)
{
    return adt_sampler.period_ticks << (shift > 32 ? 32 : shift);
}

/* The timer's expirations held back while the thread slept in an
 * interposed call (sleeping_calls.c): the first one's signal stayed
 * pending and arrives as the call returns. The expirations owed are the
 * time asleep at the thread's mean period, rounded: the kernel's count
 * (1 + si_overrun) is of the period drawn last (dither.h), and over one
 * long sleep that single draw, anywhere from a quarter of the mean to
 * several times it, would make the sleep weigh that much more or less
 * (13,600 to 29,500 samples for the same 1.9 s at 10 kHz, against 21,500
 * without random periods). Each expiration gets the sample the timer would
 * have taken, at the sleeping call, dated a period apart back from now
 * (an expiration falls at most one period before its date), never before
 * the call began nor before the thread's last sample: a catch-up that took
 * several periods is followed at once by another whose expirations fell
 * during the first, and a location's records must stay in time order. A
 * halving between the appends (the buffer
 * filled) thins the rest the way the slower timer would have: an
 * expiration at the block's shift s0 counts 2^s0, and a sample is taken
 * for every 2^k counted at the current shift k. The overload protection
 * is left out: this overrun is the block's, not the handler's cost. */
static void catch_up_sleep(adt_sampler_thread *thread, const ucontext_t *context, const adt_sleeping_call *sleep,
                           uint64_t now)
{
    unsigned block_shift = atomic_load_explicit(&thread->shift, memory_order_relaxed);
    uint64_t period = mean_period_ticks(block_shift);
    uint32_t context_id;
    if (!sample_context(thread, context, sleep, &context_id))
        return;
    uint64_t earliest = sleep->start > thread->last_sample_time ? sleep->start : thread->last_sample_time;
    uint64_t asleep = now > earliest ? now - earliest : 0;
    uint64_t expirations = period != 0 ? (asleep + period / 2) / period : 1;
    if (expirations == 0)
        expirations = 1; /* the signal came: its timer expired at least once */
    uint64_t owed = 0, appended = 0;
    for (uint64_t j = 0; j < expirations; ++j) {
        uint64_t back = (expirations - 1 - j) * period;
        uint64_t time = now > earliest && now - earliest > back ? now - back : earliest;
        unsigned shift = atomic_load_explicit(&thread->shift, memory_order_relaxed);
        thread->signals++;
        thread->signals_weighted += 1ull << block_shift;
        owed += 1ull << block_shift;
        if (owed < 1ull << shift)
            continue;
        owed -= 1ull << shift;
        append_sample(thread, context_id, shift, time);
        appended++;
    }
    thread->previous_end = time_handler(thread, now, appended);
}

/* Halves the thread's own rate the λ way: its lowest sample level is
 * dropped (so the samples kept stay n ≡ 0 mod 2^k, evenly spaced) and the
 * timer re-armed. Returns false when the location's guard is taken (this
 * handler interrupted an append or a removal on its thread). */
static bool halve_own_rate(adt_sampler_thread *thread)
{
    unsigned old_shift;
    int new_shift = adt_buffer_drop_own_level(thread->location, &old_shift);
    if (new_shift < 0)
        return false;
    thread->overload_halvings += (unsigned)new_shift - old_shift;
    adt_sampler_halve(thread->location, old_shift, (unsigned)new_shift, NULL);
    return true;
}

/* The overload protection (sampler_internal.h has the rule; the numbers
 * behind it are in docs/sampling.md). A signal whose timer overran
 * expired, stayed pending through `overrun` more expiries, so it arrived
 * at least overrun periods after its expiry. If less time than that passed
 * since the previous handler returned, the expiry came before that return:
 * the thread went from one signal straight into the next ("behind"). A
 * thread that was descheduled (an oversubscribed node) also sees overruns,
 * but after a longer gap, and is left alone. The gap before a signal that
 * is behind holds no time of the thread's own: it is the signal's round
 * trip (return from the handler, delivery of the next), which the handler
 * cannot time otherwise; the smallest one of a window is kept as the
 * thread's delivery cost. */
static void watch_overload(adt_sampler_thread *thread, uint64_t entry, uint64_t end, int overrun)
{
    unsigned shift = atomic_load_explicit(&thread->shift, memory_order_relaxed);
    if (thread->window_signals == 0 || thread->window_shift != shift) {
        thread->window_shift = shift;
        thread->window_signals = 0;
        thread->window_behind = 0;
        thread->window_handler_ticks = 0;
        thread->window_start = entry;
        thread->window_min_gap = UINT64_MAX;
    }
    uint64_t period = atomic_load_explicit(&thread->period_ticks, memory_order_relaxed);
    thread->window_signals++;
    uint64_t gap = entry - thread->previous_end;
    thread->previous_end = end;
    if (overrun > 0 && gap / period < (uint64_t)overrun) {
        thread->window_behind++;
        if (gap < thread->window_min_gap)
            thread->window_min_gap = gap;
    }
    if (thread->window_signals < ADT_OVERLOAD_WINDOW)
        return;
    if (thread->window_behind > 0)
        thread->delivery_ticks = thread->window_min_gap;
    /* The window's time at the mean period, if its own was shorter: its
     * 16 signals may fall into periods drawn short (dither.h), whose cost
     * share is high for a moment but not on average. */
    uint64_t span = adt_clock_now() - thread->window_start;
    uint64_t mean_span = thread->window_signals * mean_period_ticks(shift);
    if (span < mean_span)
        span = mean_span;
    uint64_t cost = thread->window_handler_ticks + thread->window_signals * thread->delivery_ticks;
    bool overloaded = thread->window_behind >= ADT_OVERLOAD_BEHIND || cost * ADT_OVERLOAD_COST_SHARE >= span;
    /* A busy guard keeps the window full: the next signal tries again. */
    if (overloaded && !halve_own_rate(thread))
        return;
    thread->window_signals = 0;
}

/* The measurement cost of a sample (core.h): its gap class, the signal's
 * delivery as the thread last measured it (0 until it was behind once)
 * before its time, the handler after. A signal that appended no sample
 * (end == entry) is no event of the trace. The table is the thread's own,
 * static memory: stores only, safe here. */
static void note_cost(adt_sampler_thread *thread, uint64_t entry, uint64_t end)
{
    adt_cost_table *cost = adt_cost_own;
    if (cost == NULL)
        cost = adt_cost_own = adt_cost_table_of((uint32_t)adt_location_id(thread->location));
    if (cost == NULL)
        return;
    adt_cost_add(&cost->handler_runs, 1);
    if (end == entry)
        return;
    unsigned gap_class = adt_cost_note_event(cost, ADT_COST_SAMPLE, entry);
    if (gap_class < ADT_COST_GAP_CLASSES)
        adt_cost_note_timing(cost, ADT_COST_SAMPLE, gap_class, true, thread->delivery_ticks, 0, end - entry);
}

/* adaptrace's timers send SI_TIMER with the token's address; its perf
 * events send POLL_IN (POLL_HUP: the event was closed) with their
 * descriptor in si_fd. A perf signal on a thread that is no longer sampled
 * is a late one of its closed event (the sampling signal is not one an
 * application routes from its own descriptors). */
static bool is_sampling_signal(const siginfo_t *info, const adt_sampler_thread *thread)
{
    if (info == NULL)
        return false;
    if (info->si_code == SI_TIMER)
        return info->si_value.sival_ptr == &adt_sampler_timer_token;
    if (info->si_code != POLL_IN && info->si_code != POLL_HUP)
        return false;
    return thread == NULL ? adt_sampler.perf : info->si_fd == thread->signal_fd;
}

bool adt_sampler_on_signal(int signum, siginfo_t *info, void *ucontext)
{
    (void)signum;
    adt_sampler_thread *thread = adt_sampler_current;
    if (!is_sampling_signal(info, thread))
        return false;
    if (thread != NULL) {
        /* in_handler before active and halted, stop's order reversed: a
         * stop that cleared active (or adt_sampler_stop_all, which halts
         * first) either sees this sample running and waits, or this sample
         * sees active cleared or the sampler halted (seq_cst on both
         * sides). A thread started while stop_all runs is not in the list
         * it walks, but its handlers come after halted is set. */
        atomic_store(&thread->in_handler, 1);
        /* A paused thread (adaptrace_pause) takes no sample: the signal
         * is only counted, and its timer keeps running, so that resuming
         * costs one store. */
        if (atomic_load_explicit(&thread->paused, memory_order_relaxed)) {
            thread->samples_paused++;
        } else if (atomic_load(&thread->active) && !atomic_load(&adt_sampler.halted)) {
            uint64_t entry = adt_clock_now();
            const adt_sleeping_call *sleep = atomic_load_explicit(&thread->sleeping_call, memory_order_relaxed);
            if (sleep != NULL) {
                catch_up_sleep(thread, ucontext, sleep, entry);
            } else {
                uint64_t end = take_sample(thread, ucontext, entry);
                note_cost(thread, entry, end);
                watch_overload(thread, entry, end, info->si_overrun);
            }
            if (++thread->signals_since_draw >= ADT_DITHER_SIGNALS_PER_DRAW) {
                thread->signals_since_draw = 0;
                adt_sampler_draw_period(thread);
            }
        }
        atomic_store(&thread->in_handler, 0);
    }
    /* Our signal on a thread that is not (or no longer) sampled: a late
     * expiry of a deleted timer or closed event, dropped. */
    return true;
}
