/*
 * A program of the user API (adaptrace.h) for the whole-run tests
 * (check_user.py): its output is the same whether adaptrace traces it or
 * not (it links libadaptrace_user, whose functions do nothing).
 *
 * usage: user_regions [balanced|unbalanced]
 *   balanced: phases "setup" and "iterate"; in "iterate" three time steps
 *     of region "solver" around region "kernel" (a computation long enough
 *     for samples) and an MPI_Allreduce, the parameter "time step" and
 *     the metric "residual" (1, 0.5, 0.25) recorded in "solver"; a region
 *     in a hot loop;
 *     regions begun with the macros.
 *   unbalanced: on every rank, an end without a begin, an end out of
 *     nesting order, a region begun on a thread and ended on the main
 *     thread, a region begun while paused, a region ended while paused, a
 *     parameter's value while paused (1) and not (2), a resume without a
 *     pause, a region ended in an MPI error handler (inside the MPI call
 *     that ran it) though begun outside, a region begun and ended in that
 *     handler, a region nested 65 deep (one past the limit; a computation
 *     in the 64th, long enough for samples), and a region
 *     left open at MPI_Finalize.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "adaptrace.h"

/* Spins on arithmetic for at least `seconds` of this thread's CPU time, so
 * that samples land inside; returns a value that depends only on the
 * number of rounds done in whole blocks of 1000, which is printed nowhere. */
static double compute(double seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    double x = 0.0;
    do {
        for (int i = 0; i < 1000; i++)
            x = sin(x + i);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) < seconds);
    return x;
}

static volatile double sink;

static long balanced(int rank)
{
    adaptrace_region_t setup = adaptrace_phase_register("setup");
    adaptrace_region_t iterate = adaptrace_phase_register("iterate");
    adaptrace_region_t solver = adaptrace_region_register("solver");
    adaptrace_region_t kernel = adaptrace_region_register("kernel");
    adaptrace_region_t tiny = adaptrace_region_register("tiny");
    adaptrace_parameter_t time_step = adaptrace_parameter_register("time step");
    adaptrace_metric_t residual = adaptrace_metric_register("residual");
    long result = 0;

    adaptrace_region_begin(setup);
    sink = compute(0.05);
    result += rank + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    adaptrace_region_end(setup);

    adaptrace_region_begin(iterate);
    for (int step = 0; step < 3; step++) {
        adaptrace_region_begin(solver);
        adaptrace_parameter_int(time_step, step);
        adaptrace_metric_double(residual, 1.0 / (1 << step));
        adaptrace_region_begin(kernel);
        sink = compute(0.1);
        adaptrace_region_end(kernel);
        long local = (long)(step + 1) * (rank + 1), total = 0;
        MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        result += total;
        adaptrace_region_end(solver);
    }
    for (int i = 0; i < 1000; i++) {
        adaptrace_region_begin(tiny);
        result += i % 2;
        adaptrace_region_end(tiny);
    }
    adaptrace_region_end(iterate);

    ADAPTRACE_REGION_DEFINE(by_macro);
    for (int i = 0; i < 2; i++) {
        ADAPTRACE_REGION_BEGIN(by_macro, "by macro");
        result += 1;
        ADAPTRACE_REGION_END(by_macro);
    }
    return result;
}

static adaptrace_region_t crossing, outer, in_callback;

/* An error handler is a callback the MPI library runs inside the call
 * that raised the error: the region begun outside cannot end here (not
 * recorded), the one begun and ended here is not recorded either. */
static void handle_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    adaptrace_region_end(outer);
    adaptrace_region_begin(in_callback);
    adaptrace_region_end(in_callback);
}

static void *begin_on_thread(void *unused)
{
    (void)unused;
    adaptrace_region_begin(crossing);
    return NULL;
}

static long unbalanced(void)
{
    adaptrace_region_t a = adaptrace_region_register("a");
    adaptrace_region_t b = adaptrace_region_register("b");
    adaptrace_region_t paused = adaptrace_region_register("paused");
    adaptrace_region_t ends_paused = adaptrace_region_register("ends paused");
    adaptrace_region_t left_open = adaptrace_region_register("left open");
    crossing = adaptrace_region_register("crossing");

    adaptrace_region_end(a);          /* no begin */
    adaptrace_region_begin(a);
    adaptrace_region_begin(b);
    adaptrace_region_end(a);          /* out of order: b is inside */
    adaptrace_region_end(b);
    adaptrace_region_end(a);

    pthread_t thread;
    pthread_create(&thread, NULL, begin_on_thread, NULL);
    pthread_join(thread, NULL);
    adaptrace_region_end(crossing);   /* begun on the other thread */

    adaptrace_parameter_t count = adaptrace_parameter_register("count");
    adaptrace_pause();
    adaptrace_region_begin(paused);
    adaptrace_parameter_int(count, 1);
    adaptrace_region_end(paused);
    adaptrace_resume();
    adaptrace_parameter_int(count, 2);
    adaptrace_region_begin(ends_paused);
    adaptrace_pause();
    adaptrace_region_end(ends_paused);
    adaptrace_resume();
    adaptrace_resume();               /* not paused */

    outer = adaptrace_region_register("outer");
    in_callback = adaptrace_region_register("in callback");
    MPI_Errhandler handler;
    MPI_Comm_create_errhandler(handle_error, &handler);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
    adaptrace_region_begin(outer);
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    adaptrace_region_end(outer);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&handler);

    /* 65 nested instances: the 65th is past the limit of 64. Samples land
     * in the 64th. */
    adaptrace_region_t deep = adaptrace_region_register("deep");
    for (int i = 0; i < 64; i++)
        adaptrace_region_begin(deep);
    sink = compute(0.05);
    adaptrace_region_begin(deep);
    for (int i = 0; i < 65; i++)
        adaptrace_region_end(deep);

    adaptrace_region_begin(left_open);
    return 7;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "balanced";
    long result = strcmp(mode, "unbalanced") == 0 ? unbalanced() : balanced(rank);
    long total = 0;
    MPI_Reduce(&result, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s on %d ranks: %ld\n", mode, size, total);
    MPI_Finalize();
    return 0;
}
