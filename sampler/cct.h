/*
 * The calling-context tree: nodes keyed by (parent, key), interned from the
 * signal handler without locks. Preallocated (one mapping sized from the
 * memory budget), lock-free open-addressing hash with CAS insert, nodes are
 * never removed. Node ids are dense from 0 and a parent's id is always
 * smaller than its children's, so the table can be handed to the
 * definitions as it is.
 *
 * Keys: an instruction address, tagged with ADT_CCT_KEY_EXACT when it is
 * the interrupted instruction itself (a sample's leaf) rather than a return
 * address, or ADT_CCT_KEY_REGION | region id for a region leaf (MPI calls).
 * Node 0 is reserved: samples whose path did not fit even one node.
 */
#ifndef ADAPTRACE_SAMPLER_CCT_H
#define ADAPTRACE_SAMPLER_CCT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define ADT_CCT_KEY_REGION (1ull << 63)
#define ADT_CCT_KEY_EXACT (1ull << 62)
#define ADT_CCT_KEY_ADDRESS_MASK (ADT_CCT_KEY_EXACT - 1)
#define ADT_CCT_NODE_FULL 0u /* the reserved node */

typedef struct adt_cct_node {
    uint64_t key;
    uint32_t parent; /* ADT_UNDEFINED_ID for a root */
    uint32_t reserved;
} adt_cct_node;

typedef struct adt_cct {
    void *memory;
    size_t memory_bytes;
    adt_cct_node *nodes;
    _Atomic uint32_t *slots; /* node id + 1, 0 = empty */
    uint32_t capacity;       /* nodes */
    uint32_t slot_mask;
    _Atomic uint32_t used;   /* nodes handed out (may exceed capacity when full) */
    _Atomic uint64_t lost_races; /* nodes allocated by an insert that lost its CAS */
} adt_cct;

/* Bytes per node at the load factor used (node + two hash slots). */
#define ADT_CCT_BYTES_PER_NODE (sizeof(adt_cct_node) + 2 * sizeof(uint32_t))

/* Maps and pre-faults bytes of memory. Returns 0, or -1 with errno. */
int adt_cct_create(adt_cct *tree, uint64_t bytes);
void adt_cct_destroy(adt_cct *tree);

/* Hot path (async-signal-safe, lock-free): the id of the node (parent, key),
 * inserted if new; ADT_UNDEFINED_ID when the tree is full. */
uint32_t adt_cct_intern(adt_cct *tree, uint32_t parent, uint64_t key);

/* Nodes in the table (ids 0 .. count-1 are valid). */
uint32_t adt_cct_count(adt_cct *tree);

#endif
