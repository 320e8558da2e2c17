/*
 * Threads of the application: pthread_create is interposed
 * (interpose.c) so that a new thread takes its location and starts its
 * timer before the user's start routine runs. OpenMP runtimes create
 * their workers with pthread_create, so they are covered too.
 *
 * Execution context: normal code, at start-up (the key, the main thread),
 * in the creating thread (the interposer) and on the new thread before
 * its start routine, and at its exit (the key's destructor).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime_internal.h"
#include "sampler/sampler.h"

__thread adt_location *adt_thread_location __attribute__((tls_model("initial-exec")));
__thread bool adt_thread_in_mpi_init __attribute__((tls_model("initial-exec")));

/* Its destructor runs at every thread exit: return from the start routine,
 * pthread_exit, cancellation. */
static pthread_key_t thread_end_key;
static adt_buffer *buffer;
static bool sampling;

/* Thread 0 is the main thread; created threads count from 1. */
static _Atomic uint32_t next_thread_index = 1;
static atomic_flag warned_location_limit = ATOMIC_FLAG_INIT;

/* The online stream's part of a thread's exit (runtime.h), once set;
 * an acquire load of a pointer stored once. */
static _Atomic(adt_runtime_thread_ended) stream_thread_ended;

static void thread_ended(void *location)
{
    adt_runtime_thread_ended ended = atomic_load_explicit(&stream_thread_ended, memory_order_acquire);
    if (ended != NULL)
        ended(location);
    if (sampling && adt_runtime_recording())
        adt_sampler_thread_stop(location);
}

void adt_threads_set_ended(adt_runtime_thread_ended ended)
{
    atomic_store_explicit(&stream_thread_ended, ended, memory_order_release);
}

int adt_threads_init(adt_buffer *measured_into, bool sampled)
{
    buffer = measured_into;
    sampling = sampled;
    return pthread_key_create(&thread_end_key, thread_ended);
}

/* Makes location the calling thread's own, until the end of the run. */
static void adopt(adt_location *location)
{
    adt_thread_location = location;
    pthread_setspecific(thread_end_key, location);
}

void adt_threads_start_main(void)
{
    adt_location *location = adt_buffer_add_location(buffer, 0);
    adopt(location);
    if (sampling && location)
        adt_sampler_thread_start(location);
}

/* On a new thread whose creator is measured: its location and timer. */
static void attach_thread(void)
{
    if (!adt_runtime_recording())
        return;
    uint32_t index = atomic_fetch_add(&next_thread_index, 1);
    adt_location *location = adt_buffer_add_location(buffer, index);
    if (!location) {
        if (!atomic_flag_test_and_set(&warned_location_limit))
            adt_log("more than %u threads: thread %u and later ones run unmeasured", ADT_RUNTIME_MAX_LOCATIONS,
                    index);
        return;
    }
    adopt(location);
    if (sampling)
        adt_sampler_thread_start(location);
}

typedef struct thread_start {
    void *(*routine)(void *);
    void *arg;
} thread_start;

static void *measured_thread_main(void *raw_start)
{
    thread_start start = *(thread_start *)raw_start;
    free(raw_start);
    attach_thread();
    return start.routine(start.arg);
}

/* A thread is measured when the thread creating it is, outside MPI_Init. */
static bool creator_is_measured(void)
{
    return adt_thread_location && !adt_thread_in_mpi_init && adt_runtime_recording();
}

int adt_threads_create(adt_pthread_create_fn create, pthread_t *thread, const pthread_attr_t *attr,
                       void *(*routine)(void *), void *arg)
{
    if (!creator_is_measured())
        return create(thread, attr, routine, arg);
    thread_start *start = malloc(sizeof *start);
    if (!start)
        return create(thread, attr, routine, arg);
    start->routine = routine;
    start->arg = arg;
    int result = create(thread, attr, measured_thread_main, start);
    if (result != 0)
        free(start);
    return result;
}
