/*
 * The sampler's life cycle: configuration, PAPI, per-thread timers,
 * halving, region contexts for the MPI wrappers, statistics.
 * The signal handler itself is in handler.c, the signal sharing with the
 * application in signals.c, address resolution in resolve.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/sampler_internal.h"

adt_sampler_global adt_sampler;
const char adt_sampler_timer_token = 0;
__thread adt_sampler_thread *adt_sampler_current __attribute__((tls_model("initial-exec")));

static pid_t current_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static uint64_t read_clock(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* Where the thread is on its sampling clock, in ns. With a perf event
 * that is the event's own count (the thread's user time since the event
 * was enabled: what its signals measure); start_clock is then 0. */
static uint64_t thread_clock_now(const adt_sampler_thread *thread)
{
    if (thread->perf_fd >= 0) {
        uint64_t counted = 0;
        return read(thread->perf_fd, &counted, sizeof counted) == (ssize_t)sizeof counted ? counted : 0;
    }
    return read_clock(thread->clock);
}

/* CPU-time timers expire on the scheduler tick, whatever resolution
 * clock_getres reports for the CPU clocks (1 ns). The coarse clocks
 * advance exactly once per tick, so their resolution is the tick. */
static uint32_t kernel_tick_hz(void)
{
    struct timespec resolution;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) != 0 || resolution.tv_sec != 0 || resolution.tv_nsec == 0)
        return 0;
    return (uint32_t)(1000000000l / resolution.tv_nsec);
}

/* ---- perf cpu-clock events ---------------------------------------------- */

/* The cpu clock's delivery: a perf software cpu-clock event of the thread
 * that counts its running time in ns and, every period_ns of it, sends the
 * sampling signal to that thread (O_ASYNC, F_SETSIG, F_SETOWN_EX with
 * F_OWNER_TID). Unlike a timer on the thread's CPU-time clock it is not
 * bound to the scheduler tick (9852 of 10000 Hz measured here), and unlike
 * the wall clock it never interrupts a thread that sleeps or waits.
 * User time only (exclude_kernel): an expiry counted inside a system call
 * would leave the signal pending when the call goes to sleep, and
 * nanosleep or poll would return EINTR at once (20 of 300 1-ms nanosleeps
 * here with kernel time counted, 0 without). Returns the descriptor
 * (disabled) or -1 with errno set. */
static int open_cpu_clock_event(pid_t tid, uint64_t period_ns)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = period_ns;
    attr.wakeup_events = 1;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, adt_sampler.signal) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static int read_perf_paranoid(void)
{
    FILE *file = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int level = -100;
    if (file != NULL) {
        if (fscanf(file, "%d", &level) != 1)
            level = -100;
        fclose(file);
    }
    return level;
}

/* Start-up, with the cpu clock: whether this process may open the events
 * (perf_event_paranoid, a container's seccomp filter, a kernel without
 * perf events). Said once; the fallback is a timer on each thread's
 * CPU-time clock, which samples running time as well, at most once per
 * scheduler tick. */
static bool probe_perf_events(void)
{
    int fd = open_cpu_clock_event(current_tid(), adt_sampler.period_ns);
    if (fd >= 0) {
        close(fd);
        return true;
    }
    int paranoid = read_perf_paranoid();
    char level[32] = "unknown";
    if (paranoid != -100)
        snprintf(level, sizeof level, "%d", paranoid);
    adt_log("ADAPTRACE_SAMPLING_CLOCK=cpu: perf cpu-clock events are not allowed here (perf_event_open: %m; "
            "kernel.perf_event_paranoid = %s); sampling CPU time with CPU-time timers instead, which fire at most "
            "once per kernel tick (%u Hz)",
            level, adt_sampler.kernel_tick_hz);
    return false;
}

/* ---- PAPI -------------------------------------------------------------- */

static unsigned long papi_thread_id(void)
{
    return (unsigned long)pthread_self();
}

/* Builds an event set with the given names; returns how many were added.
 * warn: report each name that cannot be added (at init, once per name). */
static uint32_t papi_build_event_set(int *event_set, char names[][ADT_METRIC_NAME_MAX], uint32_t count, bool warn,
                                     char kept[][ADT_METRIC_NAME_MAX])
{
    *event_set = PAPI_NULL;
    int status = PAPI_create_eventset(event_set);
    if (status != PAPI_OK) {
        if (warn)
            adt_log("ADAPTRACE_METRICS: PAPI_create_eventset failed (%s); recording no counters", PAPI_strerror(status));
        return 0;
    }
    uint32_t added = 0;
    for (uint32_t i = 0; i < count; ++i) {
        status = PAPI_add_named_event(*event_set, names[i]);
        if (status == PAPI_OK) {
            if (kept != NULL)
                memcpy(kept[added], names[i], sizeof kept[added]);
            added++;
        } else if (warn) {
            adt_log("ADAPTRACE_METRICS: cannot record '%s' (%s); going on without it", names[i], PAPI_strerror(status));
        }
    }
    return added;
}

static void papi_destroy_event_set(int *event_set)
{
    if (*event_set == PAPI_NULL)
        return;
    long long ignored[ADT_SAMPLER_METRICS_MAX];
    PAPI_stop(*event_set, ignored);
    PAPI_cleanup_eventset(*event_set);
    PAPI_destroy_eventset(event_set);
    *event_set = PAPI_NULL;
}

/* Parses the comma-separated ADAPTRACE_METRICS, initialises PAPI, keeps
 * the events that can be added on this thread and registers them. */
static int init_metrics(const char *list, adt_defs *defs)
{
    char requested[ADT_SAMPLER_METRICS_MAX][ADT_METRIC_NAME_MAX];
    uint32_t count = 0;
    const char *cursor = list;
    while (*cursor != '\0') {
        size_t length = strcspn(cursor, ",");
        if (length > 0) {
            if (count == ADT_SAMPLER_METRICS_MAX || length >= sizeof requested[0]) {
                adt_log("ADAPTRACE_METRICS='%s': too many or too long names (accepted: at most %d PAPI event names "
                        "of fewer than %zu characters, comma-separated)",
                        list, ADT_SAMPLER_METRICS_MAX, sizeof requested[0]);
                return -1;
            }
            memcpy(requested[count], cursor, length);
            requested[count][length] = '\0';
            count++;
        }
        cursor += length + (cursor[length] == ',');
    }
    adt_sampler.metric_count = 0;
    if (count == 0)
        return 0;
    if (!adt_sampler.papi) {
        int status = PAPI_library_init(PAPI_VER_CURRENT);
        if (status != PAPI_VER_CURRENT) {
            adt_log("ADAPTRACE_METRICS: PAPI_library_init failed (%s); recording no counters",
                    status > 0 ? "version mismatch" : PAPI_strerror(status));
            return 0;
        }
        status = PAPI_thread_init(papi_thread_id);
        if (status != PAPI_OK) {
            adt_log("ADAPTRACE_METRICS: PAPI_thread_init failed (%s); recording no counters", PAPI_strerror(status));
            return 0;
        }
        adt_sampler.papi = true;
    }
    int probe;
    adt_sampler.metric_count = papi_build_event_set(&probe, requested, count, true, adt_sampler.metric_names);
    papi_destroy_event_set(&probe);
    for (uint32_t i = 0; i < adt_sampler.metric_count; ++i)
        adt_defs_metric(defs, adt_sampler.metric_names[i], "#");
    return 0;
}

/* ---- process ----------------------------------------------------------- */

static void forget_thread_in_child(void)
{
    /* A forked child has no timers (POSIX), but it inherits this thread's
     * state pointer: clearing it makes the handler pass every signal on
     * and keeps the child from sampling into the parent's buffer copy. */
    adt_sampler_current = NULL;
    adt_sampler.initialised = false;
    adt_code_map_forget_in_child();
}

int adt_sampler_init(const adt_config *config, adt_defs *defs, uint64_t context_bytes)
{
    static bool fork_handler_registered;
    if (adt_sampler.initialised) {
        adt_log("adt_sampler_init: the sampler is already initialised");
        return -1;
    }
    if (config->sampling_rate_hz == 0) {
        adt_log("ADAPTRACE_SAMPLING_RATE=0: the sampling rate must be positive (accepted: e.g. 1kHz, 10kHz)");
        return -1;
    }
    atomic_store(&adt_sampler.halted, false);
    adt_sampler.signal = config->sampling_signal;
    adt_sampler.clock = config->sampling_clock;
    adt_sampler.rate_hz = config->sampling_rate_hz;
    adt_sampler.period_ns = 1000000000ull / config->sampling_rate_hz;
    if (adt_sampler.period_ns == 0)
        adt_sampler.period_ns = 1;
    adt_sampler.period_ticks = (uint64_t)((double)adt_sampler.period_ns * (double)adt_clock_resolution() / 1e9);
    if (adt_sampler.period_ticks == 0)
        adt_sampler.period_ticks = 1;
    adt_sampler.depth = config->unwind_depth == 0 ? 1 : config->unwind_depth;
    if (adt_sampler.depth > ADT_SAMPLER_DEPTH_MAX) {
        adt_log("ADAPTRACE_UNWIND_DEPTH=%u: too deep (accepted: 1..%d)", config->unwind_depth, ADT_SAMPLER_DEPTH_MAX);
        return -1;
    }
    adt_sampler.kernel_tick_hz = kernel_tick_hz();
    adt_sampler.perf = adt_sampler.clock == ADT_SAMPLING_CLOCK_CPU && probe_perf_events();
    if (adt_cct_create(&adt_sampler.tree, context_bytes) != 0) {
        adt_log("calling-context tree: cannot map %llu bytes (%m; at least %zu bytes are needed)",
                (unsigned long long)context_bytes, 4 * ADT_CCT_BYTES_PER_NODE);
        return -1;
    }
    if (init_metrics(config->metrics, defs) != 0 || adt_code_map_init() != 0 ||
        adt_signal_own(adt_sampler.signal, adt_sampler_on_signal, ADT_SIGNAL_TAKEN) != 0) {
        adt_code_map_shutdown();
        adt_cct_destroy(&adt_sampler.tree);
        return -1;
    }
    /* libunwind's per-thread cache makes unw_backtrace safe to call from a
     * signal handler (no global lock). */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    if (!fork_handler_registered) {
        pthread_atfork(NULL, NULL, forget_thread_in_child);
        fork_handler_registered = true;
    }
    adt_sampler.initialised = true;
    return 0;
}

/* ---- threads ----------------------------------------------------------- */

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

/* Sets the timer's period to a fresh draw of mean period × 2^shift
 * (dither.h). Setting a period restarts it from now, so the time since the
 * last expiry (the signal's delivery and the handler, or a halving on
 * another thread) would be lost at every draw and the rate fall below the
 * asked one (10 kHz on the cpu clock: 7.1-9.1 kHz delivered here without
 * this). That time is made up: a POSIX timer's first expiry comes that
 * much earlier (timer_gettime tells how much of the old period was left),
 * a perf event, whose periods are all equal, gets its periods shortened
 * by a quarter of it for the block of 4 (its count since it was set, modulo
 * the period, is the time since its last expiry). The caller holds the
 * timer (ADT_TIMER_BUSY) or it is not live yet; also from the signal
 * handler: timer_gettime, timer_settime, read, ioctl and the draw are
 * async-signal-safe. */
static int arm_timer(adt_sampler_thread *thread, unsigned shift)
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
        uint64_t count = thread_clock_now(thread);
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

/* Thread start, before the timer is live: the first period, and the perf
 * event enabled (it stays enabled until the thread stops). The seed mixes
 * the thread id and the time, so threads and runs draw their own streams. */
static int start_timer(adt_sampler_thread *thread, unsigned shift)
{
    adt_dither_seed(&thread->dither, ((uint64_t)thread->tid << 32) ^ adt_clock_now() ^ (uintptr_t)thread);
    if (arm_timer(thread, shift) != 0)
        return -1;
    return thread->perf_fd >= 0 ? ioctl(thread->perf_fd, PERF_EVENT_IOC_ENABLE, 0) : 0;
}

void adt_sampler_draw_period(adt_sampler_thread *thread)
{
    int live = ADT_TIMER_LIVE;
    if (!atomic_compare_exchange_strong(&thread->timer_state, &live, ADT_TIMER_BUSY))
        return;
    arm_timer(thread, atomic_load(&thread->shift));
    atomic_store(&thread->timer_state, ADT_TIMER_LIVE);
}

int adt_sampler_thread_start(adt_location *location)
{
    if (!adt_sampler.initialised) {
        adt_log("adt_sampler_thread_start: the sampler is not initialised (adt_sampler_init first)");
        return -1;
    }
    if (adt_sampler_current != NULL) {
        adt_log("adt_sampler_thread_start: thread %d is sampled already", (int)current_tid());
        return -1;
    }
    adt_sampler_thread *thread = calloc(1, sizeof *thread);
    if (thread == NULL) {
        adt_log("adt_sampler_thread_start: out of memory for the thread state");
        return -1;
    }
    thread->location = location;
    thread->tid = current_tid();
    thread->papi_event_set = PAPI_NULL;
    atomic_init(&thread->region_context, ADT_UNDEFINED_ID);
    atomic_init(&thread->sleeping_call, NULL);

    /* The first unw_backtrace of a thread sets up its cache (up to ~1 ms);
     * do that here rather than in the first sample, with the objects
     * loaded so far in the code map. */
    adt_code_map_refresh_if_stale();
    void *warm_up[ADT_SAMPLER_DEPTH_MAX];
    unw_backtrace(warm_up, (int)adt_sampler.depth);

    if (adt_sampler.metric_count > 0) {
        thread->metric_count = papi_build_event_set(&thread->papi_event_set, adt_sampler.metric_names,
                                                    adt_sampler.metric_count, false, NULL);
        if (thread->metric_count != adt_sampler.metric_count || PAPI_start(thread->papi_event_set) != PAPI_OK) {
            adt_log("ADAPTRACE_METRICS: thread %d cannot count all of the metrics; its samples carry zeros",
                    (int)thread->tid);
            papi_destroy_event_set(&thread->papi_event_set);
            thread->metric_count = 0;
        }
    }

    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    atomic_init(&thread->shift, stats.shift);

    thread->perf_fd = -1;
    thread->signal_fd = -1;
    if (adt_sampler.clock == ADT_SAMPLING_CLOCK_CPU) {
        if (pthread_getcpuclockid(pthread_self(), &thread->clock) != 0) {
            adt_log("ADAPTRACE_SAMPLING_CLOCK=cpu: thread %d has no CPU-time clock", (int)thread->tid);
            papi_destroy_event_set(&thread->papi_event_set);
            free(thread);
            return -1;
        }
    } else {
        thread->clock = CLOCK_MONOTONIC;
    }
    if (adt_sampler.perf) {
        thread->perf_fd = open_cpu_clock_event(thread->tid, adt_sampler.period_ns);
        thread->signal_fd = thread->perf_fd;
        if (thread->perf_fd < 0) {
            adt_log("adt_sampler_thread_start: perf cpu-clock event for thread %d failed: %m", (int)thread->tid);
            papi_destroy_event_set(&thread->papi_event_set);
            free(thread);
            return -1;
        }
    } else {
        struct sigevent event;
        memset(&event, 0, sizeof event);
        event.sigev_notify = SIGEV_THREAD_ID;
        event.sigev_signo = adt_sampler.signal;
        event.sigev_value.sival_ptr = (void *)&adt_sampler_timer_token;
        event._sigev_un._tid = thread->tid;
        if (timer_create(thread->clock, &event, &thread->timer) != 0) {
            adt_log("adt_sampler_thread_start: timer_create for thread %d failed: %m", (int)thread->tid);
            papi_destroy_event_set(&thread->papi_event_set);
            free(thread);
            return -1;
        }
    }

    adt_location_set_user(location, thread);
    thread->next = atomic_load(&adt_sampler.threads);
    while (!atomic_compare_exchange_weak(&adt_sampler.threads, &thread->next, thread))
        ;
    if (thread->tid == getpid())
        adt_sampler.main_thread = thread;
    adt_sampler_current = thread;
    thread->start_clock = thread->perf_fd >= 0 ? 0 : read_clock(thread->clock);
    atomic_store(&thread->timer_state, ADT_TIMER_LIVE);
    atomic_store(&thread->active, 1);
    if (start_timer(thread, stats.shift) != 0) {
        adt_log("adt_sampler_thread_start: timer_settime for thread %d failed: %m", (int)thread->tid);
        atomic_store(&thread->active, 0);
        return -1;
    }
    return 0;
}

/* Works from any thread: the handler of the stopped thread is waited for,
 * its timer deleted, its samples stay in the buffer. */
static void stop_thread(adt_sampler_thread *thread)
{
    atomic_store(&thread->active, 0);
    while (atomic_load(&thread->in_handler))
        sched_yield();
    for (;;) {
        int state = atomic_load(&thread->timer_state);
        if (state == ADT_TIMER_BUSY) {
            sched_yield();
            continue;
        }
        if (state == ADT_TIMER_LIVE && !atomic_compare_exchange_strong(&thread->timer_state, &state, ADT_TIMER_DEAD))
            continue;
        if (state == ADT_TIMER_LIVE) {
            if (thread->stop_clock == 0)
                thread->stop_clock = thread_clock_now(thread);
            if (thread->perf_fd >= 0) {
                /* Disabled first: a signal it already queued is delivered
                 * at the return of a system call, and finds the thread
                 * inactive (or, on another thread, is not for it). */
                ioctl(thread->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
                close(thread->perf_fd);
                thread->perf_fd = -1;
            } else {
                timer_delete(thread->timer);
            }
        }
        break;
    }
}

void adt_sampler_thread_stop(adt_location *location)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL)
        return;
    stop_thread(thread);
    if (adt_sampler_current == thread) {
        papi_destroy_event_set(&thread->papi_event_set);
        adt_sampler_current = NULL;
    }
}

void adt_sampler_halt(void)
{
    atomic_store(&adt_sampler.halted, true);
}

/* Halts first: a thread that starts meanwhile (its creator ran before the
 * end of the run) may add itself to the list after the walk below began,
 * and its samples would intern calling contexts after they are resolved;
 * its handlers see the halt instead (handler.c). */
void adt_sampler_stop_all(void)
{
    adt_sampler_halt();
    for (adt_sampler_thread *thread = atomic_load(&adt_sampler.threads); thread != NULL; thread = thread->next)
        stop_thread(thread);
}

/* May run in signal context (own thread: a sample append that ran out of
 * memory, or the overload protection) or on another thread (a drop asked
 * by an event append): it never waits. The new period is a fresh draw. Two halvings of one thread can
 * overlap and arrive out of order, so the shift only ever grows. The one
 * that holds the timer re-arms it until the period matches the largest
 * shift seen: a halving that found the timer busy leaves the re-arming to
 * it. A timer being stopped keeps its period; the shift still reaches the
 * samples. */
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
        arm_timer(thread, armed);
        atomic_store(&thread->timer_state, ADT_TIMER_LIVE);
        if (atomic_load(&thread->shift) == armed)
            return;
    }
}

/* ---- MPI region contexts ---------------------------------------------- */

__attribute__((noinline)) uint32_t adt_sampler_region_context(adt_location *location, uint32_t region)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL || !adt_sampler.initialised || adt_sampler_current != thread)
        return ADT_UNDEFINED_ID;
    /* An MPI call is the refresh point of the code map for objects loaded
     * since a sample last found it stale (one relaxed load otherwise). */
    adt_code_map_refresh_if_stale();
    void *frames[ADT_SAMPLER_DEPTH_MAX + 2];
    void *wrapper = __builtin_return_address(0);
    /* busy: a sample arriving now must not re-enter unw_backtrace on this
     * thread (libunwind's per-thread cache is not re-entrant); the
     * compiler barriers keep the unwinding inside the flagged span. While
     * the code map is being changed (a dlclose, which may be running this
     * very MPI call from a destructor) the call is recorded without its
     * callers rather than waited for. */
    atomic_store_explicit(&thread->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    int count = 0;
    if (adt_code_map_enter(thread)) {
        count = unw_backtrace(frames, (int)adt_sampler.depth + 2);
        adt_code_map_leave(thread);
    } else {
        thread->region_paths_cut++;
    }
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&thread->busy, 0, memory_order_relaxed);
    /* frames[0] is in this function, the wrapper's return address names
     * the wrapper frame; the path starts with the wrapper's caller. */
    int first = 0;
    while (first < count && frames[first] != wrapper)
        first++;
    first++;
    int callers = count - first;
    if (callers > (int)adt_sampler.depth - 1)
        callers = (int)adt_sampler.depth - 1;
    if (callers < 0)
        callers = 0;
    bool full = false;
    uint32_t parent = callers > 0 ? adt_sampler_intern_path(frames + first, callers, 0, &full) : ADT_UNDEFINED_ID;
    if (full)
        return parent;
    uint32_t node = adt_cct_intern(&adt_sampler.tree, parent, ADT_CCT_KEY_REGION | region);
    return node == ADT_UNDEFINED_ID ? (parent == ADT_UNDEFINED_ID ? ADT_CCT_NODE_FULL : parent) : node;
}

uint32_t adt_sampler_enter_region(adt_location *location, uint32_t calling_context)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL)
        return ADT_UNDEFINED_ID;
    return atomic_exchange_explicit(&thread->region_context, calling_context, memory_order_relaxed);
}

void adt_sampler_leave_region(adt_location *location, uint32_t previous)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread != NULL)
        atomic_store_explicit(&thread->region_context, previous, memory_order_relaxed);
}

/* ---- end of run -------------------------------------------------------- */

int adt_sampler_write_definitions(adt_defs *defs)
{
    if (adt_sampler.tree.nodes == NULL) {
        adt_log("adt_sampler_write_definitions: the sampler is not initialised");
        return -1;
    }
    return adt_sampler_resolve(defs);
}

/* The per-thread additions of adt_sampler_stats, summed over every thread
 * (only == NULL) or over the threads that sampled into `only`. */
static void add_thread_counters(const adt_location *only, adt_sampler_stats *stats)
{
    uint64_t handler_ticks = 0, timed = 0;
    for (adt_sampler_thread *thread = atomic_load(&adt_sampler.threads); thread != NULL; thread = thread->next) {
        if (only != NULL && thread->location != only)
            continue;
        stats->signals += thread->signals;
        stats->samples_busy += thread->samples_busy;
        stats->samples_code_changing += thread->samples_code_changing;
        stats->paths_cut += thread->paths_cut + thread->region_paths_cut;
        stats->contexts_full += thread->contexts_full;
        stats->overload_halvings += thread->overload_halvings;
        handler_ticks += thread->handler_ticks;
        timed += thread->samples_timed;
    }
    stats->handler_mean_ns = timed > 0 ? (double)adt_clock_ticks_to_ns(handler_ticks) / (double)timed : 0.0;
}

void adt_sampler_get_location_stats(const adt_location *location, adt_sampler_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    add_thread_counters(location, stats);
}

void adt_sampler_get_stats(adt_sampler_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->requested_rate_hz = adt_sampler.rate_hz;
    stats->metrics = adt_sampler.metric_count;
    stats->kernel_tick_hz = adt_sampler.kernel_tick_hz;
    stats->perf_events = adt_sampler.perf;
    if (adt_sampler.tree.nodes != NULL) {
        stats->contexts = adt_cct_count(&adt_sampler.tree);
        stats->context_bytes = adt_sampler.tree.memory_bytes;
        stats->contexts_lost_races = atomic_load_explicit(&adt_sampler.tree.lost_races, memory_order_relaxed);
    }
    add_thread_counters(NULL, stats);
    adt_sampler_thread *main_thread = adt_sampler.main_thread;
    if (main_thread != NULL) {
        uint64_t end = main_thread->stop_clock != 0 ? main_thread->stop_clock : thread_clock_now(main_thread);
        if (end > main_thread->start_clock)
            stats->delivered_rate_hz =
                (double)main_thread->signals_weighted * 1e9 / (double)(end - main_thread->start_clock);
    }
}

void adt_sampler_shutdown(void)
{
    adt_sampler_stop_all();
    adt_sampler_thread *thread = atomic_exchange(&adt_sampler.threads, NULL);
    while (thread != NULL) {
        adt_sampler_thread *next = thread->next;
        papi_destroy_event_set(&thread->papi_event_set);
        free(thread);
        thread = next;
    }
    adt_sampler_current = NULL;
    adt_sampler.main_thread = NULL;
    adt_code_map_shutdown();
    adt_cct_destroy(&adt_sampler.tree);
    adt_sampler.initialised = false;
}
