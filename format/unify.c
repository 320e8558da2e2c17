/*
 * adt_unify (end of run, normal context): every rank's definitions as a
 * set's bytes (unify_sets.c) are gathered on rank 0, which merges them in
 * rank order into the global definitions and scatters back to each rank
 * where its definitions went; each rank turns that into its local→global
 * id maps.
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
    memset(maps, 0, sizeof *maps);
}

void adt_global_defs_free(adt_global_defs *global)
{
    adt_intern *tables[] = { &global->strings, &global->regions, &global->source_locations,
                             &global->metrics, &global->metric_classes, &global->comms,
                             &global->groups, &global->calling_contexts, &global->hosts,
                             &global->rma_wins, &global->io_files, &global->io_handles };
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; ++i)
        adt_intern_free(tables[i]);
    free(global->metric_units);
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
    maps->group_count = defs->groups.count;
    maps->group = malloc(((size_t)maps->group_count + 1) * sizeof *maps->group);
    maps->metric_count = defs->metrics.count;
    maps->metric_class = ADT_UNDEFINED_ID;
    bool ok = maps->region && maps->comm && maps->calling_context && maps->rma_win && maps->io_file &&
              maps->io_handle && maps->group;
    for (uint32_t i = 0; ok && i < maps->group_count; ++i) {
        ok = group_entries[i] < global->count[ADT_DEF_GROUP];
        maps->group[i] = ok ? 1 + global->map[ADT_DEF_GROUP][group_entries[i]] : ADT_UNDEFINED_ID;
    }
    if (ok && maps->metric_count) {
        ok = global->count[ADT_DEF_METRIC_CLASS] == 1;
        maps->metric_class = ok ? global->map[ADT_DEF_METRIC_CLASS][0] : ADT_UNDEFINED_ID;
    }
    return ok ? 0 : -1;
}

/* Rank 0: merges every rank's set in rank order into global; replies[r]
 * receives the maps rank r needs. */
static int merge_all(adt_global_defs *global, const uint8_t *gathered, const uint64_t *sizes,
                     uint32_t rank_count, adt_blob *replies)
{
    size_t offset = 0;
    for (uint32_t r = 0; r < rank_count; ++r) {
        adt_cursor in = { .data = gathered + offset, .size = sizes[r] };
        offset += sizes[r];
        adt_class_maps maps;
        int rc = adt_set_merge(global, &in, &maps);
        if (rc == 0)
            put_event_maps(&replies[r], &maps);
        adt_class_maps_free(&maps);
        if (rc != 0 || replies[r].failed)
            return -1;
    }
    adt_set_finish(global);
    return global->rank_count == rank_count ? 0 : -1;
}

static int read_maps(adt_defs *defs, const uint32_t *group_entries, const uint8_t *data, size_t size,
                     adt_id_maps *maps)
{
    adt_cursor in = { .data = data, .size = size };
    adt_class_maps global;
    int rc = read_event_maps(&in, &global) == 0 && in.offset == in.size ? 0 : -1;
    if (rc == 0)
        rc = local_maps(defs, group_entries, &global, maps);
    adt_class_maps_free(&global);
    return rc;
}

/* Gathers every rank's blob on rank 0; *gathered and sizes (rank 0 only)
 * receive the concatenation and each rank's size. */
static int gather_blobs(const adt_collectives *c, const adt_blob *mine, uint8_t **gathered,
                        uint64_t **sizes)
{
    bool root = c->rank == 0;
    size_t *eight = NULL;
    uint64_t my_size = mine->size;
    int rc = -1;
    if (root) {
        eight = malloc(c->size * sizeof *eight);
        *sizes = malloc(c->size * sizeof **sizes);
        if (!eight || !*sizes)
            goto out_agree;
        for (uint32_t r = 0; r < c->size; ++r)
            eight[r] = sizeof(uint64_t);
    }
    rc = 0;
out_agree:
    if (adt_agree(c, rc == 0) != 0) {
        rc = -1;
        goto out;
    }
    rc = -1;
    if (c->gatherv(c->context, &my_size, sizeof my_size, root ? *sizes : NULL, eight, 0) != 0)
        goto out;
    size_t total = 0;
    bool ok = true;
    if (root) {
        for (uint32_t r = 0; r < c->size; ++r) {
            eight[r] = (size_t)(*sizes)[r];
            total += eight[r];
        }
        *gathered = malloc(total + 1);
        ok = *gathered != NULL;
    }
    if (adt_agree(c, ok) != 0)
        goto out;
    if (c->gatherv(c->context, mine->data, mine->size, root ? *gathered : NULL, eight, 0) != 0)
        goto out;
    rc = 0;
out:
    free(eight);
    return rc;
}

/* Scatters replies[r] (rank 0) to rank r; *out receives this rank's part. */
static int scatter_blobs(const adt_collectives *c, const adt_blob *replies, uint8_t **out,
                         size_t *out_size)
{
    bool root = c->rank == 0;
    size_t *sizes = NULL;
    uint64_t *size_values = NULL;
    uint8_t *packed = NULL;
    int rc = -1;
    bool ok = true;
    if (root) {
        sizes = malloc(c->size * sizeof *sizes);
        size_values = malloc(c->size * sizeof *size_values);
        size_t total = 0;
        for (uint32_t r = 0; sizes && size_values && r < c->size; ++r)
            total += replies[r].size;
        packed = malloc(total + 1);
        ok = sizes && size_values && packed;
        for (size_t r = 0, offset = 0; ok && r < c->size; offset += replies[r].size, ++r) {
            memcpy(packed + offset, replies[r].data, replies[r].size);
            size_values[r] = replies[r].size;
            sizes[r] = sizeof(uint64_t);
        }
    }
    if (adt_agree(c, ok) != 0)
        goto out;
    uint64_t my_size = 0;
    if (c->scatterv(c->context, size_values, sizes, &my_size, sizeof my_size, 0) != 0)
        goto out;
    *out = malloc((size_t)my_size + 1);
    if (adt_agree(c, *out != NULL) != 0)
        goto out;
    for (uint32_t r = 0; root && r < c->size; ++r)
        sizes[r] = replies[r].size;
    if (c->scatterv(c->context, packed, sizes, *out, (size_t)my_size, 0) != 0)
        goto out;
    *out_size = (size_t)my_size;
    rc = 0;
out:
    free(sizes);
    free(size_values);
    free(packed);
    return rc;
}

int adt_unify(adt_defs *defs, const char *hostname, const adt_trace_thread *threads,
              size_t thread_count, const adt_collectives *collectives, adt_id_maps *maps,
              adt_global_defs *global, char *error, size_t error_size)
{
    const adt_collectives *c = collectives;
    bool root = c->rank == 0;
    adt_blob mine = { 0 };
    adt_blob *replies = NULL;
    uint8_t *gathered = NULL, *reply = NULL;
    uint64_t *sizes = NULL;
    uint32_t *group_entries = NULL;
    size_t reply_size = 0;
    int rc = -1;
    memset(maps, 0, sizeof *maps);

    adt_unify_serialize(defs, hostname, threads, thread_count, &mine, &group_entries);
    if (adt_agree(c, !mine.failed) != 0) {
        snprintf(error, error_size, "unifying definitions: out of memory serialising the definitions of some rank");
        goto out;
    }
    if (gather_blobs(c, &mine, &gathered, &sizes) != 0) {
        snprintf(error, error_size, "unifying definitions: gathering the definitions of %u ranks failed", c->size);
        goto out;
    }
    bool merged = true;
    if (root) {
        replies = calloc(c->size, sizeof *replies);
        merged = replies && merge_all(global, gathered, sizes, c->size, replies) == 0;
    }
    if (adt_agree(c, merged) != 0) {
        snprintf(error, error_size, "unifying definitions: rank 0 could not merge them (out of memory or inconsistent local definitions)");
        goto out;
    }
    if (scatter_blobs(c, replies, &reply, &reply_size) != 0) {
        snprintf(error, error_size, "unifying definitions: scattering the id maps failed");
        goto out;
    }
    if (adt_agree(c, read_maps(defs, group_entries, reply, reply_size, maps) == 0) != 0) {
        snprintf(error, error_size, "unifying definitions: a rank received a malformed id map");
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        adt_id_maps_free(maps);
    for (uint32_t r = 0; replies && r < c->size; ++r)
        adt_blob_free(&replies[r]);
    free(replies);
    adt_blob_free(&mine);
    free(gathered);
    free(sizes);
    free(reply);
    free(group_entries);
    return rc;
}
