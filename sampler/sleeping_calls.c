/*
 * Sleeping calls under a timer-delivered sampling signal.
 *
 * Execution context: normal code, the application's own calls (these are
 * interposed libc functions, exported from libadaptrace.so).
 *
 * Why: a signal whose handler runs while a thread sleeps ends the sleep:
 * nanosleep, clock_nanosleep, usleep, poll, ppoll, select, pselect,
 * epoll_wait, epoll_pwait(2), sigtimedwait and sigwaitinfo return EINTR,
 * sleep returns the time left, pause and sigsuspend return, whatever
 * SA_RESTART says (signal(7)). The POSIX timers of the `wall` clock (and
 * of the `cpu` clock where perf events are refused, whose expiry can
 * fall in the kernel part of a call) would so change what the
 * application sees. The perf cpu-clock events of the default counts only
 * user time: their signal never reaches a thread in a system call, and
 * nothing is interposed then beyond one TLS read.
 *
 * So for the duration of the real call the sampling signal is blocked on
 * the calling thread (and added to the mask that ppoll, pselect,
 * epoll_pwait, epoll_pwait2 and sigsuspend install for the call). Every
 * other signal reaches the call exactly as without adaptrace. The timer
 * keeps running: its first expiration stays pending, the kernel counts
 * the rest in si_overrun, and when the mask is restored the signal
 * arrives, flagged by the thread's sleeping_call, and the handler records
 * the held-back expirations as samples at the sleeping call
 * (handler.c, catch_up_sleep): the wall-clock profile still shows the
 * time spent sleeping, where it was spent.
 *
 * Calls that cannot sleep (a zero timeout) go straight through. Left
 * alone: calls that SA_RESTART restarts (read, write, wait, futex waits
 * behind pthread and C++ waits), and the System V IPC calls and sockets
 * with SO_RCVTIMEO/SO_SNDTIMEO, which are not restarted and would need
 * every read and write guarded (docs/sampling.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "sampler/sampler_internal.h"

/* The next definition of name after libadaptrace.so: libc's. The loader
 * lookup runs once per function; glibc defines all of them, so a failed
 * lookup means a broken installation and ends the process with a message
 * rather than calling back into adaptrace. */
static void *real_function(_Atomic(void *) *slot, const char *name)
{
    void *function = atomic_load_explicit(slot, memory_order_acquire);
    if (function == NULL) {
        function = dlsym(RTLD_NEXT, name);
        if (function == NULL) {
            adt_log("the C library has no definition of %s, which adaptrace interposes", name);
            abort();
        }
        atomic_store_explicit(slot, function, memory_order_release);
    }
    return function;
}

typedef struct sleep_guard {
    adt_sampler_thread *thread;
    adt_sleeping_call call;
    const adt_sleeping_call *outer; /* a sleeping call this one interrupted */
    sigset_t saved_mask;
} sleep_guard;

/* Blocks the sampling signal on a sampled thread whose signals come from
 * a POSIX timer; false (nothing done) otherwise. */
static bool guard_begin(sleep_guard *guard, void *function, void *caller)
{
    adt_sampler_thread *thread = adt_sampler_current;
    if (thread == NULL || adt_sampler.perf || !atomic_load_explicit(&thread->active, memory_order_relaxed))
        return false;
    sigset_t sampling;
    sigemptyset(&sampling);
    sigaddset(&sampling, adt_sampler.signal);
    if (pthread_sigmask(SIG_BLOCK, &sampling, &guard->saved_mask) != 0)
        return false;
    guard->thread = thread;
    guard->call.start = adt_clock_now();
    guard->call.caller = caller;
    guard->call.function = function;
    /* Blocked before published: a handler that sees the flag runs at the
     * unblock below, never before the real call. */
    guard->outer = atomic_exchange_explicit(&thread->sleeping_call, &guard->call, memory_order_relaxed);
    return true;
}

/* Restores the mask, which delivers a held-back expiration while the flag
 * still says so; keeps errno as the real call left it. */
static void guard_end(sleep_guard *guard, bool guarded)
{
    if (!guarded)
        return;
    int saved_errno = errno;
    pthread_sigmask(SIG_SETMASK, &guard->saved_mask, NULL);
    atomic_store_explicit(&guard->thread->sleeping_call, guard->outer, memory_order_relaxed);
    errno = saved_errno;
}

/* The mask a call installs for its duration, with the sampling signal
 * added; NULL (the thread's mask, blocked already) stays NULL. */
static const sigset_t *with_sampling_blocked(bool guarded, const sigset_t *mask, sigset_t *copy)
{
    if (!guarded || mask == NULL)
        return mask;
    *copy = *mask;
    sigaddset(copy, adt_sampler.signal);
    return copy;
}

static bool zero_timespec(const struct timespec *timeout)
{
    return timeout != NULL && timeout->tv_sec == 0 && timeout->tv_nsec == 0;
}

/* ---- interposed (exported) -------------------------------------------- */

#define REAL(name) ((__typeof__(&name))real_function(&real_##name, #name))

static _Atomic(void *) real_sleep, real_usleep, real_nanosleep, real_clock_nanosleep, real_poll, real_ppoll,
    real_select, real_pselect, real_epoll_wait, real_epoll_pwait, real_epoll_pwait2, real_pause, real_sigsuspend,
    real_sigtimedwait, real_sigwaitinfo;

unsigned int sleep(unsigned int seconds)
{
    sleep_guard guard;
    bool guarded = seconds > 0 && guard_begin(&guard, REAL(sleep), __builtin_return_address(0));
    unsigned int left = REAL(sleep)(seconds);
    guard_end(&guard, guarded);
    return left;
}

int usleep(useconds_t microseconds)
{
    sleep_guard guard;
    bool guarded = microseconds > 0 && guard_begin(&guard, REAL(usleep), __builtin_return_address(0));
    int result = REAL(usleep)(microseconds);
    guard_end(&guard, guarded);
    return result;
}

int nanosleep(const struct timespec *request, struct timespec *remaining)
{
    sleep_guard guard;
    bool guarded = !zero_timespec(request) && guard_begin(&guard, REAL(nanosleep), __builtin_return_address(0));
    int result = REAL(nanosleep)(request, remaining);
    guard_end(&guard, guarded);
    return result;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remaining)
{
    sleep_guard guard;
    bool guarded = guard_begin(&guard, REAL(clock_nanosleep), __builtin_return_address(0));
    int result = REAL(clock_nanosleep)(clock, flags, request, remaining);
    guard_end(&guard, guarded);
    return result;
}

int poll(struct pollfd *fds, nfds_t count, int timeout_ms)
{
    sleep_guard guard;
    bool guarded = timeout_ms != 0 && guard_begin(&guard, REAL(poll), __builtin_return_address(0));
    int result = REAL(poll)(fds, count, timeout_ms);
    guard_end(&guard, guarded);
    return result;
}

int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask)
{
    sleep_guard guard;
    sigset_t copy;
    bool guarded = !zero_timespec(timeout) && guard_begin(&guard, REAL(ppoll), __builtin_return_address(0));
    int result = REAL(ppoll)(fds, count, timeout, with_sampling_blocked(guarded, mask, &copy));
    guard_end(&guard, guarded);
    return result;
}

int select(int count, fd_set *read_set, fd_set *write_set, fd_set *error_set, struct timeval *timeout)
{
    sleep_guard guard;
    bool can_sleep = timeout == NULL || timeout->tv_sec != 0 || timeout->tv_usec != 0;
    bool guarded = can_sleep && guard_begin(&guard, REAL(select), __builtin_return_address(0));
    int result = REAL(select)(count, read_set, write_set, error_set, timeout);
    guard_end(&guard, guarded);
    return result;
}

int pselect(int count, fd_set *read_set, fd_set *write_set, fd_set *error_set, const struct timespec *timeout,
            const sigset_t *mask)
{
    sleep_guard guard;
    sigset_t copy;
    bool guarded = !zero_timespec(timeout) && guard_begin(&guard, REAL(pselect), __builtin_return_address(0));
    int result = REAL(pselect)(count, read_set, write_set, error_set, timeout,
                               with_sampling_blocked(guarded, mask, &copy));
    guard_end(&guard, guarded);
    return result;
}

int epoll_wait(int epoll, struct epoll_event *events, int capacity, int timeout_ms)
{
    sleep_guard guard;
    bool guarded = timeout_ms != 0 && guard_begin(&guard, REAL(epoll_wait), __builtin_return_address(0));
    int result = REAL(epoll_wait)(epoll, events, capacity, timeout_ms);
    guard_end(&guard, guarded);
    return result;
}

int epoll_pwait(int epoll, struct epoll_event *events, int capacity, int timeout_ms, const sigset_t *mask)
{
    sleep_guard guard;
    sigset_t copy;
    bool guarded = timeout_ms != 0 && guard_begin(&guard, REAL(epoll_pwait), __builtin_return_address(0));
    int result = REAL(epoll_pwait)(epoll, events, capacity, timeout_ms, with_sampling_blocked(guarded, mask, &copy));
    guard_end(&guard, guarded);
    return result;
}

int epoll_pwait2(int epoll, struct epoll_event *events, int capacity, const struct timespec *timeout,
                 const sigset_t *mask)
{
    sleep_guard guard;
    sigset_t copy;
    bool guarded = !zero_timespec(timeout) && guard_begin(&guard, REAL(epoll_pwait2), __builtin_return_address(0));
    int result = REAL(epoll_pwait2)(epoll, events, capacity, timeout, with_sampling_blocked(guarded, mask, &copy));
    guard_end(&guard, guarded);
    return result;
}

int pause(void)
{
    sleep_guard guard;
    bool guarded = guard_begin(&guard, REAL(pause), __builtin_return_address(0));
    int result = REAL(pause)();
    guard_end(&guard, guarded);
    return result;
}

int sigsuspend(const sigset_t *mask)
{
    sleep_guard guard;
    sigset_t copy;
    bool guarded = guard_begin(&guard, REAL(sigsuspend), __builtin_return_address(0));
    int result = REAL(sigsuspend)(with_sampling_blocked(guarded, mask, &copy));
    guard_end(&guard, guarded);
    return result;
}

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    sleep_guard guard;
    bool guarded = !zero_timespec(timeout) && guard_begin(&guard, REAL(sigtimedwait), __builtin_return_address(0));
    int result = REAL(sigtimedwait)(set, info, timeout);
    guard_end(&guard, guarded);
    return result;
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    sleep_guard guard;
    bool guarded = guard_begin(&guard, REAL(sigwaitinfo), __builtin_return_address(0));
    int result = REAL(sigwaitinfo)(set, info);
    guard_end(&guard, guarded);
    return result;
}
