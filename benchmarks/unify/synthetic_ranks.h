/*
 * The synthetic ranks of the unification benchmark (issue #15), shaped
 * like CP2K's definitions (15,753 calling contexts on a rank, 1,260
 * regions): most calling contexts, regions and source locations are the
 * same on every rank, own_calling_contexts of them are the rank's own (at
 * source lines no other rank has); the communicators are what MPI gives
 * every rank (MPI_COMM_WORLD, the rank's MPI_COMM_SELF, a duplicate of
 * MPI_COMM_WORLD) and the row and column communicators of a 2-D process
 * grid; 32 ranks share a host.
 *
 * A rank's definitions are a function of its rank, so the union of a
 * block of ranks can be built without building each rank: the shared part
 * once, then every other rank's own part. synthetic_union_direct does so;
 * synthetic_union_merged merges the ranks one by one with adt_set_merge, as
 * the tree does, and a test holds the two byte for byte.
 */
#ifndef ADAPTRACE_BENCHMARKS_UNIFY_SYNTHETIC_RANKS_H
#define ADAPTRACE_BENCHMARKS_UNIFY_SYNTHETIC_RANKS_H

#include "format/unify.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNTHETIC_CALLING_CONTEXTS 15753u
/* CP2K's shape: 3 % of the calling contexts are a rank's own */
#define SYNTHETIC_CP2K_OWN_CALLING_CONTEXTS (SYNTHETIC_CALLING_CONTEXTS * 3u / 100u)

typedef struct synthetic_shape {
    uint32_t rank_count;
    /* at most SYNTHETIC_CALLING_CONTEXTS - 1, and rank_count times it below
     * 2^31: each rank's own source lines are numbered apart */
    uint32_t own_calling_contexts;
} synthetic_shape;

extern const adt_trace_thread synthetic_master_thread;

/* The host name of rank (32 ranks a host) into name (at least 16 bytes). */
void synthetic_host_name(uint32_t rank, char *name, size_t size);

/* Rank's definitions as its MPI wrappers and sampler would have registered
 * them; NULL when out of memory. */
adt_defs *synthetic_rank_defs(const synthetic_shape *shape, uint32_t rank);

/* Rank's definitions as the bytes of a set (adt_unify_serialize), appended
 * to out; false when out of memory. */
bool synthetic_rank_bytes(const synthetic_shape *shape, uint32_t rank, adt_blob *out);

/* The union of ranks first .. first + count - 1 as the bytes of a set,
 * appended to out: merged one rank at a time in rank order, or built
 * directly from the shape. The same bytes; false when out of memory. */
bool synthetic_union_merged(const synthetic_shape *shape, uint32_t first, uint32_t count, adt_blob *out);
bool synthetic_union_direct(const synthetic_shape *shape, uint32_t first, uint32_t count, adt_blob *out);

#ifdef __cplusplus
}
#endif

#endif
