/*
 * buffer internals: the arena layout, the lock-free free list and the
 * per-location state shared by the hot path (append.c) and the slow paths
 * (arena.c, refill.c, removal.c, spill.c, reader.c).
 *
 * Memory layout:
 * - chunk = [chunk header: next chunk index, bytes used][records ...]
 * - record = [record header 16 B][u64 sample number, samples only][payload]
 *   padded to a multiple of 8; a record never crosses a chunk.
 *
 * Who writes what (so that plain fields need no lock):
 * - the event chain, the sample counter and the skipped count: the
 *   location's own thread (event appends in normal context, sample appends
 *   in its signal handler, which never nests with itself);
 * - the level chains, kept/removed/dropped sample counts and the shift:
 *   whoever holds the location's sample guard.
 * Fields that other threads may read while they change (statistics, the
 * shift) are read and written with relaxed atomics: no ordering is needed,
 * only untorn values.
 */
#ifndef ADAPTRACE_BUFFER_INTERNAL_H
#define ADAPTRACE_BUFFER_INTERNAL_H

#include <pthread.h>

#include "buffer/buffer.h"

#define ADT_LIKELY(x) __builtin_expect(!!(x), 1)
#define ADT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define ADT_CHUNK_NONE UINT32_MAX
#define ADT_CHUNK_MIN_BYTES 64u

typedef struct adt_chunk_header {
    uint32_t next; /* next chunk of the chain or of the free list; accessed atomically */
    uint32_t used; /* bytes used, header included; valid once the chunk is no chain's tail */
} adt_chunk_header;

typedef struct adt_record_header {
    uint64_t time;
    uint32_t size;    /* whole record, multiple of 8 */
    uint16_t kind;
    uint8_t level;    /* ADT_EVENT_LEVEL or λ(n) */
    uint8_t padding;  /* bytes after the payload up to size */
} adt_record_header;

#define ADT_RECORD_HEADER_BYTES ((uint32_t)sizeof(adt_record_header))
#define ADT_SAMPLE_NUMBER_BYTES ((uint32_t)sizeof(uint64_t))

_Static_assert(sizeof(adt_chunk_header) == 8, "chunk header keeps records 8-aligned");
_Static_assert(sizeof(adt_record_header) == 16, "record header is 16 bytes");

/* A chain of chunks. write/end describe the free room of the tail chunk;
 * an empty chain has write == end == adt_chain_empty, so the hot path's
 * room check sends its first append to the slow path without a separate
 * test (and without subtracting null pointers). */
typedef struct adt_chain {
    char *write;
    char *end;
    uint32_t head;
    uint32_t tail;
    uint64_t bytes;
    uint64_t chunks;
    uint64_t records;
} adt_chain;

extern char adt_chain_empty[1];

enum {
    ADT_GUARD_FREE = 0,
    ADT_GUARD_SAMPLE = 1,  /* a sample append of the owner runs */
    ADT_GUARD_REMOVAL = 2  /* a level removal (or the owner's refill) runs */
};

struct adt_location {
    /* hot: event appends */
    adt_chain events;
    bool events_stopped;
    uint8_t unstored_as;    /* how an event is counted once events_stopped: adt_unstored */
    /* hot: sample appends */
    uint32_t guard;
    uint64_t number_mask;   /* 2^shift - 1 */
    uint64_t last_number;
    adt_buffer *buffer;

    ADT_LOCATION_COUNTERS(ADT_LOCATION_COUNTER_FIELD)
    uint64_t samples_lost[ADT_SAMPLE_LOSS_CAUSES];
    uint64_t events_lost[ADT_EVENT_LOSS_CAUSES];
    unsigned shift;
    /* shift_reached_at[k]: trace-clock time at which the shift became k
     * (0: never); written by whoever holds the guard, read by anyone. */
    uint64_t shift_reached_at[ADT_BUFFER_LEVELS];
    /* chunks_in_use_at_shift[k]: the arena's chunks in use (all
     * locations) just before and just after the drop that stamped shift
     * k; written with the stamp. */
    uint32_t chunks_in_use_at_shift[ADT_BUFFER_LEVELS][2];

    int spill_fd;
    /* The list of the location's event chunks that left the arena, in the
     * spill file's layout (spill.c): spilled to the process's file or
     * streamed (adt_buffer_take_event_chunks). Positions in chunk_bytes
     * units of the file; the list ends at spill_tail, whose header points
     * to spill_next, the position its next chunk will have (reserved in
     * advance, so that a chunk never needs its link written after it
     * left: a streamed one may be in flight or gone). */
    uint32_t spill_head;
    uint32_t spill_tail;
    uint32_t spill_next;

    uint64_t id;
    void *user;

    adt_chain levels[ADT_BUFFER_LEVELS];
} __attribute__((aligned(64)));

struct adt_buffer {
    char *arena;
    size_t arena_bytes;
    uint32_t chunk_bytes;
    uint32_t chunks_total;

    /* Treiber stack head: low 32 bits chunk index, high 32 bits ABA tag. */
    uint64_t free_head __attribute__((aligned(64)));
    uint64_t chunks_free;
    uint64_t chunks_high_water;
    uint64_t spill_end __attribute__((aligned(64)));  /* next free byte of the spill file */

    adt_preflush_fn preflush;
    void *preflush_arg;

    pthread_mutex_t add_lock;
    size_t location_count;
    size_t max_locations;
    adt_location *locations;
};

static inline uint64_t adt_load_relaxed(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* Single writer, concurrent readers: an untorn store is enough, a locked
 * read-modify-write would only cost time on the hot path. */
static inline void adt_counter_add(uint64_t *counter, uint64_t value)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + value, __ATOMIC_RELAXED);
}

/* What an event appended after events_stopped is counted as. */
typedef enum adt_unstored {
    ADT_UNSTORED_STOPPED = 0,  /* lost: events_lost[STOPPED] */
    ADT_UNSTORED_FOLDED,       /* in the thread's skeleton: events_folded */
    ADT_UNSTORED_NOT_FOLDED    /* lost while folding: events_lost[NOT_FOLDED] */
} adt_unstored;

/* Counts one event that found the location's events stopped; the
 * location's own thread only (single writer). */
static inline void adt_count_unstored_event(adt_location *location)
{
    switch ((adt_unstored)location->unstored_as) {
    case ADT_UNSTORED_FOLDED:
        adt_counter_add(&location->events_folded, 1);
        return;
    case ADT_UNSTORED_NOT_FOLDED:
        adt_counter_add(&location->events_lost[ADT_EVENT_LOST_NOT_FOLDED], 1);
        return;
    case ADT_UNSTORED_STOPPED:
        break;
    }
    adt_counter_add(&location->events_lost[ADT_EVENT_LOST_STOPPED], 1);
}

static inline adt_chunk_header *adt_chunk_at(const adt_buffer *buffer, uint32_t index)
{
    return (adt_chunk_header *)(buffer->arena + (size_t)index * buffer->chunk_bytes);
}

static inline uint32_t adt_chunk_next(const adt_chunk_header *chunk)
{
    return __atomic_load_n(&chunk->next, __ATOMIC_RELAXED);
}

static inline void adt_chunk_set_next(adt_chunk_header *chunk, uint32_t next)
{
    __atomic_store_n(&chunk->next, next, __ATOMIC_RELAXED);
}

/* Bytes a record takes in a chunk, header and padding included. 64-bit so
 * that a huge payload cannot wrap. */
static inline uint64_t adt_record_bytes(uint32_t prefix, uint32_t payload_size)
{
    return (uint64_t)prefix + (((uint64_t)payload_size + 7u) & ~(uint64_t)7u);
}

static inline uint64_t adt_chunk_capacity(const adt_buffer *buffer)
{
    return buffer->chunk_bytes - sizeof(adt_chunk_header);
}

/* The arena's chunks in use now (all locations); a snapshot that other
 * threads' appends and removals move on. Async-signal-safe. */
static inline uint32_t adt_chunks_in_use(const adt_buffer *buffer)
{
    return buffer->chunks_total - (uint32_t)__atomic_load_n(&buffer->chunks_free, __ATOMIC_RELAXED);
}

/* Free list (arena.c): lock-free, async-signal-safe. */
uint32_t adt_free_list_pop(adt_buffer *buffer);
void adt_free_list_push_chain(adt_buffer *buffer, uint32_t head, uint32_t tail, uint64_t chunks);

/* Chains of chunks (arena.c). An empty chain: */
void adt_chain_init(adt_chain *chain);
/* Appends a fresh chunk to chain. */
void adt_chain_link_chunk(adt_buffer *buffer, adt_chain *chain, uint32_t chunk);
/* Empties chain and gives all its chunks back in one step. */
void adt_chain_release(adt_buffer *buffer, adt_chain *chain);

/* Slow paths of the appends (refill.c): make room for record_bytes in the
 * chain, taking chunks and calling the pre-flush callback as needed. */
adt_append_status adt_event_refill(adt_location *location, uint64_t record_bytes, uint64_t time);
adt_append_status adt_sample_refill(adt_location *location, uint64_t number, uint64_t record_bytes, uint64_t time);
/* The 64-bit sample counter is used up (only after some 60 removals, which
 * an arena with fewer free chunks than active levels can cause): the sample
 * is dropped, numbered 0. */
adt_append_status adt_sample_numbers_exhausted(adt_location *location, bool guarded, uint64_t *number);

#endif
