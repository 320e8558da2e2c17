/*
 * What the signal handler and the MPI wrappers' unwinding share: the
 * window in which a thread reads the code map, and the interning of an
 * unwound path in the calling-context tree.
 *
 * Execution context: the signal handler (handler.c) and the MPI wrapper's
 * hot path (region.c). Each step is async-signal-safe and never waits:
 * the window is one atomic store and load (a thread that finds the map
 * being changed backs off rather than waiting), the lookup a binary search
 * of a table published with one atomic store, the interning lock-free
 * inserts into preallocated nodes (cct.h). No malloc, no lock, no stdio.
 */
#include "sampler/sampler_internal.h"

/* seq_cst store then load, mirrored by begin_change in code_map.c: either
 * the writer sees this thread's flag and waits for it, or this thread sees
 * the writer's flag and backs off. Two atomic operations, no wait. */
bool adt_code_map_enter(adt_sampler_thread *thread)
{
    atomic_store(&thread->unwinding, 1);
    if (atomic_load(&adt_code_map_changing) == 0)
        return true;
    atomic_store(&thread->unwinding, 0);
    return false;
}

void adt_code_map_leave(adt_sampler_thread *thread)
{
    atomic_store(&thread->unwinding, 0);
}

/* Binary search of the sorted table; no table (out of memory at the last
 * change) covers nothing. */
bool adt_code_map_covers(uintptr_t address)
{
    const adt_code_table *table = atomic_load_explicit(&adt_code_map_table, memory_order_acquire);
    if (table == NULL)
        return false;
    size_t low = 0, high = table->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (address < table->objects[middle].start)
            high = middle;
        else if (address >= table->objects[middle].end)
            low = middle + 1;
        else
            return true;
    }
    return false;
}

/* The path interned below base (ADT_UNDEFINED_ID: from the root); the
 * cache's path is reused only when it was interned below the same base.
 * With no frames, base itself. */
static uint32_t intern_below(adt_path_cache *cache, uint32_t base, void *const *frames, int count,
                             uint64_t leaf_tag, bool *full)
{
    uint32_t node = base;
    *full = false;
    uint32_t same = 0;
    if (cache->base != base) {
        cache->base = base;
        cache->count = 0;
    }
    for (int root_distance = 0; root_distance < count; ++root_distance) {
        int i = count - 1 - root_distance;
        uint64_t key = ((uint64_t)(uintptr_t)frames[i] & ADT_CCT_KEY_ADDRESS_MASK) | (i == 0 ? leaf_tag : 0);
        if (same == (uint32_t)root_distance && same < cache->count && cache->keys[root_distance] == key) {
            node = cache->nodes[root_distance];
            same++;
            continue;
        }
        uint32_t child = adt_cct_intern(&adt_sampler.tree, node, key);
        if (__builtin_expect(child == ADT_UNDEFINED_ID, 0)) {
            *full = true;
            cache->count = (uint32_t)root_distance;
            return node == ADT_UNDEFINED_ID ? ADT_CCT_NODE_FULL : node;
        }
        node = child;
        cache->keys[root_distance] = key;
        cache->nodes[root_distance] = node;
    }
    cache->count = (uint32_t)count;
    return node == ADT_UNDEFINED_ID ? ADT_CCT_NODE_FULL : node;
}

uint32_t adt_sampler_intern_path(adt_path_cache *cache, void *const *frames, int count, uint64_t leaf_tag,
                                 bool *full)
{
    return intern_below(cache, ADT_UNDEFINED_ID, frames, count, leaf_tag, full);
}

/* Integer arithmetic only (signal context). */
uint64_t adt_sampler_prefix_hash(void *const *frames, int count, int first)
{
    uint64_t hash = 0xCBF29CE484222325ull;
    for (int i = count - 1; i >= first; --i) {
        hash = (hash ^ ((uint64_t)(uintptr_t)frames[i] & ADT_CCT_KEY_ADDRESS_MASK)) * 0x9E3779B97F4A7C15ull;
        hash ^= hash >> 29;
    }
    return hash;
}

uint32_t adt_sampler_graft_top(const adt_sampler_thread *thread)
{
    uint32_t count = atomic_load_explicit(&thread->graft_count, memory_order_relaxed);
    if (count == 0)
        return ADT_UNDEFINED_ID;
    return thread->grafts[count > ADT_USER_GRAFTS ? ADT_USER_GRAFTS - 1 : count - 1].node;
}

/* The grafts are read innermost first; each costs one hash of the path's
 * outer frames (integer arithmetic, no call), and a thread rarely has
 * more than a few user regions open. The signal fence pairs with the one
 * in adt_sampler_user_region_begin: an entry counted is written. */
uint32_t adt_sampler_intern_grafted(const adt_sampler_thread *thread, adt_path_cache *cache, void *const *frames,
                                    int count, uint64_t leaf_tag, bool *full)
{
    uint32_t open = atomic_load_explicit(&thread->graft_count, memory_order_relaxed);
    atomic_signal_fence(memory_order_acquire);
    for (uint32_t g = open > ADT_USER_GRAFTS ? ADT_USER_GRAFTS : open; g > 0; --g) {
        const adt_user_graft *graft = &thread->grafts[g - 1];
        if (graft->node == ADT_UNDEFINED_ID || (uint32_t)count < graft->depth)
            continue;
        int below = count - (int)graft->depth;
        if (adt_sampler_prefix_hash(frames, count, below + 1) == graft->prefix_hash)
            return intern_below(cache, graft->node, frames, below, leaf_tag, full);
    }
    return intern_below(cache, ADT_UNDEFINED_ID, frames, count, leaf_tag, full);
}
