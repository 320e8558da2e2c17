#include "handle_table.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

enum { SLOT_EMPTY = 0, SLOT_REMOVED = 1 };

struct adt_handle_table {
    size_t mask;
    size_t slot_bytes;
    unsigned char *slots;
    atomic_size_t count;
    atomic_uint_fast64_t overflows;
};

/* Each slot: the key (atomic), then the payload, 8-byte aligned. */
static inline _Atomic uintptr_t *slot_key(const adt_handle_table *table, size_t index)
{
    return (_Atomic uintptr_t *)(table->slots + index * table->slot_bytes);
}

static inline void *slot_payload(const adt_handle_table *table, size_t index)
{
    return table->slots + index * table->slot_bytes + sizeof(uintptr_t);
}

/* Handles are pointers (aligned) or small integers: mix all bits. */
static inline size_t home_slot(const adt_handle_table *table, uintptr_t key)
{
    uint64_t mixed = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(mixed ^ (mixed >> 29)) & table->mask;
}

adt_handle_table *adt_handle_table_create(size_t capacity, size_t payload_size)
{
    size_t slots = ADT_HANDLE_TABLE_PROBE;
    while (slots < capacity)
        slots <<= 1;
    adt_handle_table *table = calloc(1, sizeof *table);
    if (!table)
        return NULL;
    table->mask = slots - 1;
    table->slot_bytes = sizeof(uintptr_t) + ((payload_size + 7u) & ~(size_t)7u);
    table->slots = adt_memory_map(slots * table->slot_bytes);
    if (!table->slots) {
        free(table);
        return NULL;
    }
    return table;
}

void adt_handle_table_destroy(adt_handle_table *table)
{
    if (!table)
        return;
    adt_memory_unmap(table->slots, (table->mask + 1) * table->slot_bytes);
    free(table);
}

void *adt_handle_table_find(adt_handle_table *table, uintptr_t key)
{
    size_t index = home_slot(table, key);
    for (unsigned step = 0; step < ADT_HANDLE_TABLE_PROBE; ++step, index = (index + 1) & table->mask) {
        uintptr_t seen = atomic_load_explicit(slot_key(table, index), memory_order_acquire);
        if (seen == key)
            return slot_payload(table, index);
        if (seen == SLOT_EMPTY)
            return NULL;
    }
    return NULL;
}

void *adt_handle_table_insert(adt_handle_table *table, uintptr_t key)
{
    if (key == SLOT_EMPTY || key == SLOT_REMOVED)
        return NULL;
    void *existing = adt_handle_table_find(table, key);
    if (existing)
        return existing;
    size_t index = home_slot(table, key);
    for (unsigned step = 0; step < ADT_HANDLE_TABLE_PROBE; ++step, index = (index + 1) & table->mask) {
        _Atomic uintptr_t *slot = slot_key(table, index);
        uintptr_t seen = atomic_load_explicit(slot, memory_order_relaxed);
        if (seen != SLOT_EMPTY && seen != SLOT_REMOVED)
            continue;
        if (atomic_compare_exchange_strong_explicit(slot, &seen, key, memory_order_acq_rel, memory_order_relaxed)) {
            memset(slot_payload(table, index), 0, table->slot_bytes - sizeof(uintptr_t));
            atomic_fetch_add_explicit(&table->count, 1, memory_order_relaxed);
            return slot_payload(table, index);
        }
    }
    atomic_fetch_add_explicit(&table->overflows, 1, memory_order_relaxed);
    return NULL;
}

void adt_handle_table_remove(adt_handle_table *table, uintptr_t key)
{
    size_t index = home_slot(table, key);
    for (unsigned step = 0; step < ADT_HANDLE_TABLE_PROBE; ++step, index = (index + 1) & table->mask) {
        _Atomic uintptr_t *slot = slot_key(table, index);
        uintptr_t seen = atomic_load_explicit(slot, memory_order_acquire);
        if (seen == key) {
            atomic_store_explicit(slot, SLOT_REMOVED, memory_order_release);
            atomic_fetch_sub_explicit(&table->count, 1, memory_order_relaxed);
            return;
        }
        if (seen == SLOT_EMPTY)
            return;
    }
}

size_t adt_handle_table_count(const adt_handle_table *table)
{
    return atomic_load_explicit(&((adt_handle_table *)table)->count, memory_order_relaxed);
}

uint64_t adt_handle_table_overflows(const adt_handle_table *table)
{
    return atomic_load_explicit(&((adt_handle_table *)table)->overflows, memory_order_relaxed);
}
