/*
 * adt_unify (end of run, normal context): the definitions of all ranks
 * merged over a binomial tree (see adt_unify_tree_children). Up the tree,
 * every inner rank merges its own definitions and its children's sets (the
 * bytes of unify_sets.c) into one set and sends that union to its parent;
 * rank 0's union is the global definitions. Down the same tree, every rank
 * learns from its parent where the definitions of the set it sent went
 * globally, composes that with where its own and each child's definitions
 * went in its set, and sends each child its part: only the maps of the
 * classes events name, each no larger than the child's set.
 *
 * Memory at a rank: its own definitions, the union of its subtree (at
 * most the global set), one child's bytes at a time while merging, and
 * the id maps of its children's sets (at most log2 P of them, 4 bytes per
 * definition). Nothing grows with P but rank 0's per-rank host and thread
 * records, which the archive needs (one Location per thread).
 */
#include "format/unify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/blob.h"

int adt_agree(const adt_collectives *collectives, bool ok)
{
    uint64_t failed = ok ? 0 : 1;
    if (collectives->allreduce_max_u64(collectives->context, &failed) != 0)
        return -1;
    return failed ? -1 : 0;
}

uint32_t adt_global_string(adt_global_defs *global, const char *text)
{
    return adt_intern_add(&global->strings, text, strlen(text), NULL);
}

void adt_id_maps_free(adt_id_maps *maps)
{
    free(maps->region);
    free(maps->comm);
    free(maps->calling_context);
    free(maps->rma_win);
    free(maps->group);
    free(maps->io_file);
    free(maps->io_handle);
    free(maps->parameter);
    free(maps->user_metric_class);
    memset(maps, 0, sizeof *maps);
}

void adt_global_defs_free(adt_global_defs *global)
{
    adt_intern *tables[] = { &global->strings, &global->regions, &global->source_locations,
                             &global->metrics, &global->metric_classes, &global->comms,
                             &global->groups, &global->calling_contexts, &global->hosts,
                             &global->rma_wins, &global->io_files, &global->io_handles,
                             &global->parameters };
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; ++i)
        adt_intern_free(tables[i]);
    free(global->metric_sides);
    free(global->comm_info);
    free(global->rma_win_comm);
    free(global->rank_host);
    free(global->rank_first_thread);
    free(global->threads);
    memset(global, 0, sizeof *global);
}

/* ---- id maps ------------------------------------------------------------ */

/* The maps of the classes events name, as bytes. */
static void put_event_maps(adt_blob *blob, const adt_class_maps *maps)
{
    for (adt_def_class c = 0; c < ADT_DEF_CLASS_COUNT; ++c)
        if (adt_def_class_for_events(c)) {
            adt_blob_put_u32(blob, maps->count[c]);
            adt_blob_put(blob, maps->map[c], (size_t)maps->count[c] * sizeof(uint32_t));
        }
}

static int read_event_maps(adt_cursor *in, adt_class_maps *maps)
{
    memset(maps, 0, sizeof *maps);
    for (adt_def_class c = 0; c < ADT_DEF_CLASS_COUNT; ++c) {
        if (!adt_def_class_for_events(c))
            continue;
        maps->count[c] = adt_cursor_u32(in);
        const void *at = adt_cursor_take(in, (size_t)maps->count[c] * sizeof(uint32_t));
        maps->map[c] = malloc(((size_t)maps->count[c] + 1) * sizeof(uint32_t));
        if (!at || !maps->map[c])
            return -1;
        memcpy(maps->map[c], at, (size_t)maps->count[c] * sizeof(uint32_t));
    }
    return 0;
}

static uint32_t *copy_map(const adt_class_maps *maps, adt_def_class c, uint32_t *count)
{
    *count = maps->count[c];
    uint32_t *copy = malloc(((size_t)*count + 1) * sizeof *copy);
    if (copy)
        memcpy(copy, maps->map[c], (size_t)*count * sizeof *copy);
    return copy;
}

/* This rank's local→global maps, from where its set's definitions went
 * (global) and where its local process groups are in its set. */
static int local_maps(adt_defs *defs, const uint32_t *group_entries, const adt_class_maps *global,
                      adt_id_maps *maps)
{
    maps->region = copy_map(global, ADT_DEF_REGION, &maps->region_count);
    maps->comm = copy_map(global, ADT_DEF_COMM, &maps->comm_count);
    maps->calling_context = copy_map(global, ADT_DEF_CALLING_CONTEXT, &maps->calling_context_count);
    maps->rma_win = copy_map(global, ADT_DEF_RMA_WIN, &maps->rma_win_count);
    maps->io_file = copy_map(global, ADT_DEF_IO_FILE, &maps->io_file_count);
    maps->io_handle = copy_map(global, ADT_DEF_IO_HANDLE, &maps->io_handle_count);
    maps->parameter = copy_map(global, ADT_DEF_PARAMETER, &maps->parameter_count);
    maps->group_count = defs->groups.count;
    maps->group = malloc(((size_t)maps->group_count + 1) * sizeof *maps->group);
    maps->metric_count = defs->metrics.count;
    maps->metric_class = ADT_UNDEFINED_ID;
    maps->sampling_rate_class = ADT_UNDEFINED_ID;
    maps->buffer_use_class = ADT_UNDEFINED_ID;
    bool ok = maps->region && maps->comm && maps->calling_context && maps->rma_win && maps->io_file &&
              maps->io_handle && maps->parameter && maps->group;
    for (uint32_t i = 0; ok && i < maps->group_count; ++i) {
        ok = group_entries[i] < global->count[ADT_DEF_GROUP];
        maps->group[i] = ok ? 1 + global->map[ADT_DEF_GROUP][group_entries[i]] : ADT_UNDEFINED_ID;
    }
    /* The set holds the counters' class, then the rate's and the buffer
     * use's, then one per user metric (adt_unify_serialize). */
    uint32_t users = defs->user_metrics.count;
    uint32_t adaptive_first = maps->metric_count ? 1u : 0u;
    uint32_t user_first = adaptive_first + (defs->adaptive_metrics ? 2u : 0u);
    uint32_t classes = user_first + users;
    maps->user_metric_count = users;
    maps->user_metric_class = malloc(((size_t)users + 1) * sizeof *maps->user_metric_class);
    ok = ok && maps->user_metric_class && global->count[ADT_DEF_METRIC_CLASS] == classes;
    if (ok && maps->metric_count)
        maps->metric_class = global->map[ADT_DEF_METRIC_CLASS][0];
    if (ok && defs->adaptive_metrics) {
        maps->sampling_rate_class = global->map[ADT_DEF_METRIC_CLASS][adaptive_first];
        maps->buffer_use_class = global->map[ADT_DEF_METRIC_CLASS][adaptive_first + 1];
    }
    for (uint32_t i = 0; ok && i < users; ++i)
        maps->user_metric_class[i] = global->map[ADT_DEF_METRIC_CLASS][user_first + i];
    return ok ? 0 : -1;
}

/* Where a set's definitions are globally: through inner (set → the set it
 * was merged into) and then outer (that set → global; NULL when that set
 * is the global one), for the classes events name. */
static int compose_maps(const adt_class_maps *inner, const adt_class_maps *outer, adt_class_maps *out)
{
    memset(out, 0, sizeof *out);
    bool ok = true;
    for (adt_def_class c = 0; ok && c < ADT_DEF_CLASS_COUNT; ++c) {
        if (!adt_def_class_for_events(c))
            continue;
        out->count[c] = inner->count[c];
        out->map[c] = malloc(((size_t)out->count[c] + 1) * sizeof(uint32_t));
        ok = out->map[c] != NULL;
        for (uint32_t i = 0; ok && i < out->count[c]; ++i) {
            uint32_t id = inner->map[c][i];
            ok = !outer || id < outer->count[c];
            out->map[c][i] = outer && ok ? outer->map[c][id] : id;
        }
    }
    return ok ? 0 : -1;
}

/* Only the maps events need are kept down the tree (the others, strings
 * above all, are the larger part). */
static void keep_event_maps(adt_class_maps *maps)
{
    for (adt_def_class c = 0; c < ADT_DEF_CLASS_COUNT; ++c)
        if (!adt_def_class_for_events(c)) {
            free(maps->map[c]);
            maps->map[c] = NULL;
            maps->count[c] = 0;
        }
}

/* ---- the tree ------------------------------------------------------------- */

/* A binomial tree over ranks 0 .. size-1, rooted at 0: rank r's parent is
 * r with its lowest set bit cleared, its children are r + 2^k for every
 * 2^k below that bit (every k for rank 0) while r + 2^k < size. Why
 * binomial: its depth is ceil(log2 P) and a rank has at most log2 P
 * children, for any P (no fan-out to tune); and child r + 2^k roots the
 * ranks [r + 2^k, r + 2^(k+1)), so a rank that merges its own definitions
 * and then its children's in increasing order meets every definition in
 * rank order, as rank 0 alone did: the global ids equal those of a
 * gather to rank 0. */
#define MAX_CHILDREN 32

uint32_t adt_unify_tree_parent(uint32_t rank)
{
    return rank & (rank - 1);
}

uint32_t adt_unify_tree_children(uint32_t rank, uint32_t size, uint32_t children[MAX_CHILDREN])
{
    uint32_t count = 0;
    uint64_t lowest_bit = rank & (~rank + 1);
    for (uint64_t step = 1; (rank == 0 || step < lowest_bit) && rank + step < size; step <<= 1)
        children[count++] = (uint32_t)(rank + step);
    return count;
}

/* A message between two ranks of the tree: its byte count, or
 * FAILED_MESSAGE when the sender failed (then nothing follows), then the
 * bytes in pieces of at most PIECE_BYTES, so that a receiver without
 * memory for them still takes them (into a piece on its stack) and no
 * sender waits forever. */
#define FAILED_MESSAGE UINT64_MAX
#define PIECE_BYTES ((size_t)32 * 1024)

static int send_message(const adt_collectives *c, const adt_blob *blob, uint32_t to)
{
    uint64_t size = blob && !blob->failed ? blob->size : FAILED_MESSAGE;
    if (c->send(c->context, &size, sizeof size, to) != 0)
        return -1;
    for (size_t offset = 0; size != FAILED_MESSAGE && offset < size; offset += PIECE_BYTES) {
        size_t piece = size - offset < PIECE_BYTES ? size - offset : PIECE_BYTES;
        if (c->send(c->context, blob->data + offset, piece, to) != 0)
            return -1;
    }
    return 0;
}

/* 0 with *data (malloc'd) and *size; 1 when the sender sent the failure
 * mark; -1 when the transport failed or memory ran out here. */
static int recv_message(const adt_collectives *c, uint32_t from, uint8_t **data, size_t *size)
{
    uint64_t announced;
    *data = NULL;
    if (c->recv(c->context, &announced, sizeof announced, from) != 0 || announced >= SIZE_MAX)
        return announced == FAILED_MESSAGE ? 1 : -1;
    *size = (size_t)announced;
    *data = malloc(*size + 1);
    uint8_t drain[PIECE_BYTES];
    int rc = *data ? 0 : -1;
    for (size_t offset = 0; offset < *size; offset += PIECE_BYTES) {
        size_t piece = *size - offset < PIECE_BYTES ? *size - offset : PIECE_BYTES;
        if (c->recv(c->context, *data ? *data + offset : drain, piece, from) != 0)
            rc = -1;
    }
    return rc;
}

/* What one rank holds during the unification. */
typedef struct tree_rank {
    const adt_collectives *c;
    uint32_t children[MAX_CHILDREN];
    uint32_t child_count;
    adt_blob mine;               /* this rank's definitions as a set's bytes */
    uint32_t *group_entries;
    adt_global_defs set;         /* inner ranks: the union of their subtree */
    adt_class_maps own;          /* inner ranks: mine → set */
    adt_class_maps child[MAX_CHILDREN]; /* each child's set → set */
    adt_class_maps down;         /* what the parent sent: the sent set → global */
    const char *failure;         /* this rank's own failure, first one */
    bool other_failed;           /* a child or the parent sent the failure mark */
} tree_rank;

static void fail(tree_rank *t, const char *what)
{
    if (!t->failure)
        t->failure = what;
}

static bool failed(const tree_rank *t)
{
    return t->failure || t->other_failed;
}

/* A message received: its outcome recorded, true when it can be used. */
static bool received(tree_rank *t, int rc, const char *what)
{
    if (rc > 0)
        t->other_failed = true;
    else if (rc < 0)
        fail(t, what);
    return rc == 0 && !failed(t);
}

static bool is_inner(const tree_rank *t)
{
    return t->child_count > 0 || t->c->rank == 0;
}

/* Up: merge the children's sets, in rank order, into this rank's own, and
 * send the union to the parent (a leaf sends its own bytes as they are). */
static void merge_up(tree_rank *t)
{
    const adt_collectives *c = t->c;
    if (t->mine.failed)
        fail(t, "out of memory serialising its definitions");
    if (!t->failure && is_inner(t)) {
        adt_cursor in = { .data = t->mine.data, .size = t->mine.size };
        if (adt_set_merge(&t->set, &in, &t->own) != 0)
            fail(t, "out of memory merging its own definitions");
        keep_event_maps(&t->own);
    }
    for (uint32_t k = 0; k < t->child_count; ++k) {
        uint8_t *data;
        size_t size;
        if (received(t, recv_message(c, t->children[k], &data, &size),
                     "receiving the definitions of a child rank failed")) {
            adt_cursor in = { .data = data, .size = size };
            if (adt_set_merge(&t->set, &in, &t->child[k]) != 0)
                fail(t, "out of memory or malformed definitions merging a child rank's");
            keep_event_maps(&t->child[k]);
        }
        free(data);
    }
    if (c->rank == 0) {
        adt_set_finish(&t->set);
        if (!failed(t) && t->set.rank_count != c->size)
            fail(t, "the merged definitions miss some ranks");
        return;
    }
    adt_blob up = { 0 };
    if (is_inner(t))
        adt_set_serialize(&t->set, &up);
    const adt_blob *sent = is_inner(t) ? &up : &t->mine;
    if (sent->failed)
        fail(t, "out of memory serialising the merged definitions");
    if (send_message(c, failed(t) ? NULL : sent, adt_unify_tree_parent(c->rank)) != 0)
        fail(t, "sending the definitions to the parent rank failed");
    adt_blob_free(&up);
    /* the union went up: only the maps are needed from here */
    adt_global_defs_free(&t->set);
    adt_blob_free(&t->mine);
}

/* Down: receive where this rank's set went globally, tell each child where
 * its set went, and keep this rank's own maps in *mine_global. */
static void map_down(tree_rank *t, adt_class_maps *mine_global)
{
    const adt_collectives *c = t->c;
    memset(mine_global, 0, sizeof *mine_global);
    const adt_class_maps *outer = NULL; /* rank 0's set is the global one */
    if (c->rank != 0) {
        uint8_t *data;
        size_t size;
        if (received(t, recv_message(c, adt_unify_tree_parent(c->rank), &data, &size),
                     "receiving the id maps from the parent rank failed")) {
            adt_cursor in = { .data = data, .size = size };
            if (read_event_maps(&in, &t->down) != 0 || in.offset != in.size)
                fail(t, "received a malformed id map");
        }
        free(data);
        outer = &t->down;
    }
    for (uint32_t k = 0; k < t->child_count; ++k) {
        adt_class_maps composed = { 0 };
        adt_blob reply = { 0 };
        if (!failed(t) && compose_maps(&t->child[k], outer, &composed) == 0)
            put_event_maps(&reply, &composed);
        else
            reply.failed = true;
        adt_class_maps_free(&composed);
        if (send_message(c, &reply, t->children[k]) != 0 || (reply.failed && !failed(t)))
            fail(t, "sending the id maps to a child rank failed");
        adt_blob_free(&reply);
    }
    if (failed(t))
        return;
    if (!is_inner(t)) {
        *mine_global = t->down;
        memset(&t->down, 0, sizeof t->down);
    } else if (compose_maps(&t->own, outer, mine_global) != 0)
        fail(t, "out of memory composing its id maps");
}

int adt_unify(adt_defs *defs, const char *hostname, const adt_trace_thread *threads,
              size_t thread_count, const adt_collectives *collectives, adt_id_maps *maps,
              adt_global_defs *global, char *error, size_t error_size)
{
    const adt_collectives *c = collectives;
    tree_rank *t = calloc(1, sizeof *t);
    memset(maps, 0, sizeof *maps);
    adt_class_maps mine_global = { 0 };
    if (t) {
        t->c = c;
        t->child_count = adt_unify_tree_children(c->rank, c->size, t->children);
        adt_unify_serialize(defs, hostname, threads, thread_count, &t->mine, &t->group_entries);
        merge_up(t);
        map_down(t, &mine_global);
        if (!failed(t) && local_maps(defs, t->group_entries, &mine_global, maps) != 0)
            fail(t, "a received id map does not fit its definitions");
    }
    bool ok = t && !failed(t);
    int rc = adt_agree(c, ok);
    if (rc != 0) {
        if (t && !t->failure)
            snprintf(error, error_size, "unifying definitions failed on another rank");
        else
            snprintf(error, error_size, "unifying definitions: rank %u: %s", c->rank,
                     t ? t->failure : "out of memory");
        adt_id_maps_free(maps);
    } else if (c->rank == 0) {
        *global = t->set;
        memset(&t->set, 0, sizeof t->set);
    }
    adt_class_maps_free(&mine_global);
    if (t) {
        adt_blob_free(&t->mine);
        free(t->group_entries);
        adt_global_defs_free(&t->set);
        adt_class_maps_free(&t->own);
        adt_class_maps_free(&t->down);
        for (uint32_t k = 0; k < t->child_count; ++k)
            adt_class_maps_free(&t->child[k]);
        free(t);
    }
    return rc;
}
