/*
 * The sampler's start-up: the process's (adt_sampler_init: the timers'
 * delivery, the PAPI metrics, the calling-context tree, the code map and
 * the sampling signal's hook) and each thread's (its state, event set and
 * timer), and what a forked child forgets.
 *
 * Execution context: normal code, at the start of the measurement and on
 * each new thread before its start routine runs (the runtime's
 * pthread_create interposer), never in a signal handler: it allocates
 * (the thread state, PAPI), reads /proc, warns on stderr and makes the
 * system calls that create timers and perf events. A thread's timer
 * starts last, once its state is complete, so its first signal finds
 * everything the handler reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/sampler_internal.h"

static pid_t current_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
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

/* The PAPI events of ADAPTRACE_METRICS (list): those this machine can
 * count are kept and registered with defs (metrics.c). Returns 0, or -1
 * after a message when the list is malformed. */
static int init_metrics(const char *list, adt_defs *defs)
{
    char requested[ADT_METRICS_COUNT_MAX][ADT_METRIC_NAME_MAX];
    char error[256];
    int count = adt_config_metric_names(list, requested, error, sizeof error);
    if (count < 0) {
        adt_log("ADAPTRACE_METRICS='%s': %s", list, error);
        return -1;
    }
    adt_sampler.metric_count = 0;
    if (count > 0)
        adt_sampler_keep_metrics(requested, (uint32_t)count, defs);
    return 0;
}

int adt_sampler_init(const adt_config *config, adt_defs *defs, uint64_t context_bytes)
{
    static bool fork_handler_registered;
    if (adt_sampler.initialised) {
        adt_log("adt_sampler_init: the sampler is already initialised");
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
    adt_sampler.depth = config->unwind_depth;
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

/* Thread start, before the timer is live: the first period, and the perf
 * event enabled (it stays enabled until the thread stops). The seed mixes
 * the thread id and the time, so threads and runs draw their own streams. */
static int start_timer(adt_sampler_thread *thread, unsigned shift)
{
    adt_dither_seed(&thread->dither, ((uint64_t)thread->tid << 32) ^ adt_clock_now() ^ (uintptr_t)thread);
    if (adt_sampler_arm_timer(thread, shift) != 0)
        return -1;
    return thread->perf_fd >= 0 ? ioctl(thread->perf_fd, PERF_EVENT_IOC_ENABLE, 0) : 0;
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
    thread->papi_event_set = ADT_NO_EVENT_SET;
    thread->region_node = ADT_UNDEFINED_ID; /* no MPI call's node yet */
    thread->ring = ADT_SAMPLER_RING_UNCLAIMED;
    /* Where region.c may look for the slots of the callers' return
     * addresses: no bounds, no validated callers. */
    pthread_attr_t attributes;
    void *stack = NULL;
    size_t stack_bytes = 0;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
        if (pthread_attr_getstack(&attributes, &stack, &stack_bytes) == 0) {
            thread->stack_low = (uintptr_t)stack;
            thread->stack_high = (uintptr_t)stack + stack_bytes;
        }
        pthread_attr_destroy(&attributes);
    }
    atomic_init(&thread->region_context, ADT_UNDEFINED_ID);
    atomic_init(&thread->sleeping_call, NULL);

    /* The first unw_backtrace of a thread sets up its cache (up to ~1 ms);
     * do that here rather than in the first sample, with the objects
     * loaded so far in the code map. */
    adt_code_map_refresh_if_stale();
    void *warm_up[ADT_UNWIND_DEPTH_MAX];
    unw_backtrace(warm_up, (int)adt_sampler.depth);

    if (adt_sampler.metric_count > 0) {
        thread->metric_count = adt_sampler_start_event_set(&thread->papi_event_set, adt_sampler.metric_names,
                                                           adt_sampler.metric_count);
        if (thread->metric_count != adt_sampler.metric_count) {
            adt_log("ADAPTRACE_METRICS: thread %d cannot count all of the metrics; its samples carry zeros",
                    (int)thread->tid);
            adt_sampler_destroy_event_set(&thread->papi_event_set);
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
            adt_sampler_destroy_event_set(&thread->papi_event_set);
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
            adt_sampler_destroy_event_set(&thread->papi_event_set);
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
            adt_sampler_destroy_event_set(&thread->papi_event_set);
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
    thread->start_clock = thread->perf_fd >= 0 ? 0 : adt_sampler_thread_clock_now(thread);
    atomic_store(&thread->timer_state, ADT_TIMER_LIVE);
    atomic_store(&thread->active, 1);
    /* The location's rate history starts here, before the timer can fire:
     * a drop it brings stamps the shifts after this one. */
    adt_buffer_sampling_started(location, adt_clock_now());
    if (start_timer(thread, stats.shift) != 0) {
        adt_log("adt_sampler_thread_start: timer_settime for thread %d failed: %m", (int)thread->tid);
        atomic_store(&thread->active, 0);
        return -1;
    }
    return 0;
}
