/*
 * The calling contexts of the MPI calls: what the generated MPI wrappers
 * ask for every call they record.
 *
 * Execution context: the MPI wrapper's hot path, in normal context on the
 * calling thread, once per MPI call. No malloc, no lock, no stdio here:
 * the unwinding is unw_backtrace on the thread's own libunwind cache
 * (per-thread caching, set at start-up), flagged busy so that a sample
 * arriving meanwhile does not re-enter it; the path is interned with
 * lock-free inserts (paths.c); entering and leaving a region are single
 * atomic exchanges and stores, which a sample taken in between reads.
 * The one step that may allocate is the code map's refresh, and only
 * after a sample found the map stale (code_map.c; one relaxed load
 * otherwise): an MPI call is the refresh point chosen for it, because
 * normal context may take the map's writer lock there.
 */
#include "sampler/sampler_internal.h"

__attribute__((noinline)) uint32_t adt_sampler_region_context(adt_location *location, uint32_t region)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL || !adt_sampler.initialised || adt_sampler_current != thread)
        return ADT_UNDEFINED_ID;
    /* An MPI call is the refresh point of the code map for objects loaded
     * since a sample last found it stale (one relaxed load otherwise). */
    adt_code_map_refresh_if_stale();
    void *frames[ADT_UNWIND_DEPTH_MAX + 2];
    void *wrapper = __builtin_return_address(0);
    /* busy: a sample arriving now must not re-enter unw_backtrace on this
     * thread (libunwind's per-thread cache is not re-entrant); the
     * compiler barriers keep the unwinding inside the flagged span. While
     * the code map is being changed (a dlclose, which may be running this
     * very MPI call from a destructor) the call is recorded without its
     * callers rather than waited for. */
    atomic_store_explicit(&thread->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    int count = 0;
    if (adt_code_map_enter(thread)) {
        count = unw_backtrace(frames, (int)adt_sampler.depth + 2);
        adt_code_map_leave(thread);
    } else {
        thread->region_paths_cut++;
    }
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&thread->busy, 0, memory_order_relaxed);
    /* frames[0] is in this function, the wrapper's return address names
     * the wrapper frame; the path starts with the wrapper's caller. */
    int first = 0;
    while (first < count && frames[first] != wrapper)
        first++;
    first++;
    int callers = count - first;
    if (callers > (int)adt_sampler.depth - 1)
        callers = (int)adt_sampler.depth - 1;
    if (callers < 0)
        callers = 0;
    bool full = false;
    uint32_t parent = callers > 0 ? adt_sampler_intern_path(frames + first, callers, 0, &full) : ADT_UNDEFINED_ID;
    if (full)
        return parent;
    uint32_t node = adt_cct_intern(&adt_sampler.tree, parent, ADT_CCT_KEY_REGION | region);
    return node == ADT_UNDEFINED_ID ? (parent == ADT_UNDEFINED_ID ? ADT_CCT_NODE_FULL : parent) : node;
}

uint32_t adt_sampler_enter_region(adt_location *location, uint32_t calling_context)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL)
        return ADT_UNDEFINED_ID;
    return atomic_exchange_explicit(&thread->region_context, calling_context, memory_order_relaxed);
}

void adt_sampler_leave_region(adt_location *location, uint32_t previous)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread != NULL)
        atomic_store_explicit(&thread->region_context, previous, memory_order_relaxed);
}
