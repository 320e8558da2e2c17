/*
 * A fixed-capacity hash table keyed by an MPI handle (any pointer-sized
 * value), holding a fixed-size payload per key. Used for requests,
 * communicators and matched-probe messages.
 *
 * Open addressing with linear probing over a window of
 * ADT_HANDLE_TABLE_PROBE slots. Slots are claimed with a compare-and-swap
 * on the key, so inserts, lookups and removals of different keys from
 * different threads need no lock; all memory is allocated at creation.
 * One key is used by one thread at a time (MPI forbids concurrent use of
 * one request; the application's own synchronisation orders the hand-over),
 * which is why a payload can be filled after its slot was claimed.
 */
#ifndef ADAPTRACE_MPI_HANDLE_TABLE_H
#define ADAPTRACE_MPI_HANDLE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ADT_HANDLE_TABLE_PROBE 64u

typedef struct adt_handle_table adt_handle_table;

/* capacity: rounded up to a power of two (at least ADT_HANDLE_TABLE_PROBE).
 * Returns NULL when the memory cannot be had. */
adt_handle_table *adt_handle_table_create(size_t capacity, size_t payload_size);
void adt_handle_table_destroy(adt_handle_table *table);

/* The payload of key, zero-filled when the key is new (an existing key's
 * payload is returned as it is). NULL when no slot is free within the
 * probe window (counted, see adt_handle_table_overflows). Keys 0 and 1 are
 * reserved. */
void *adt_handle_table_insert(adt_handle_table *table, uintptr_t key);

/* The payload of key or NULL. */
void *adt_handle_table_find(adt_handle_table *table, uintptr_t key);

/* Forgets key (nothing happens when it is absent). */
void adt_handle_table_remove(adt_handle_table *table, uintptr_t key);

/* Keys present now / inserts refused because the probe window was full. */
size_t adt_handle_table_count(const adt_handle_table *table);
uint64_t adt_handle_table_overflows(const adt_handle_table *table);

#ifdef __cplusplus
}
#endif

#endif
