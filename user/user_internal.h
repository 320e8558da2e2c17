/*
 * Shared between the files of the user API's runtime side (in
 * libadaptrace.so): regions.c (the hot path: begin, end, values, pause,
 * resume) and registry.c (registration, the messages about unbalanced
 * calls and the counts of the run summary). Calls go one way: regions.c ->
 * registry.c.
 */
#ifndef ADAPTRACE_USER_INTERNAL_H
#define ADAPTRACE_USER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buffer/buffer.h"
#include "runtime/runtime.h"
#include "sampler/sampler.h"
#include "user/adaptrace.h"

/* Regions a process can register; handle = index + 1. */
#define ADT_USER_REGIONS_MAX 4096u
/* Region instances open at once on one thread: as many as the sampler
 * grafts, so that every recorded instance places its samples. */
#define ADT_USER_NESTING_MAX ADT_SAMPLER_USER_REGIONS_OPEN

typedef struct adt_user_region {
    uint32_t region;   /* local region id (adt_defs_region) */
    const char *name;  /* the copy made at registration */
} adt_user_region;

/* Parameters and metrics a process can register; handle = index + 1. */
#define ADT_USER_PARAMETERS_MAX 1024u
#define ADT_USER_METRICS_MAX 1024u

/* Written once each under the registry's lock, published by the count
 * (release); read without a lock by every thread. The parameters' and
 * metrics' entries are their local ids (adt_defs_parameter,
 * adt_defs_user_metric). */
extern adt_user_region adt_user_regions[ADT_USER_REGIONS_MAX];
extern _Atomic uint32_t adt_user_region_count;
extern uint32_t adt_user_parameters[ADT_USER_PARAMETERS_MAX];
extern _Atomic uint32_t adt_user_parameter_count;
extern uint32_t adt_user_metrics[ADT_USER_METRICS_MAX];
extern _Atomic uint32_t adt_user_metric_count;
/* Whether the run samples (calling contexts for the regions' records). */
extern bool adt_user_sampling;

/* One open region instance: its handle's index, and the calling context
 * its Enter recorded (ADT_UNDEFINED_ID without sampling); not recorded
 * when it was begun while the thread was paused or inside an MPI call. */
typedef struct adt_user_open {
    uint32_t index;
    uint32_t calling_context;
    bool recorded;
} adt_user_open;

/* The user API's state of one measured thread, indexed by its thread
 * index (adt_location_id): the thread alone writes it; the end of the
 * run reads it (depth atomic, so that a thread still running then is
 * read safely). */
typedef struct adt_user_thread {
    adt_user_open open[ADT_USER_NESTING_MAX];
    _Atomic uint32_t depth;
    uint32_t too_deep;     /* begins past the limit whose ends are due */
    uint32_t pauses;       /* pauses not resumed yet */
} adt_user_thread;

extern adt_user_thread adt_user_threads[ADT_RUNTIME_MAX_LOCATIONS];

/* Counts for the run summary (adt_runtime_user_api_counts). */
extern _Atomic uint64_t adt_user_ends_unmatched;
extern _Atomic uint64_t adt_user_begins_too_deep;
extern _Atomic uint64_t adt_user_resumes_unmatched;
extern _Atomic uint64_t adt_user_ends_inside_mpi;

/* registry.c, slow path (once per process each): say on stderr, naming the
 * region, the thread and the rank, what was wrong and that it was left
 * out. thread_index: the calling thread's. */
void adt_user_say_unmatched_end(uint32_t index, uint32_t thread_index, const adt_user_thread *thread);
void adt_user_say_too_deep(uint32_t index, uint32_t thread_index);
void adt_user_say_unmatched_resume(uint32_t thread_index);
void adt_user_say_end_inside_mpi(uint32_t index, uint32_t thread_index);

#endif
