#include "sampler/cct.h"

#include <errno.h>

#include "core/core.h"
#include "format/format.h"

int adt_cct_create(adt_cct *tree, uint64_t bytes)
{
    /* Largest power-of-two slot count whose slots and nodes (half as many:
     * load factor at most 1/2 keeps probes short) fit in bytes. */
    uint64_t slots = 1;
    while ((slots * 2) * sizeof(uint32_t) + slots * sizeof(adt_cct_node) <= bytes && slots < (1ull << 31))
        slots *= 2;
    if (slots < 4) {
        errno = EINVAL;
        return -1;
    }
    size_t capacity = (size_t)(slots / 2);
    size_t node_bytes = capacity * sizeof(adt_cct_node);
    size_t total = node_bytes + (size_t)slots * sizeof(uint32_t);
    void *memory = adt_memory_map(total);
    if (memory == NULL)
        return -1;
    tree->memory = memory;
    tree->memory_bytes = total;
    tree->nodes = memory;
    tree->slots = (_Atomic uint32_t *)((char *)memory + node_bytes);
    tree->capacity = (uint32_t)capacity;
    tree->slot_mask = (uint32_t)(slots - 1);
    atomic_init(&tree->lost_races, 0);
    /* Node 0: where a sample goes whose path did not fit at all. */
    tree->nodes[ADT_CCT_NODE_FULL].key = 0;
    tree->nodes[ADT_CCT_NODE_FULL].parent = ADT_UNDEFINED_ID;
    atomic_init(&tree->used, 1);
    return 0;
}

void adt_cct_destroy(adt_cct *tree)
{
    if (tree->memory)
        adt_memory_unmap(tree->memory, tree->memory_bytes);
    tree->memory = NULL;
    tree->nodes = NULL;
    tree->slots = NULL;
    tree->capacity = 0;
}

static inline uint32_t cct_hash(uint32_t parent, uint64_t key)
{
    uint64_t mixed = (key ^ ((uint64_t)parent << 32 | parent)) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(mixed >> 32) ^ (uint32_t)mixed;
}

/* Hot path. Linear probing; an insert allocates and fills its node first
 * and publishes it with one CAS on an empty slot, so a reader (or a signal
 * handler interrupting the insert) sees either nothing or a complete node.
 * The loser of a race on the same slot checks the winner's node; its own
 * node stays allocated as an unreferenced duplicate (counted). */
uint32_t adt_cct_intern(adt_cct *tree, uint32_t parent, uint64_t key)
{
    uint32_t slot = cct_hash(parent, key) & tree->slot_mask;
    uint32_t mine = ADT_UNDEFINED_ID;
    for (;;) {
        uint32_t entry = atomic_load_explicit(&tree->slots[slot], memory_order_acquire);
        if (entry == 0) {
            if (mine == ADT_UNDEFINED_ID) {
                /* Checked before the add so that a full tree does not let
                 * the counter run on (and wrap) with every sample. */
                if (__builtin_expect(atomic_load_explicit(&tree->used, memory_order_relaxed) >= tree->capacity, 0))
                    return ADT_UNDEFINED_ID;
                uint32_t id = atomic_fetch_add_explicit(&tree->used, 1, memory_order_relaxed);
                if (__builtin_expect(id >= tree->capacity, 0))
                    return ADT_UNDEFINED_ID;
                tree->nodes[id].key = key;
                tree->nodes[id].parent = parent;
                mine = id;
            }
            uint32_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(&tree->slots[slot], &expected, mine + 1,
                                                        memory_order_release, memory_order_acquire))
                return mine;
            entry = expected;
        }
        const adt_cct_node *node = &tree->nodes[entry - 1];
        if (node->key == key && node->parent == parent) {
            if (mine != ADT_UNDEFINED_ID)
                atomic_fetch_add_explicit(&tree->lost_races, 1, memory_order_relaxed);
            return entry - 1;
        }
        slot = (slot + 1) & tree->slot_mask;
    }
}

uint32_t adt_cct_count(adt_cct *tree)
{
    uint32_t used = atomic_load_explicit(&tree->used, memory_order_acquire);
    return used < tree->capacity ? used : tree->capacity;
}
