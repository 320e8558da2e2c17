/*
 * Sleeping calls under a timer-delivered sampling signal: what the
 * interposed sleeping calls (runtime/interpose.c) do around the real one.
 *
 * Execution context: normal code, the application's own calls, on the
 * calling thread; two signal-mask changes and atomic stores, no malloc,
 * no lock, no stdio (a sleeping call may be made from anywhere, a signal
 * handler of the application included).
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
#include <errno.h>
#include <pthread.h>
#include <signal.h>

#include "sampler/sampler_internal.h"

bool adt_sampler_sleep_begin(adt_sleep_guard *guard, void *function, void *caller)
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
     * unblock in adt_sampler_sleep_end, never before the real call. */
    guard->outer = atomic_exchange_explicit(&thread->sleeping_call, &guard->call, memory_order_relaxed);
    return true;
}

/* Restoring the mask delivers a held-back expiration while the flag still
 * says so. */
void adt_sampler_sleep_end(adt_sleep_guard *guard, bool guarded)
{
    if (!guarded)
        return;
    int saved_errno = errno;
    pthread_sigmask(SIG_SETMASK, &guard->saved_mask, NULL);
    atomic_store_explicit(&guard->thread->sleeping_call, guard->outer, memory_order_relaxed);
    errno = saved_errno;
}

/* NULL (the thread's mask, blocked already) stays NULL. */
const sigset_t *adt_sampler_sleep_mask(bool guarded, const sigset_t *mask, sigset_t *copy)
{
    if (!guarded || mask == NULL)
        return mask;
    *copy = *mask;
    sigaddset(copy, adt_sampler.signal);
    return copy;
}
