/*
 * The user API's hot path in libadaptrace.so: begin and end of a region
 * instance, a parameter's or a metric's value, pause and resume
 * (adaptrace.h). These definitions take the place of libadaptrace_user's
 * no-ops when libadaptrace.so is preloaded or linked ahead of it.
 *
 * Execution context: normal context on the calling thread, as often as
 * the program likes (a hot loop). No malloc, no lock, no stdio: the
 * thread's state is its own slot of a static table (only it writes
 * there), the region table is read after an acquire load of its count
 * (entries are written before the count publishes them), the record is
 * one append to the thread's own buffer location (the buffer's hot path),
 * and the sampler's part is adt_sampler_user_region_begin/_end (its hot
 * path, the same as an MPI call's); whether the thread is inside an MPI
 * call is one indirect call (adt_runtime_inside_mpi_call). Only the first
 * unbalanced call of a kind in the process says so on stderr
 * (registry.c).
 */
#include "format/format.h"
#include "sampler/sampler.h"
#include "user/user_internal.h"

adt_user_thread adt_user_threads[ADT_RUNTIME_MAX_LOCATIONS];

/* The calling thread's state, NULL when it is not measured (adaptrace
 * inert, the run finished, a thread beyond the locations' limit). */
static inline adt_user_thread *thread_state(adt_location **location, uint32_t *thread_index)
{
    *location = adt_runtime_location();
    if (*location == NULL)
        return NULL;
    uint64_t index = adt_location_id(*location);
    if (index >= ADT_RUNTIME_MAX_LOCATIONS)
        return NULL;
    *thread_index = (uint32_t)index;
    return &adt_user_threads[index];
}

/* The handle's index, or false for a handle this process never gave
 * (the no-op library's, or a number made up). */
static inline bool handle_index(adaptrace_region_t handle, uint32_t *index)
{
    *index = handle - 1;
    return handle != 0 && *index < atomic_load_explicit(&adt_user_region_count, memory_order_acquire);
}

/* Appends a record of the calling thread dated now, after the samples its
 * tap took up to now where they are kept in its event chain
 * (adt_sampler_keep_tapped: ADAPTRACE_ONLINE_OUTPUT=trace), so that the
 * chain stays in time order. Hot path: no malloc, no lock, no stdio. */
static void append_now(adt_location *location, adt_record_kind kind, const void *record, uint32_t size)
{
    uint64_t time = adt_clock_now();
    adt_sampler_keep_tapped(location, time);
    adt_buffer_append_event(location, (uint16_t)kind, time, record, size);
}

/* adt_sampler_user_region_begin must be called from here directly: it
 * leaves this function's frame out of the region's calling context. */
void adaptrace_region_begin(adaptrace_region_t handle)
{
    adt_location *location;
    uint32_t thread_index, index;
    adt_user_thread *thread = thread_state(&location, &thread_index);
    if (thread == NULL || !handle_index(handle, &index))
        return;
    uint32_t depth = atomic_load_explicit(&thread->depth, memory_order_relaxed);
    if (depth == ADT_USER_NESTING_MAX) {
        thread->too_deep++;
        if (atomic_fetch_add_explicit(&adt_user_begins_too_deep, 1, memory_order_relaxed) == 0)
            adt_user_say_too_deep(index, thread_index);
        return;
    }
    /* Inside an MPI call (a callback the MPI library runs) the instance is
     * kept for its end but not recorded: its records would not nest with
     * the call's. */
    adt_user_open open = { index, ADT_UNDEFINED_ID, thread->pauses == 0 && !adt_runtime_inside_mpi_call() };
    if (open.recorded) {
        uint32_t region = adt_user_regions[index].region;
        /* The records name the region by their context: only its own
         * leaf does (a full tree gives an ancestor frame). */
        if (adt_user_sampling)
            open.calling_context = adt_sampler_region_leaf(adt_sampler_user_region_begin(location, region), region);
        adt_rec_region record = { region, open.calling_context };
        append_now(location, ADT_REC_ENTER, &record, sizeof record);
    }
    thread->open[depth] = open;
    atomic_store_explicit(&thread->depth, depth + 1, memory_order_release);
}

/* Only the innermost open instance can end: a Leave out of nesting order
 * would break every reader's stack (the writer refuses it), so it is
 * counted and said instead, and the instance stays open (closed at the
 * end of the run if nothing ends it). */
void adaptrace_region_end(adaptrace_region_t handle)
{
    adt_location *location;
    uint32_t thread_index, index;
    adt_user_thread *thread = thread_state(&location, &thread_index);
    if (thread == NULL || !handle_index(handle, &index))
        return;
    if (thread->too_deep > 0) {
        thread->too_deep--;
        return;
    }
    uint32_t depth = atomic_load_explicit(&thread->depth, memory_order_relaxed);
    if (depth == 0 || thread->open[depth - 1].index != index) {
        if (atomic_fetch_add_explicit(&adt_user_ends_unmatched, 1, memory_order_relaxed) == 0)
            adt_user_say_unmatched_end(index, thread_index, thread);
        return;
    }
    adt_user_open open = thread->open[depth - 1];
    /* A recorded instance cannot end inside an MPI call begun within it:
     * its Leave would come before the call's. */
    if (open.recorded && adt_runtime_inside_mpi_call()) {
        if (atomic_fetch_add_explicit(&adt_user_ends_inside_mpi, 1, memory_order_relaxed) == 0)
            adt_user_say_end_inside_mpi(index, thread_index);
        return;
    }
    atomic_store_explicit(&thread->depth, depth - 1, memory_order_release);
    if (!open.recorded)
        return;
    adt_rec_region record = { adt_user_regions[index].region, open.calling_context };
    append_now(location, ADT_REC_LEAVE, &record, sizeof record);
    if (adt_user_sampling)
        adt_sampler_user_region_end(location);
}

/* The calling thread's location for a value of the handle's entry of a
 * table of count entries (its local id in *id); NULL when not recorded
 * (not measured, paused, a handle this process never gave). */
static inline adt_location *value_location(uint32_t handle, const uint32_t *table, _Atomic uint32_t *count,
                                           uint32_t *id)
{
    adt_location *location;
    uint32_t thread_index, index = handle - 1;
    adt_user_thread *thread = thread_state(&location, &thread_index);
    if (thread == NULL || handle == 0 || thread->pauses > 0 ||
        index >= atomic_load_explicit(count, memory_order_acquire))
        return NULL;
    *id = table[index];
    return location;
}

void adaptrace_parameter_int(adaptrace_parameter_t handle, int64_t value)
{
    uint32_t parameter;
    adt_location *location = value_location(handle, adt_user_parameters, &adt_user_parameter_count, &parameter);
    if (location == NULL)
        return;
    adt_rec_parameter record = { value, parameter, 0 };
    append_now(location, ADT_REC_PARAMETER_INT, &record, sizeof record);
}

void adaptrace_metric_double(adaptrace_metric_t handle, double value)
{
    uint32_t metric;
    adt_location *location = value_location(handle, adt_user_metrics, &adt_user_metric_count, &metric);
    if (location == NULL)
        return;
    adt_rec_user_metric record = { value, metric, 0 };
    append_now(location, ADT_REC_USER_METRIC, &record, sizeof record);
}

void adaptrace_pause(void)
{
    adt_location *location;
    uint32_t thread_index;
    adt_user_thread *thread = thread_state(&location, &thread_index);
    if (thread == NULL)
        return;
    if (thread->pauses++ == 0)
        adt_sampler_pause(location, true);
}

void adaptrace_resume(void)
{
    adt_location *location;
    uint32_t thread_index;
    adt_user_thread *thread = thread_state(&location, &thread_index);
    if (thread == NULL)
        return;
    if (thread->pauses == 0) {
        if (atomic_fetch_add_explicit(&adt_user_resumes_unmatched, 1, memory_order_relaxed) == 0)
            adt_user_say_unmatched_resume(thread_index);
        return;
    }
    if (--thread->pauses == 0)
        adt_sampler_pause(location, false);
}
