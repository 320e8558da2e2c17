/*
 * Every libc function adaptrace overrides, in one place. libadaptrace.so
 * exports these definitions, so that the dynamic loader binds the
 * application's calls (and the libraries') to them before the C
 * library's; each calls the C library's own (the next definition) around
 * or through the logic of the module it serves, which that module's
 * public header offers:
 *
 * - sigaction, signal (core.h, adt_signal_interposed_*): the sampling
 *   signal and the signals that end a run are shared with the
 *   application. For a signal adaptrace owns they record the
 *   application's action and report it back instead of replacing
 *   adaptrace's dispatcher. glibc's signal() calls its internal
 *   __sigaction directly, so it is overridden too.
 * - pthread_create (runtime_internal.h, adt_threads_create): a thread
 *   that a measured thread creates takes its location and starts its
 *   timer before the user's start routine runs (OpenMP workers too).
 * - dlclose (sampler.h, adt_sampler_dlclose): it may unmap objects whose
 *   unwind tables a signal handler is reading; the real call runs inside
 *   an exclusive section of the sampler's code map. dlopen is not
 *   overridden: the loader resolves a name with the RUNPATH and $ORIGIN of
 *   the calling object, which a wrapper would replace by its own.
 * - sleep, usleep, nanosleep, clock_nanosleep, poll, ppoll, select,
 *   pselect, epoll_wait, epoll_pwait, epoll_pwait2, pause, sigsuspend,
 *   sigtimedwait, sigwaitinfo (sampler.h, adt_sampler_sleep_*): a signal
 *   whose handler runs while a thread sleeps in one of them ends the
 *   sleep whatever SA_RESTART says, so the sampling signal is held back
 *   for the duration of the call and its expirations sampled afterwards
 *   (sampler/sleeping_calls.c says why each one). Calls that cannot sleep
 *   (a zero timeout) go straight through.
 *
 * The MPI functions are wrapped by mpi-events/, not here: they are the
 * measured events, not libc's.
 *
 * Execution context: the application's own calls, in whatever context it
 * makes them. Nothing here allocates, locks or prints, except the first
 * lookup of a next definition (the loader's dlsym, once per function) and
 * what the module logic behind a call does (its header says).
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "runtime_internal.h"
#include "sampler/sampler.h"

/* The next definition of name after libadaptrace.so: libc's. The loader
 * lookup runs once per function; glibc defines all of them, so a failed
 * lookup means a broken installation and ends the process with a message
 * rather than calling back into adaptrace. (sigaction's own lookup is
 * core's, which installs its dispatcher with it.) */
static void *next_definition(_Atomic(void *) *slot, const char *name)
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

#define REAL(name) ((__typeof__(&name))next_definition(&real_##name, #name))

static _Atomic(void *) real_pthread_create, real_dlclose, real_sleep, real_usleep, real_nanosleep,
    real_clock_nanosleep, real_poll, real_ppoll, real_select, real_pselect, real_epoll_wait, real_epoll_pwait,
    real_epoll_pwait2, real_pause, real_sigsuspend, real_sigtimedwait, real_sigwaitinfo;

/* ---- signals shared with the application (core) ---------------------- */

int sigaction(int signum, const struct sigaction *action, struct sigaction *previous)
{
    return adt_signal_interposed_sigaction(signum, action, previous);
}

sighandler_t signal(int signum, sighandler_t handler)
{
    return adt_signal_interposed_signal(signum, handler);
}

/* ---- threads (runtime) ------------------------------------------------- */

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
    return adt_threads_create(REAL(pthread_create), thread, attr, routine, arg);
}

/* ---- the code map (sampler) -------------------------------------------- */

int dlclose(void *handle)
{
    return adt_sampler_dlclose(REAL(dlclose), handle);
}

/* ---- sleeping calls (sampler) ------------------------------------------ */

static bool zero_timespec(const struct timespec *timeout)
{
    return timeout != NULL && timeout->tv_sec == 0 && timeout->tv_nsec == 0;
}

unsigned int sleep(unsigned int seconds)
{
    adt_sleep_guard guard;
    bool guarded = seconds > 0 && adt_sampler_sleep_begin(&guard, REAL(sleep), __builtin_return_address(0));
    unsigned int left = REAL(sleep)(seconds);
    adt_sampler_sleep_end(&guard, guarded);
    return left;
}

int usleep(useconds_t microseconds)
{
    adt_sleep_guard guard;
    bool guarded = microseconds > 0 && adt_sampler_sleep_begin(&guard, REAL(usleep), __builtin_return_address(0));
    int result = REAL(usleep)(microseconds);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int nanosleep(const struct timespec *request, struct timespec *remaining)
{
    adt_sleep_guard guard;
    bool guarded = !zero_timespec(request) &&
                   adt_sampler_sleep_begin(&guard, REAL(nanosleep), __builtin_return_address(0));
    int result = REAL(nanosleep)(request, remaining);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remaining)
{
    adt_sleep_guard guard;
    bool guarded = adt_sampler_sleep_begin(&guard, REAL(clock_nanosleep), __builtin_return_address(0));
    int result = REAL(clock_nanosleep)(clock, flags, request, remaining);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int poll(struct pollfd *fds, nfds_t count, int timeout_ms)
{
    adt_sleep_guard guard;
    bool guarded = timeout_ms != 0 && adt_sampler_sleep_begin(&guard, REAL(poll), __builtin_return_address(0));
    int result = REAL(poll)(fds, count, timeout_ms);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask)
{
    adt_sleep_guard guard;
    sigset_t copy;
    bool guarded = !zero_timespec(timeout) && adt_sampler_sleep_begin(&guard, REAL(ppoll), __builtin_return_address(0));
    int result = REAL(ppoll)(fds, count, timeout, adt_sampler_sleep_mask(guarded, mask, &copy));
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int select(int count, fd_set *read_set, fd_set *write_set, fd_set *error_set, struct timeval *timeout)
{
    adt_sleep_guard guard;
    bool can_sleep = timeout == NULL || timeout->tv_sec != 0 || timeout->tv_usec != 0;
    bool guarded = can_sleep && adt_sampler_sleep_begin(&guard, REAL(select), __builtin_return_address(0));
    int result = REAL(select)(count, read_set, write_set, error_set, timeout);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int pselect(int count, fd_set *read_set, fd_set *write_set, fd_set *error_set, const struct timespec *timeout,
            const sigset_t *mask)
{
    adt_sleep_guard guard;
    sigset_t copy;
    bool guarded = !zero_timespec(timeout) &&
                   adt_sampler_sleep_begin(&guard, REAL(pselect), __builtin_return_address(0));
    int result = REAL(pselect)(count, read_set, write_set, error_set, timeout,
                               adt_sampler_sleep_mask(guarded, mask, &copy));
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int epoll_wait(int epoll, struct epoll_event *events, int capacity, int timeout_ms)
{
    adt_sleep_guard guard;
    bool guarded = timeout_ms != 0 && adt_sampler_sleep_begin(&guard, REAL(epoll_wait), __builtin_return_address(0));
    int result = REAL(epoll_wait)(epoll, events, capacity, timeout_ms);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int epoll_pwait(int epoll, struct epoll_event *events, int capacity, int timeout_ms, const sigset_t *mask)
{
    adt_sleep_guard guard;
    sigset_t copy;
    bool guarded = timeout_ms != 0 && adt_sampler_sleep_begin(&guard, REAL(epoll_pwait), __builtin_return_address(0));
    int result = REAL(epoll_pwait)(epoll, events, capacity, timeout_ms, adt_sampler_sleep_mask(guarded, mask, &copy));
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int epoll_pwait2(int epoll, struct epoll_event *events, int capacity, const struct timespec *timeout,
                 const sigset_t *mask)
{
    adt_sleep_guard guard;
    sigset_t copy;
    bool guarded = !zero_timespec(timeout) &&
                   adt_sampler_sleep_begin(&guard, REAL(epoll_pwait2), __builtin_return_address(0));
    int result = REAL(epoll_pwait2)(epoll, events, capacity, timeout, adt_sampler_sleep_mask(guarded, mask, &copy));
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int pause(void)
{
    adt_sleep_guard guard;
    bool guarded = adt_sampler_sleep_begin(&guard, REAL(pause), __builtin_return_address(0));
    int result = REAL(pause)();
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int sigsuspend(const sigset_t *mask)
{
    adt_sleep_guard guard;
    sigset_t copy;
    bool guarded = adt_sampler_sleep_begin(&guard, REAL(sigsuspend), __builtin_return_address(0));
    int result = REAL(sigsuspend)(adt_sampler_sleep_mask(guarded, mask, &copy));
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    adt_sleep_guard guard;
    bool guarded = !zero_timespec(timeout) &&
                   adt_sampler_sleep_begin(&guard, REAL(sigtimedwait), __builtin_return_address(0));
    int result = REAL(sigtimedwait)(set, info, timeout);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    adt_sleep_guard guard;
    bool guarded = adt_sampler_sleep_begin(&guard, REAL(sigwaitinfo), __builtin_return_address(0));
    int result = REAL(sigwaitinfo)(set, info);
    adt_sampler_sleep_end(&guard, guarded);
    return result;
}
