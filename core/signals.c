/*
 * Sharing signals with the application: the sampling signal (sampler/)
 * and the signals that end a run (runtime/).
 *
 * adaptrace installs its dispatcher for a signal it owns once and keeps it
 * for the life of the process. sigaction() and signal() are interposed
 * (runtime/interpose.c exports them; they call
 * adt_signal_interposed_sigaction and adt_signal_interposed_signal here):
 * for a signal adaptrace owns they neither
 * replace nor reveal adaptrace's handler but record the application's
 * action and report it back as the previous one, exactly as if adaptrace
 * were not there. The dispatcher (signal context) runs the owner's hook;
 * a hook that returns false (the sampler: not one of its timer signals;
 * the runtime: always, after noting the ending) passes the signal on to
 * the application's action: its handler (with its sa_mask blocked,
 * SA_SIGINFO honoured, SA_RESETHAND applied), nothing for SIG_IGN, and for
 * SIG_DFL the default action (the disposition is handed back to the kernel
 * and the signal raised again, so a terminating default still terminates,
 * with the same exit status and core dump).
 *
 * The kernel's disposition (kernel_action): adaptrace's own signals (the
 * sampling and the snapshot signal) always reach the dispatcher, with
 * SA_RESTART so that what it consumes interrupts nothing. The ending
 * signals, which adaptrace only watches, keep the application's effect on
 * system calls: ignored by the kernel while the application ignores them,
 * and while it handles them, delivered with its SA_RESTART and
 * SA_ONSTACK.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* glibc's exported alias of its sigaction, for when dlsym finds none. */
extern int __sigaction(int signum, const struct sigaction *action, struct sigaction *previous);

/* The application's action per owned signal, double-buffered: writers fill
 * the slot not in use and publish it with one atomic store, so the handler
 * always reads a complete action. Writers serialise on a flag. */
typedef struct owned_signal {
    _Atomic int owned;
    _Atomic int watched;          /* adt_signal_ownership ADT_SIGNAL_WATCHED */
    _Atomic int current;
    _Atomic int writing;
    _Atomic(adt_signal_hook) hook;
    struct sigaction application[2];
} owned_signal;

static owned_signal owned_signals[NSIG];
static _Atomic(sigaction_fn) real_sigaction_fn;

static sigaction_fn real_sigaction(void)
{
    sigaction_fn function = atomic_load(&real_sigaction_fn);
    if (function == NULL) {
        function = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        if (function == NULL)
            function = __sigaction;
        atomic_store(&real_sigaction_fn, function);
    }
    return function;
}

static bool is_owned(int signum)
{
    return signum > 0 && signum < NSIG && atomic_load(&owned_signals[signum].owned);
}

static void record_application_action(owned_signal *entry, const struct sigaction *action)
{
    int expected = 0;
    while (!atomic_compare_exchange_weak(&entry->writing, &expected, 1)) {
        expected = 0;
        sched_yield();
    }
    int next = 1 - atomic_load(&entry->current);
    entry->application[next] = *action;
    atomic_store(&entry->current, next);
    atomic_store(&entry->writing, 0);
}

/* The installed handler of every owned signal. errno is saved for the
 * hook and the application's handler alike. */
static void dispatch(int signum, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    adt_signal_hook hook = atomic_load(&owned_signals[signum].hook);
    if (hook == NULL || !hook(signum, info, ucontext))
        adt_signal_pass_on(signum, info, ucontext);
    errno = saved_errno;
}

/* The kernel's disposition for an owned signal given the application's
 * action (adt_signal_ownership says why). */
static struct sigaction kernel_action(const owned_signal *entry, const struct sigaction *application)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    sigemptyset(&ours.sa_mask);
    bool watched = atomic_load(&entry->watched);
    if (watched && application->sa_handler == SIG_IGN) {
        ours.sa_handler = SIG_IGN;
        return ours;
    }
    ours.sa_sigaction = dispatch;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    if (watched && application->sa_handler != SIG_DFL)
        ours.sa_flags = SA_SIGINFO | (application->sa_flags & (SA_RESTART | SA_ONSTACK));
    return ours;
}

int adt_signal_own(int signum, adt_signal_hook hook, adt_signal_ownership ownership)
{
    if (signum <= 0 || signum >= NSIG) {
        adt_log("signal %d: not a signal number (accepted: 1..%d)", signum, NSIG - 1);
        return -1;
    }
    owned_signal *entry = &owned_signals[signum];
    atomic_store(&entry->hook, hook);
    atomic_store(&entry->watched, ownership == ADT_SIGNAL_WATCHED);
    if (atomic_load(&entry->owned)) {
        struct sigaction ours = kernel_action(entry, &entry->application[atomic_load(&entry->current)]);
        return real_sigaction()(signum, &ours, NULL);
    }
    struct sigaction previous;
    if (real_sigaction()(signum, NULL, &previous) != 0) {
        adt_log("cannot read the action of signal %d (%s): %m", signum, strsignal(signum));
        return -1;
    }
    struct sigaction ours = kernel_action(entry, &previous);
    if (real_sigaction()(signum, &ours, &previous) != 0) {
        adt_log("cannot install adaptrace's handler for signal %d (%s): %m", signum, strsignal(signum));
        return -1;
    }
    record_application_action(entry, &previous);
    atomic_store(&entry->owned, 1);
    return 0;
}

/* Signals whose default action is to ignore them. */
static bool default_ignores(int signum)
{
    return signum == SIGCHLD || signum == SIGURG || signum == SIGWINCH || signum == SIGCONT;
}

static bool default_stops(int signum)
{
    return signum == SIGSTOP || signum == SIGTSTP || signum == SIGTTIN || signum == SIGTTOU;
}

bool adt_signal_ends_process(int signum)
{
    if (!is_owned(signum) || default_ignores(signum) || default_stops(signum))
        return false;
    owned_signal *entry = &owned_signals[signum];
    return entry->application[atomic_load(&entry->current)].sa_handler == SIG_DFL;
}

bool adt_signal_application_handles(int signum)
{
    if (!is_owned(signum))
        return false;
    owned_signal *entry = &owned_signals[signum];
    const struct sigaction *action = &entry->application[atomic_load(&entry->current)];
    return action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN;
}

static void run_default_action(int signum)
{
    if (default_ignores(signum))
        return;
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    struct sigaction ours;
    real_sigaction()(signum, &fallback, &ours);
    sigset_t just_this;
    sigemptyset(&just_this);
    sigaddset(&just_this, signum);
    raise(signum);
    pthread_sigmask(SIG_UNBLOCK, &just_this, NULL);
    /* Still here: the default did not end the process (a stop signal, or
     * someone blocks it). adaptrace keeps the signal. */
    real_sigaction()(signum, &ours, NULL);
}

void adt_signal_pass_on(int signum, siginfo_t *info, void *ucontext)
{
    if (!is_owned(signum))
        return;
    owned_signal *entry = &owned_signals[signum];
    struct sigaction action = entry->application[atomic_load(&entry->current)];
    /* sa_handler and sa_sigaction share their storage; the kernel reads
     * SIG_IGN and SIG_DFL whatever the flags say, and so does this. */
    if (action.sa_handler == SIG_IGN)
        return;
    if (action.sa_handler == SIG_DFL) {
        run_default_action(signum);
        return;
    }
    if (action.sa_flags & SA_RESETHAND) {
        struct sigaction reset;
        memset(&reset, 0, sizeof reset);
        reset.sa_handler = SIG_DFL;
        record_application_action(entry, &reset);
    }
    sigset_t saved;
    pthread_sigmask(SIG_BLOCK, &action.sa_mask, &saved);
    if (action.sa_flags & SA_SIGINFO)
        action.sa_sigaction(signum, info, ucontext);
    else
        action.sa_handler(signum);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/* A watched signal's kernel disposition follows the application's new
 * action (kernel_action). */
static int application_sigaction(int signum, const struct sigaction *action, struct sigaction *previous)
{
    owned_signal *entry = &owned_signals[signum];
    if (previous != NULL)
        *previous = entry->application[atomic_load(&entry->current)];
    if (action == NULL)
        return 0;
    record_application_action(entry, action);
    if (!atomic_load(&entry->watched))
        return 0;
    struct sigaction ours = kernel_action(entry, action);
    return real_sigaction()(signum, &ours, NULL);
}

/* ---- behind the interposed sigaction and signal (runtime/interpose.c) -- */

int adt_signal_interposed_sigaction(int signum, const struct sigaction *action, struct sigaction *previous)
{
    if (is_owned(signum))
        return application_sigaction(signum, action, previous);
    return real_sigaction()(signum, action, previous);
}

/* BSD semantics like glibc's signal(): SA_RESTART, the signal blocked
 * while its handler runs. */
sighandler_t adt_signal_interposed_signal(int signum, sighandler_t handler)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (signum > 0 && signum < NSIG)
        sigaddset(&action.sa_mask, signum);
    struct sigaction previous;
    int status = is_owned(signum) ? application_sigaction(signum, &action, &previous)
                                  : real_sigaction()(signum, &action, &previous);
    return status == 0 ? previous.sa_handler : SIG_ERR;
}
