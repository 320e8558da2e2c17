/* The analyzer's running totals and live/report.json (live.c), for
 * analyzer.c; the ranks' side never includes it. */
#ifndef ADAPTRACE_ONLINE_LIVE_H
#define ADAPTRACE_ONLINE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "online/wire.h"

/* The key of each cause in live/report.json, by adt_online_loss. */
extern const char *const adt_online_loss_keys[ADT_ONLINE_LOSS_COUNT];

/* One MPI function on one rank. */
typedef struct adt_live_function {
    uint64_t calls;
    uint64_t ticks;
    uint64_t sent;
    uint64_t received;
} adt_live_function;

/* One rank as its chunks tell it; all words, so the analyzers' totals add
 * up with one MPI_SUM (a rank is served by one analyzer, the others hold
 * zeros for it). */
typedef struct adt_live_rank {
    uint64_t ticks_per_second;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    uint64_t heard;    /* 1 once a chunk came */
    uint64_t finished; /* 1 once its last chunk came */
    uint64_t chunks;
    uint64_t bytes;
} adt_live_rank;

typedef struct adt_live {
    uint32_t ranks;
    uint32_t functions;
    adt_live_function *table; /* [rank * functions + function] */
    adt_live_rank *states;    /* [rank] */
} adt_live;

#define ADT_LIVE_RANK_WORDS (sizeof(adt_live_rank) / sizeof(uint64_t))
#define ADT_LIVE_FUNCTION_WORDS (sizeof(adt_live_function) / sizeof(uint64_t))

/* 0, or -1 when out of memory. */
int adt_live_create(adt_live *live, uint32_t ranks, uint32_t functions);
void adt_live_destroy(adt_live *live);

/* Adds a chunk of bytes bytes that came from rank source (last: its last
 * one). Returns 0, or -1 with the reason in error for a chunk that does
 * not hold what its header says (then nothing of it is added). */
int adt_live_add_chunk(adt_live *live, uint32_t source, const adt_online_chunk *chunk, size_t bytes, bool last,
                       char *error, size_t error_size);

/* Writes <archive>/live/report.json atomically (a temporary file renamed
 * over it): the totals of live, whether they are final, the analyzers and
 * the seconds since they started. names[function]: each function's name.
 * 0, or -1 with the reason in error. */
int adt_live_write(const adt_live *live, const char *const *names, const char *archive, bool final,
                   uint32_t analyzers, uint32_t interval_s, double elapsed_s, char *error, size_t error_size);

#endif
