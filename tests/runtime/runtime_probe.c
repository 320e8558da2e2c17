/*
 * A small serial program run by test_runtime with the adaptrace library
 * preloaded. Each mode exercises one part of the process life; what the
 * test checks comes out on stdout (and in the archive the library writes).
 * The runtime's own entry points are looked up with dlsym, so the program
 * also runs without the library (then they are reported missing).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/format.h"
#include "runtime/rescue.h"

/* Keeps the work from being optimised away; threads compute at once. */
static _Atomic double sink;

/* A fixed amount of work, so that runs differ in speed, not in content. */
__attribute__((noinline)) static void compute(long iterations)
{
    double x = 1.0;
    for (long i = 0; i < iterations; i++)
        x = x * 1.0000001 + 1e-9;
    atomic_store_explicit(&sink, x, memory_order_relaxed);
}

#define WORK 30000000L

static void *runtime_symbol(const char *name)
{
    void *symbol = dlsym(RTLD_DEFAULT, name);
    if (!symbol) {
        printf("missing %s\n", name);
        exit(3);
    }
    return symbol;
}

static const void *current_location(void)
{
    const void *(*location)(void) = (const void *(*)(void))runtime_symbol("adt_runtime_location");
    return location();
}

/* stdout without stdio's buffer: the process may die right after. */
static void say(const char *text)
{
    write(STDOUT_FILENO, text, strlen(text));
    write(STDOUT_FILENO, "\n", 1);
}

/* A page nothing may touch: storing to it is a real fault (SIGSEGV from
 * the kernel), which UBSan does not intercept as it does a null store. */
static volatile int *forbidden_page;

static void fault(void)
{
    forbidden_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *forbidden_page = 1;
}

/* After some work, the process is rank 0 of a run of two ranks, both on
 * its node. */
static void be_rank_zero_of_two_on_a_node(void)
{
    compute(WORK / 10);
    ((void (*)(uint32_t, uint32_t))runtime_symbol("adt_ending_set_rank"))(0, 2);
    const int node[] = {0, 1};
    ((void (*)(const int *, size_t))runtime_symbol("adt_rescue_set_node_peers"))(node, 2);
}

/* Rank 1 of a node of two, saving 0.3 s after rank 0: its rescue file
 * appears where rank 0's ADAPTRACE_OUTPUT puts them. */
static void *save_as_rank_one_later(void *unused)
{
    (void)unused;
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s.rescue/rank-1.adtr", getenv("ADAPTRACE_OUTPUT"));
    FILE *file = fopen(path, "w");
    if (file)
        fclose(file);
    say(file ? "rank 1 saved" : "rank 1 could not save");
    return NULL;
}

static void on_own_term(int signum)
{
    (void)signum;
    say("own SIGTERM handler ran");
}

static void on_own_segv(int signum, siginfo_t *info, void *ucontext)
{
    (void)signum;
    (void)ucontext;
    say(info != NULL && info->si_addr == (void *)forbidden_page ? "own SIGSEGV handler ran at the faulting address"
                                                                  : "own SIGSEGV handler ran");
    _exit(7);
}

/* Signals adaptrace watches for the endings, as the application set
 * them: an ignored SIGHUP must not cut a sleep short, and SIGTERM handled
 * without SA_RESTART must cut a blocking read short (EINTR). A helper
 * thread sends them to the main thread, during its sleep and during its
 * read, then unblocks the read should it have been restarted. */
static int watched_pipe[2];
static pthread_t watched_main;

static void on_term_quietly(int signum)
{
    (void)signum;
}

static void *send_watched_signals(void *unused)
{
    usleep(200000);
    pthread_kill(watched_main, SIGHUP);
    usleep(800000);
    pthread_kill(watched_main, SIGTERM);
    sleep(2);
    if (write(watched_pipe[1], "x", 1) != 1)
        say("cannot write to the pipe");
    return unused;
}

static int run_watched_signals(void)
{
    struct sigaction handled = {.sa_handler = on_term_quietly};
    sigemptyset(&handled.sa_mask);
    struct sigaction ignored = {.sa_handler = SIG_IGN};
    sigemptyset(&ignored.sa_mask);
    if (sigaction(SIGTERM, &handled, NULL) != 0 || sigaction(SIGHUP, &ignored, NULL) != 0 || pipe(watched_pipe) != 0)
        return 2;
    watched_main = pthread_self();
    pthread_t sender;
    pthread_create(&sender, NULL, send_watched_signals, NULL);
    struct timespec nap = {0, 600000000};
    int ignored_signal_cut_sleep = nanosleep(&nap, NULL) != 0;
    char byte;
    int read_interrupted = read(watched_pipe[0], &byte, 1) < 0 && errno == EINTR;
    pthread_join(sender, NULL);
    printf("read_interrupted %d ignored_signal_cut_sleep %d\n", read_interrupted, ignored_signal_cut_sleep);
    return 0;
}

static void *thread_work(void *arg)
{
    long index = (long)(intptr_t)arg;
    printf("thread %ld location %s\n", index, current_location() ? "set" : "null");
    fflush(stdout);
    if (index == 1)
        pthread_exit(NULL);
    compute(WORK / 4);
    return NULL;
}

static int run_threads(int count)
{
    pthread_t threads[16];
    for (int i = 0; i < count && i < 16; i++)
        if (pthread_create(&threads[i], NULL, thread_work, (void *)(intptr_t)(i + 1)) != 0)
            return 1;
    compute(WORK / 4);
    for (int i = 0; i < count && i < 16; i++)
        pthread_join(threads[i], NULL);
    return 0;
}

static void *exit_from_thread(void *unused)
{
    (void)unused;
    compute(WORK / 10);
    printf("thread calls exit\n");
    fflush(stdout);
    exit(0);
}

static int run_system_child(const char *self)
{
    char command[4096];
    snprintf(command, sizeof command, "'%s' child", self);
    int status = system(command);
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

static int run_fork_child(void)
{
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        compute(WORK / 10);
        printf("fork child location %s\n", current_location() ? "set" : "null");
        exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("fork child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* ---- endings the hard way (issue #10) ---------------------------------- */

/* The trace clock as the runtime reads it (core.h's adt_clock_now). */
static uint64_t trace_clock(void)
{
    const bool *tsc = (const bool *)runtime_symbol("adt_clock_uses_tsc");
#if defined(__x86_64__)
    if (*tsc)
        return __builtin_ia32_rdtsc();
#endif
    (void)tsc;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

static _Atomic bool worker_running;

/* Appends Enter/Leave pairs of one region to the thread's own location as
 * fast as it can: a signal to this thread lands inside an append. */
static void *append_forever(void *unused)
{
    (void)unused;
    adt_location *(*location_of)(void) = (adt_location * (*)(void)) runtime_symbol("adt_runtime_location");
    adt_defs *(*defs_of)(void) = (adt_defs * (*)(void)) runtime_symbol("adt_runtime_defs");
    uint32_t (*define_region)(adt_defs *, const char *, const char *, adt_region_role, adt_paradigm, const char *,
                              uint32_t, uint32_t) =
        (uint32_t(*)(adt_defs *, const char *, const char *, adt_region_role, adt_paradigm, const char *, uint32_t,
                     uint32_t))runtime_symbol("adt_defs_region");
    adt_append_status (*append)(adt_location *, uint16_t, uint64_t, const void *, uint32_t) =
        (adt_append_status(*)(adt_location *, uint16_t, uint64_t, const void *, uint32_t))runtime_symbol(
            "adt_buffer_append_event");
    adt_location *location = location_of();
    adt_rec_region region = {define_region(defs_of(), "probe_appends", NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_USER,
                                           NULL, 0, 0),
                             ADT_UNDEFINED_ID};
    atomic_store(&worker_running, true);
    for (;;) {
        append(location, ADT_REC_ENTER, trace_clock(), &region, sizeof region);
        append(location, ADT_REC_LEAVE, trace_clock(), &region, sizeof region);
    }
    return NULL;
}

/* Allocates and frees without pause: a signal to this thread lands inside
 * malloc or free, with the allocator's lock held. */
static void *allocate_forever(void *unused)
{
    (void)unused;
    atomic_store(&worker_running, true);
    for (size_t size = 1;; size = size * 7 % 100003 + 1) {
        void *block = malloc(size);
        block = realloc(block, size * 2);
        free(block);
    }
    return NULL;
}

/* Computes until the main thread's location has been halved `halvings`
 * times (its buffer is small): the run's content then does not depend on
 * the machine's speed. Gives up after a minute (the test then fails on
 * too few halvings). */
static void compute_until_halved(unsigned halvings)
{
    adt_location *(*location_of)(void) = (adt_location * (*)(void)) runtime_symbol("adt_runtime_location");
    void (*stats_of)(const adt_location *, adt_location_stats *) =
        (void (*)(const adt_location *, adt_location_stats *))runtime_symbol("adt_location_get_stats");
    adt_location *location = location_of();
    adt_location_stats stats;
    time_t give_up = time(NULL) + 60;
    do {
        compute(WORK / 10);
        stats_of(location, &stats);
    } while (stats.shift < halvings && time(NULL) < give_up);
}

/* Starts worker, lets it run delay_us, then sends SIGTERM to that very
 * thread: the ending's save runs in the middle of what it was doing. */
static void end_worker_by_term(void *(*worker)(void *), long delay_us)
{
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    while (!atomic_load(&worker_running))
        sched_yield();
    compute(WORK / 20);
    usleep((useconds_t)delay_us);
    pthread_kill(thread, SIGTERM);
    pthread_join(thread, NULL);
}

/* The signal the final write receives at its last step, 0 for none. */
static int signal_at_publish;

/* Interposes the writer's last step (exported from the probe, the
 * executable, so the preloaded runtime's call binds here): renaming its
 * temporary directory to the archive. The signal so lands inside the
 * writer, whatever the machine's load. */
int renameat2(int old_dir, const char *old_path, int new_dir, const char *new_path, unsigned int flags)
{
    if (signal_at_publish != 0 && strstr(old_path, ".tmp-") != NULL) {
        say(signal_at_publish == SIGKILL ? "SIGKILL inside the writer" : "SIGTERM inside the writer");
        kill(getpid(), signal_at_publish);
    }
    int (*real)(int, const char *, int, const char *, unsigned int) =
        (int (*)(int, const char *, int, const char *, unsigned int))dlsym(RTLD_NEXT, "renameat2");
    return real(old_dir, old_path, new_dir, new_path, flags);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "compute";
    int result = 0;
    if (strcmp(mode, "compute") == 0) {
        compute(WORK);
    } else if (strcmp(mode, "threads") == 0) {
        result = run_threads(argc > 2 ? atoi(argv[2]) : 3);
    } else if (strcmp(mode, "child") == 0) {
        printf("child ran, location %s\n", current_location() ? "set" : "null");
    } else if (strcmp(mode, "location") == 0) {
        printf("location %s\n", current_location() ? "set" : "null");
    } else if (strcmp(mode, "system") == 0) {
        compute(WORK / 10);
        result = run_system_child(argv[0]);
    } else if (strcmp(mode, "fork") == 0) {
        result = run_fork_child();
    } else if (strcmp(mode, "exit-in-thread") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, exit_from_thread, NULL);
        for (;;)
            compute(WORK / 100);
    } else if (strcmp(mode, "finish-twice") == 0) {
        int (*finish)(const adt_collectives *, const adt_clock_offset *) =
            (int (*)(const adt_collectives *, const adt_clock_offset *))runtime_symbol("adt_runtime_finish");
        const adt_collectives *serial = (const adt_collectives *)runtime_symbol("adt_collectives_serial");
        compute(WORK / 10);
        int first = finish(serial, NULL);
        int second = finish(serial, NULL);
        printf("finish %d %d, location after finish %s\n", first, second, current_location() ? "set" : "null");
    } else if (strcmp(mode, "mpi-no-finalize") == 0 || strcmp(mode, "abort") == 0) {
        void (*mpi_started)(uint32_t, uint32_t, const char *) =
            (void (*)(uint32_t, uint32_t, const char *))runtime_symbol("adt_runtime_mpi_started");
        mpi_started(1, 2, "");
        compute(WORK / 10);
        if (strcmp(mode, "abort") == 0)
            ((void (*)(void))runtime_symbol("adt_runtime_abort"))();
    } else if (strcmp(mode, "small-file-limit") == 0) {
        /* A disk that fills during the final write, simulated with a file
         * size limit (writes fail with EFBIG instead of ENOSPC). The limit
         * holds the messages on stderr (a file too) but not the event file
         * of WORK's ~1000 samples; after WORK / 10 a loaded machine's few
         * samples fitted, and summary.json failed instead of the trace. */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = {.rlim_cur = 1024, .rlim_max = RLIM_INFINITY};
        setrlimit(RLIMIT_FSIZE, &limit);
        compute(WORK);
    } else if (strcmp(mode, "halve") == 0 || strcmp(mode, "halve-then-term") == 0) {
        compute_until_halved(4);
        if (strcmp(mode, "halve-then-term") == 0) {
            raise(SIGTERM);
            say("still running after SIGTERM");
        }
    } else if (strcmp(mode, "raise-term") == 0) {
        compute(WORK / 10);
        raise(SIGTERM);
        say("still running after SIGTERM");
    } else if (strcmp(mode, "segv") == 0) {
        compute(WORK / 10);
        fault();
    } else if (strcmp(mode, "watched-signals") == 0) {
        result = run_watched_signals();
    } else if (strcmp(mode, "own-handlers") == 0) {
        /* Installed after the runtime took the signals over, as every
         * application's are: one with sigaction, one with signal. */
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_own_segv;
        action.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &action, NULL);
        signal(SIGTERM, on_own_term);
        compute(WORK / 10);
        raise(SIGTERM);
        fault();
    } else if (strcmp(mode, "term-during-write") == 0) {
        compute(WORK / 10);
        ((void (*)(void))runtime_symbol("adt_ending_write_begins"))();
        raise(SIGTERM);
        say("still running after SIGTERM during the write");
        ((void (*)(bool))runtime_symbol("adt_ending_write_ends"))(true);
        say("still running after the write");
    } else if (strcmp(mode, "term-after-abort-save") == 0) {
        /* Rank 0 of two on a node calls MPI_Abort and saves; the launcher
         * then sends SIGTERM, before rank 1 has saved. */
        be_rank_zero_of_two_on_a_node();
        ((void (*)(void))runtime_symbol("adt_runtime_abort"))();
        pthread_t peer;
        pthread_create(&peer, NULL, save_as_rank_one_later, NULL);
        raise(SIGTERM);
        say("still running after SIGTERM");
    } else if (strcmp(mode, "exit-save") == 0) {
        /* Rank 0 of two on a node returns without MPI_Finalize and saves
         * at its exit, before rank 1 has saved. */
        be_rank_zero_of_two_on_a_node();
        pthread_t peer;
        pthread_create(&peer, NULL, save_as_rank_one_later, NULL);
        ((bool (*)(void))runtime_symbol("adt_runtime_end_recording"))();
        ((void (*)(adt_rescue_kind, const char *))runtime_symbol("adt_ending_without_finalize"))(
            ADT_RESCUE_NO_FINALIZE, "exited without calling MPI_Finalize");
        say("exit save done");
        _exit(0);
    } else if (strcmp(mode, "term-in-append") == 0 || strcmp(mode, "term-in-malloc") == 0) {
        long delay_us = argc > 2 ? atol(argv[2]) : 1000;
        end_worker_by_term(strcmp(mode, "term-in-append") == 0 ? append_forever : allocate_forever, delay_us);
        say("still running after SIGTERM");
    } else if (strcmp(mode, "term-in-writer") == 0 || strcmp(mode, "kill-in-writer") == 0) {
        compute(WORK / 10);
        signal_at_publish = strcmp(mode, "term-in-writer") == 0 ? SIGTERM : SIGKILL;
    } else {
        fprintf(stderr, "runtime_probe: unknown mode '%s'\n", mode);
        return 2;
    }
    printf("probe %s done\n", mode);
    return result;
}
