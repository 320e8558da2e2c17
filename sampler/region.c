/*
 * The calling contexts of the MPI calls: what the generated MPI wrappers
 * ask for every call they record; and those of the user API's regions
 * (user/), which samples and calls inside them are placed below.
 *
 * Execution context: the MPI wrapper's (and the user API's) hot path, in
 * normal context on the calling thread, once per MPI call or region begin. No malloc, no lock, no stdio here.
 * A call from a call site whose callers were unwound before, with the
 * same frame and every caller's return address still in its stack slot,
 * takes their node without unwinding (a few loads: docs/sampling.md,
 * "The callers of an MPI call"); otherwise the unwinding is unw_backtrace
 * on the thread's own libunwind cache
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

/* How far above its frame region_context looks for the slots of the
 * callers' return addresses (frames with larger locals between two of
 * them leave that call site to the full unwind). */
enum { SLOT_SCAN_BYTES = 64 * 1024 };

/* The entry of call_site's callers, else the one to remember them in.
 * Every key is compared (ADT_VALIDATED_SITES pointers, two cache lines)
 * and new sites take the entries in turn: a loop through up to that many
 * MPI functions unwinds each call site once, wherever their addresses
 * fall. A hash of the address into 8 entries made the ping-pong of some
 * builds unwind on most calls (benchmarks/mpi/run.py): its wrappers' sites
 * shared an entry at most load addresses. */
static adt_validated_callers *site_of(adt_sampler_thread *thread, const void *call_site)
{
    for (uint32_t i = 0; i < ADT_VALIDATED_SITES; i++)
        if (thread->validated_sites[i] == call_site)
            return &thread->validated[i];
    return &thread->validated[thread->validated_next];
}

/* Whether the callers unwound at this call site before are the callers
 * now: the same call site, the same frame (so the same stack pointer in
 * every frame between them, unless a frame's size changed, alloca), and
 * every return address still in its slot. A caller that returned and was
 * replaced by another (the stack shrank and grew back to the same depth
 * through another function, a longjmp, an exception) wrote its own return
 * address over the slot. The callers' node depends on the user regions
 * open too (they graft it): only with the same innermost one. One load per
 * frame, no call. */
__attribute__((no_sanitize_address)) static bool callers_unchanged(const adt_sampler_thread *thread,
                                                                   const adt_validated_callers *callers,
                                                                   const void *call_site, uintptr_t frame,
                                                                   uint32_t graft_top)
{
    if (thread->validated_sites[callers - thread->validated] != call_site || callers->frame != frame ||
        callers->graft_top != graft_top)
        return false;
    for (uint32_t i = 0; i < callers->count; i++)
        if (*callers->slots[i] != callers->values[i])
            return false;
    return true;
}

/* After a full unwind: the slot of each caller's return address
 * (frames[0], the wrapper's caller, first), found by reading the stack
 * upwards from frame, each above the one before. Only on the thread's own
 * stack (not on a coroutine's or an alternate signal stack, whose bounds
 * are not known), within SLOT_SCAN_BYTES; otherwise the call site keeps
 * no callers and is unwound every time. Reads only the live stack above
 * this function's frame: nothing can fault. Not checked by ASan, for which
 * the callers' frames hold poisoned red zones between their variables
 * (callers_unchanged neither: a slot it reads may lie in a red zone's
 * place once a frame's size changed). */
__attribute__((no_sanitize_address)) static void remember_callers(adt_sampler_thread *thread, adt_validated_callers *callers,
                             const void *call_site, uintptr_t frame, void *const *frames, int count, uint32_t parent,
                             const adt_user_graft *shape)
{
    uint32_t entry = (uint32_t)(callers - thread->validated);
    thread->validated_sites[entry] = NULL;
    if (count > ADT_VALIDATED_DEPTH || frame < thread->stack_low || frame >= thread->stack_high)
        return;
    uintptr_t scan_end = thread->stack_high - frame < SLOT_SCAN_BYTES ? thread->stack_high : frame + SLOT_SCAN_BYTES;
    const uintptr_t *slot = (const uintptr_t *)frame;
    const uintptr_t *end = (const uintptr_t *)(scan_end & ~(uintptr_t)(sizeof(uintptr_t) - 1));
    for (int i = 0; i < count; i++, slot++) {
        while (slot < end && *slot != (uintptr_t)frames[i])
            slot++;
        if (slot == end)
            return;
        callers->slots[i] = slot;
        callers->values[i] = (uintptr_t)frames[i];
    }
    callers->count = (uint32_t)count;
    callers->frame = frame;
    callers->parent = parent;
    callers->graft_top = adt_sampler_graft_top(thread);
    callers->depth = shape->depth;
    callers->prefix_hash = shape->prefix_hash;
    thread->validated_sites[entry] = call_site;
    /* A site whose callers could not be remembered keeps taking the same
     * entry, not the others' in turn. */
    if (entry == thread->validated_next)
        thread->validated_next = (entry + 1) % ADT_VALIDATED_SITES;
}

/* The node of the wrapper's callers, by a full unwind (unw_backtrace),
 * below the innermost user region they run through; remembered in callers
 * (unless NULL) when their slots are found. shape: their depth and prefix
 * hash for a graft of their own (depth 0 when the path was cut at its
 * outer end, where a sample's path would not line up with it). */
static uint32_t unwind_callers(adt_sampler_thread *thread, adt_validated_callers *callers, const void *wrapper,
                               uintptr_t frame, bool *full, adt_user_graft *shape)
{
    void *frames[ADT_UNWIND_DEPTH_MAX + 2];
    /* busy: a sample arriving now must not re-enter unw_backtrace on this
     * thread (libunwind's per-thread cache is not re-entrant); the
     * compiler barriers keep the unwinding inside the flagged span. While
     * the code map is being changed (a dlclose, which may be running this
     * very MPI call from a destructor) the call is recorded without its
     * callers rather than waited for. */
    atomic_store_explicit(&thread->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    int count = 0;
    bool mapped = adt_code_map_enter(thread);
    if (mapped) {
        count = unw_backtrace(frames, (int)adt_sampler.depth + 2);
        adt_code_map_leave(thread);
    } else {
        thread->region_paths_cut++;
    }
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&thread->busy, 0, memory_order_relaxed);
    thread->region_unwinds++;
    /* frames[0] is in region_context, the wrapper's return address names
     * the wrapper frame; the path starts with the wrapper's caller. */
    int first = 0;
    while (first < count && frames[first] != wrapper)
        first++;
    first++;
    int callers_count = count - first;
    bool cut = count == (int)adt_sampler.depth + 2 || callers_count > (int)adt_sampler.depth - 1;
    if (callers_count > (int)adt_sampler.depth - 1)
        callers_count = (int)adt_sampler.depth - 1;
    shape->depth = cut || callers_count <= 0 ? 0 : (uint32_t)callers_count;
    shape->prefix_hash = shape->depth ? adt_sampler_prefix_hash(frames + first, callers_count, 1) : 0;
    uint32_t parent = callers_count > 0 ? adt_sampler_intern_grafted(thread, &thread->region_path, frames + first,
                                                                     callers_count, 0, full)
                                        : ADT_UNDEFINED_ID;
    if (callers != NULL && mapped && callers_count > 0 && !*full)
        remember_callers(thread, callers, wrapper, frame, frames + first, callers_count, parent, shape);
    else if (callers != NULL)
        thread->validated_sites[callers - thread->validated] = NULL;
    return parent;
}

/* With validate false every call unwinds (the tests compare both).
 * shape: the callers' depth and prefix hash (adt_user_graft). */
static __attribute__((always_inline)) inline uint32_t region_context(adt_location *location, uint32_t region,
                                                                     const void *wrapper, uintptr_t frame,
                                                                     bool validate, adt_user_graft *shape)
{
    adt_sampler_thread *thread = adt_location_user(location);
    shape->depth = 0;
    if (thread == NULL || !adt_sampler.initialised || adt_sampler_current != thread)
        return ADT_UNDEFINED_ID;
    /* An MPI call is the refresh point of the code map for objects loaded
     * since a sample last found it stale (one relaxed load otherwise). */
    adt_code_map_refresh_if_stale();
    adt_validated_callers *callers = validate ? site_of(thread, wrapper) : NULL;
    bool full = false;
    uint32_t parent;
    if (callers != NULL && callers_unchanged(thread, callers, wrapper, frame, adt_sampler_graft_top(thread))) {
        parent = callers->parent;
        shape->depth = callers->depth;
        shape->prefix_hash = callers->prefix_hash;
    } else {
        parent = unwind_callers(thread, callers, wrapper, frame, &full, shape);
    }
    if (full)
        return parent;
    /* An MPI call made from where the previous one was, as in a loop. */
    if (thread->region_node != ADT_UNDEFINED_ID && thread->region_parent == parent && thread->region_id == region)
        return thread->region_node;
    uint32_t node = adt_cct_intern(&adt_sampler.tree, parent, ADT_CCT_KEY_REGION | region);
    if (node == ADT_UNDEFINED_ID)
        return parent == ADT_UNDEFINED_ID ? ADT_CCT_NODE_FULL : parent;
    thread->region_parent = parent;
    thread->region_id = region;
    thread->region_node = node;
    return node;
}

uint32_t adt_sampler_region_leaf(uint32_t node, uint32_t region)
{
    /* A node given out is published whole (adt_cct_intern). */
    if (node == ADT_UNDEFINED_ID || node >= adt_sampler.tree.capacity)
        return ADT_UNDEFINED_ID;
    return adt_sampler.tree.nodes[node].key == (ADT_CCT_KEY_REGION | region) ? node : ADT_UNDEFINED_ID;
}

__attribute__((noinline)) uint32_t adt_sampler_region_context(adt_location *location, uint32_t region)
{
    adt_user_graft shape;
    return region_context(location, region, __builtin_return_address(0), (uintptr_t)__builtin_frame_address(0),
                          true, &shape);
}

__attribute__((noinline)) uint32_t adt_sampler_region_context_unwound(adt_location *location, uint32_t region)
{
    adt_user_graft shape;
    return region_context(location, region, __builtin_return_address(0), (uintptr_t)__builtin_frame_address(0),
                          false, &shape);
}

/* The region's node as for an MPI call, then pushed as the thread's
 * innermost graft: its entry is written before the count that publishes
 * it to the thread's handler (a signal fence: same thread). A region
 * nested deeper than ADT_USER_GRAFTS is counted, not stored. */
__attribute__((noinline)) uint32_t adt_sampler_user_region_begin(adt_location *location, uint32_t region)
{
    adt_user_graft shape;
    uint32_t node = region_context(location, region, __builtin_return_address(0),
                                   (uintptr_t)__builtin_frame_address(0), true, &shape);
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL || adt_sampler_current != thread)
        return node;
    uint32_t open = atomic_load_explicit(&thread->graft_count, memory_order_relaxed);
    if (open < ADT_USER_GRAFTS) {
        bool grafts = shape.depth > 0 && node != ADT_UNDEFINED_ID && node != ADT_CCT_NODE_FULL;
        thread->grafts[open] = (adt_user_graft){ shape.prefix_hash, shape.depth, grafts ? node : ADT_UNDEFINED_ID };
    }
    atomic_signal_fence(memory_order_release);
    atomic_store_explicit(&thread->graft_count, open + 1, memory_order_relaxed);
    return node;
}

void adt_sampler_user_region_end(adt_location *location)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread == NULL || adt_sampler_current != thread)
        return;
    uint32_t open = atomic_load_explicit(&thread->graft_count, memory_order_relaxed);
    if (open > 0)
        atomic_store_explicit(&thread->graft_count, open - 1, memory_order_relaxed);
}

void adt_sampler_pause(adt_location *location, bool paused)
{
    adt_sampler_thread *thread = adt_location_user(location);
    if (thread != NULL)
        atomic_store_explicit(&thread->paused, paused, memory_order_relaxed);
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
