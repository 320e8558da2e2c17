/*
 * Definition sets: the bytes one rank's definitions, or the union of a
 * group of ranks' definitions, travel in between ranks, and the merge of
 * such bytes into a set (end of run, normal context). One table of
 * definition classes drives the reading, the translation of the ids a
 * definition names into the receiving set's ids, and the interning: a
 * class names its table, its key size and what it stores beside the key.
 *
 * A set's bytes: per class in adt_def_class order, the number of
 * definitions, then each one's key (variable-size keys after their byte
 * count) followed by its side record; then the ranks: their number and,
 * per rank, its host (a hosts id), its thread count and each thread's
 * index and name (a strings id). Ids inside a definition refer to earlier
 * classes, or to earlier definitions of its own class (parents).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/unify.h"

/* Rewrites the ids inside key (size bytes) and side into the receiving
 * set's ids through maps (an id of class c must be below maps->count[c]). */
typedef void translate_fn(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad);

typedef struct def_class {
    size_t table;     /* offsetof(adt_global_defs, the class's adt_intern) */
    size_t key_size;  /* 0: variable, its byte count first */
    size_t side;      /* offsetof(adt_global_defs, the side array) */
    size_t side_size; /* bytes per definition beside the key; 0 for none */
    translate_fn *translate;
    bool for_events;  /* its local→global map is needed to write events */
} def_class;

/* Translates id of class c; undefined stays undefined, out of range marks
 * the merge as failed. */
static uint32_t translate(const adt_class_maps *maps, adt_def_class c, uint32_t id, bool *bad)
{
    if (id == ADT_UNDEFINED_ID)
        return ADT_UNDEFINED_ID;
    if (id >= maps->count[c]) {
        *bad = true;
        return ADT_UNDEFINED_ID;
    }
    return maps->map[c][id];
}

/* An archive group id (1 + index into groups); undefined stays undefined. */
static uint32_t translate_group(const adt_class_maps *maps, uint32_t group, bool *bad)
{
    if (group == ADT_UNDEFINED_ID || group == 0) {
        *bad |= group == 0;
        return ADT_UNDEFINED_ID;
    }
    uint32_t index = translate(maps, ADT_DEF_GROUP, group - 1, bad);
    return index == ADT_UNDEFINED_ID ? ADT_UNDEFINED_ID : 1 + index;
}

static void translate_region(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)size, (void)side;
    adt_region_key *k = key;
    k->name = translate(maps, ADT_DEF_STRING, k->name, bad);
    k->canonical_name = translate(maps, ADT_DEF_STRING, k->canonical_name, bad);
    k->source_file = translate(maps, ADT_DEF_STRING, k->source_file, bad);
}

static void translate_source_location(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)size, (void)side;
    adt_source_location_key *k = key;
    k->file = translate(maps, ADT_DEF_STRING, k->file, bad);
}

/* Keys that are one string id: metrics (side: adt_metric_side, whose
 * first field is the unit's string id), I/O files and hosts (their names). */
static void translate_named(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)size;
    uint32_t *name = key;
    *name = translate(maps, ADT_DEF_STRING, *name, bad);
    if (side) {
        uint32_t *unit = side;
        *unit = translate(maps, ADT_DEF_STRING, *unit, bad);
    }
}

static void translate_metric_class(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)side;
    uint32_t *members = key;
    for (size_t i = 0; i < size / sizeof *members; ++i)
        members[i] = translate(maps, ADT_DEF_METRIC, members[i], bad);
}

/* The parent must come first: maps->count[ADT_DEF_COMM] is this one's index. */
static void translate_comm(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)key, (void)size;
    adt_global_comm *info = side;
    info->name = translate(maps, ADT_DEF_STRING, info->name, bad);
    info->parent = translate(maps, ADT_DEF_COMM, info->parent, bad);
    info->group = translate_group(maps, info->group, bad);
    info->remote_group = translate_group(maps, info->remote_group, bad);
}

static void translate_rma_win(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)key, (void)size;
    uint32_t *comm = side;
    *comm = translate(maps, ADT_DEF_COMM, *comm, bad);
}

static void translate_io_handle(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)size, (void)side;
    adt_io_handle_key *k = key;
    k->file = translate(maps, ADT_DEF_IO_FILE, k->file, bad);
    k->comm = translate(maps, ADT_DEF_COMM, k->comm, bad);
}

static void translate_calling_context(void *key, size_t size, void *side, const adt_class_maps *maps, bool *bad)
{
    (void)size, (void)side;
    adt_cc_node *node = key;
    node->region = translate(maps, ADT_DEF_REGION, node->region, bad);
    node->source_location = translate(maps, ADT_DEF_SOURCE_LOCATION, node->source_location, bad);
    node->parent = translate(maps, ADT_DEF_CALLING_CONTEXT, node->parent, bad);
}

#define TABLE(field) offsetof(adt_global_defs, field)

static const def_class classes[ADT_DEF_CLASS_COUNT] = {
    [ADT_DEF_STRING] = { TABLE(strings), 0, 0, 0, NULL, false },
    [ADT_DEF_REGION] = { TABLE(regions), sizeof(adt_region_key), 0, 0, translate_region, true },
    [ADT_DEF_SOURCE_LOCATION] = { TABLE(source_locations), sizeof(adt_source_location_key), 0, 0,
                                  translate_source_location, false },
    [ADT_DEF_METRIC] = { TABLE(metrics), sizeof(uint32_t), TABLE(metric_sides), sizeof(adt_metric_side),
                         translate_named, false },
    [ADT_DEF_METRIC_CLASS] = { TABLE(metric_classes), 0, 0, 0, translate_metric_class, true },
    [ADT_DEF_GROUP] = { TABLE(groups), 0, 0, 0, NULL, true },
    [ADT_DEF_COMM] = { TABLE(comms), sizeof(adt_comm_key), TABLE(comm_info), sizeof(adt_global_comm),
                       translate_comm, true },
    [ADT_DEF_RMA_WIN] = { TABLE(rma_wins), sizeof(adt_rma_win_key), TABLE(rma_win_comm), sizeof(uint32_t),
                          translate_rma_win, true },
    [ADT_DEF_IO_FILE] = { TABLE(io_files), sizeof(uint32_t), 0, 0, translate_named, true },
    [ADT_DEF_IO_HANDLE] = { TABLE(io_handles), sizeof(adt_io_handle_key), 0, 0, translate_io_handle, true },
    [ADT_DEF_CALLING_CONTEXT] = { TABLE(calling_contexts), sizeof(adt_cc_node), 0, 0, translate_calling_context,
                                  true },
    [ADT_DEF_HOST] = { TABLE(hosts), sizeof(uint32_t), 0, 0, translate_named, false },
};

static adt_intern *table_of(adt_global_defs *set, adt_def_class c)
{
    return (adt_intern *)((char *)set + classes[c].table);
}

static void **side_of(adt_global_defs *set, adt_def_class c)
{
    return (void **)((char *)set + classes[c].side);
}

bool adt_def_class_for_events(adt_def_class c)
{
    return classes[c].for_events;
}

static int grow_array(void **array, size_t element, size_t needed)
{
    void *grown = realloc(*array, needed * element + element);
    if (!grown)
        return -1;
    *array = grown;
    return 0;
}

/* ---- writing a set's bytes ------------------------------------------------ */

/* Class c's count and definitions from table (and its side array). */
static void put_class(adt_blob *blob, adt_def_class c, const adt_intern *table, const void *side)
{
    const def_class *k = &classes[c];
    adt_blob_put_u32(blob, table->count);
    for (uint32_t i = 0; i < table->count; ++i) {
        size_t size;
        const void *key = adt_intern_key(table, i, &size);
        if (!k->key_size)
            adt_blob_put_u32(blob, (uint32_t)size);
        adt_blob_put(blob, key, size);
        if (k->side_size)
            adt_blob_put(blob, (const char *)side + i * k->side_size, k->side_size);
    }
}

static void put_metric(adt_blob *blob, uint32_t name, uint32_t unit, adt_metric_kind kind)
{
    adt_blob_put_u32(blob, name);
    adt_metric_side side = { unit, kind };
    adt_blob_put(blob, &side, sizeof side);
}

/* The rank's metrics: its counters in record order, then the sampling rate
 * and the buffer use when they are defined; then its metric classes: the
 * counters' one (its members in record order), then one for each of the
 * two (its one member). */
static void put_metrics(adt_blob *blob, const adt_defs *defs)
{
    uint32_t counters = defs->metrics.count;
    adt_blob_put_u32(blob, counters + (defs->adaptive_metrics ? 2u : 0u));
    for (uint32_t i = 0; i < counters; ++i)
        put_metric(blob, *(const uint32_t *)adt_intern_key(&defs->metrics, i, NULL), defs->metric_units[i],
                   ADT_METRIC_COUNTER);
    if (defs->adaptive_metrics) {
        put_metric(blob, defs->sampling_rate_name, defs->sampling_rate_unit, ADT_METRIC_SAMPLING_RATE);
        put_metric(blob, defs->buffer_use_name, defs->buffer_use_unit, ADT_METRIC_BUFFER_USE);
    }
    adt_blob_put_u32(blob, (counters ? 1u : 0u) + (defs->adaptive_metrics ? 2u : 0u));
    if (counters) {
        adt_blob_put_u32(blob, counters * (uint32_t)sizeof(uint32_t));
        for (uint32_t i = 0; i < counters; ++i)
            adt_blob_put_u32(blob, i);
    }
    for (uint32_t i = 0; defs->adaptive_metrics && i < 2; ++i) {
        adt_blob_put_u32(blob, (uint32_t)sizeof(uint32_t));
        adt_blob_put_u32(blob, counters + i);
    }
}

static void put_thread(adt_blob *blob, uint32_t thread_index, uint32_t name)
{
    adt_blob_put_u32(blob, thread_index);
    adt_blob_put_u32(blob, name);
}

void adt_set_serialize(const adt_global_defs *set, adt_blob *blob)
{
    for (adt_def_class c = 0; c < ADT_DEF_CLASS_COUNT; ++c) {
        adt_global_defs *s = (adt_global_defs *)set;
        put_class(blob, c, table_of(s, c), classes[c].side_size ? *side_of(s, c) : NULL);
    }
    adt_blob_put_u32(blob, set->rank_count);
    for (uint32_t r = 0; r < set->rank_count; ++r) {
        size_t first = set->rank_first_thread[r], end = set->rank_first_thread[r + 1];
        adt_blob_put_u32(blob, set->rank_host[r]);
        adt_blob_put_u32(blob, (uint32_t)(end - first));
        for (size_t t = first; t < end; ++t)
            put_thread(blob, set->threads[t].thread_index, set->threads[t].name);
    }
}

/* One rank's definitions as a set's bytes. The host and thread names
 * follow the registry's strings; the process groups are those of the
 * communicators (in communicator order) and then the registry's own, each
 * member list once: group_entries[i] is where local group i went. */
void adt_unify_serialize(adt_defs *defs, const char *hostname, const adt_trace_thread *threads,
                         size_t thread_count, adt_blob *blob, uint32_t **group_entries)
{
    adt_intern groups;
    adt_intern_init(&groups);
    *group_entries = NULL;
    pthread_mutex_lock(&defs->lock);
    uint32_t local_strings = defs->strings.count;
    adt_global_comm *comm_info = malloc(((size_t)defs->comms.count + 1) * sizeof *comm_info);
    *group_entries = malloc(((size_t)defs->groups.count + 1) * sizeof **group_entries);
    bool ok = comm_info && *group_entries;
    for (uint32_t i = 0; ok && i < defs->comms.count; ++i) {
        const adt_comm_def *comm = &defs->comm_defs[i];
        adt_global_comm *info = &comm_info[i];
        *info = (adt_global_comm){ comm->name, comm->parent, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID };
        if (comm->is_self)
            continue;
        uint32_t local = adt_intern_add(&groups, comm->members, (size_t)comm->size * sizeof(uint32_t), NULL);
        info->group = local == ADT_UNDEFINED_ID ? ADT_UNDEFINED_ID : 1 + local;
        ok &= local != ADT_UNDEFINED_ID;
        if (comm->remote_size) {
            local = adt_intern_add(&groups, comm->members + comm->size,
                                   (size_t)comm->remote_size * sizeof(uint32_t), NULL);
            info->remote_group = local == ADT_UNDEFINED_ID ? ADT_UNDEFINED_ID : 1 + local;
            ok &= local != ADT_UNDEFINED_ID;
        }
    }
    for (uint32_t i = 0; ok && i < defs->groups.count; ++i) {
        size_t bytes;
        const void *members = adt_intern_key(&defs->groups, i, &bytes);
        (*group_entries)[i] = adt_intern_add(&groups, members, bytes, NULL);
        ok &= (*group_entries)[i] != ADT_UNDEFINED_ID;
    }
    if (ok) {
        adt_blob_put_u32(blob, local_strings + 1 + (uint32_t)thread_count);
        for (uint32_t i = 0; i < local_strings; ++i) {
            size_t size;
            const void *bytes = adt_intern_key(&defs->strings, i, &size);
            adt_blob_put_string(blob, bytes, size);
        }
        adt_blob_put_string(blob, hostname, strlen(hostname));
        for (size_t i = 0; i < thread_count; ++i) {
            const char *name = threads[i].name ? threads[i].name : "";
            adt_blob_put_string(blob, name, strlen(name));
        }
        put_class(blob, ADT_DEF_REGION, &defs->regions, NULL);
        put_class(blob, ADT_DEF_SOURCE_LOCATION, &defs->source_locations, NULL);
        put_metrics(blob, defs);
        put_class(blob, ADT_DEF_GROUP, &groups, NULL);
        put_class(blob, ADT_DEF_COMM, &defs->comms, comm_info);
        put_class(blob, ADT_DEF_RMA_WIN, &defs->rma_wins, defs->rma_win_comms);
        put_class(blob, ADT_DEF_IO_FILE, &defs->io_files, NULL);
        put_class(blob, ADT_DEF_IO_HANDLE, &defs->io_handles, NULL);
        adt_blob_put_u32(blob, (uint32_t)defs->calling_context_count);
        adt_blob_put(blob, defs->calling_contexts, defs->calling_context_count * sizeof(adt_cc_node));
        adt_blob_put_u32(blob, 1); /* the host: its name is string local_strings */
        adt_blob_put_u32(blob, local_strings);
        adt_blob_put_u32(blob, 1); /* one rank, on host 0 */
        adt_blob_put_u32(blob, 0);
        adt_blob_put_u32(blob, (uint32_t)thread_count);
        for (size_t i = 0; i < thread_count; ++i)
            put_thread(blob, threads[i].thread_index, local_strings + 1 + (uint32_t)i);
    }
    pthread_mutex_unlock(&defs->lock);
    blob->failed |= !ok;
    adt_intern_free(&groups);
    free(comm_info);
}

/* ---- merging a set's bytes ----------------------------------------------- */

/* Reads class c's definitions from in into set; maps->map[c][i] is where
 * definition i went. */
static int merge_class(adt_global_defs *set, adt_def_class c, adt_cursor *in, adt_class_maps *maps)
{
    const def_class *k = &classes[c];
    uint32_t count = adt_cursor_u32(in);
    if (in->failed || count > in->size)
        return -1;
    maps->map[c] = malloc(((size_t)count + 1) * sizeof(uint32_t));
    uint8_t *scratch = NULL;
    size_t scratch_size = 0;
    bool bad = !maps->map[c];
    for (uint32_t i = 0; i < count && !bad; ++i) {
        size_t size = k->key_size ? k->key_size : adt_cursor_u32(in);
        const void *key = adt_cursor_take(in, size);
        const void *side = k->side_size ? adt_cursor_take(in, k->side_size) : NULL;
        if (in->failed)
            break;
        /* a copy to translate in place, aligned for the key's fields (a
         * buffer even for an empty key: memcpy takes no null pointer) */
        if (!scratch || size + k->side_size > scratch_size) {
            scratch_size = 2 * (size + k->side_size) + 64;
            free(scratch);
            scratch = malloc(scratch_size);
            if (!scratch) {
                bad = true;
                break;
            }
        }
        memcpy(scratch, key, size);
        uint8_t *side_copy = side ? scratch + ((size + 7) & ~(size_t)7) : NULL;
        if (side)
            memcpy(side_copy, side, k->side_size);
        maps->count[c] = i;
        if (k->translate)
            k->translate(scratch, size, side_copy, maps, &bad);
        int added;
        uint32_t id = adt_intern_add(table_of(set, c), scratch, size, &added);
        bad |= id == ADT_UNDEFINED_ID;
        if (added && side && !bad) {
            void **array = side_of(set, c);
            bad |= grow_array(array, k->side_size, table_of(set, c)->count) != 0;
            if (!bad)
                memcpy((char *)*array + (size_t)id * k->side_size, side_copy, k->side_size);
        }
        maps->map[c][i] = id;
    }
    maps->count[c] = count;
    free(scratch);
    return bad || in->failed ? -1 : 0;
}

/* Appends the ranks of in to set: hosts and thread names through maps. */
static int merge_ranks(adt_global_defs *set, adt_cursor *in, const adt_class_maps *maps)
{
    uint32_t ranks = adt_cursor_u32(in);
    if (in->failed || ranks > in->size)
        return -1;
    size_t total = (size_t)set->rank_count + ranks;
    if (grow_array((void **)&set->rank_host, sizeof *set->rank_host, total) != 0 ||
        grow_array((void **)&set->rank_first_thread, sizeof *set->rank_first_thread, total + 1) != 0)
        return -1;
    if (set->rank_count == 0)
        set->rank_first_thread[0] = 0;
    bool bad = false;
    for (uint32_t r = 0; r < ranks && !bad && !in->failed; ++r) {
        uint32_t rank = set->rank_count;
        set->rank_host[rank] = translate(maps, ADT_DEF_HOST, adt_cursor_u32(in), &bad);
        uint32_t threads = adt_cursor_u32(in);
        size_t first = set->rank_first_thread[rank];
        if (in->failed || threads > in->size ||
            grow_array((void **)&set->threads, sizeof *set->threads, first + threads) != 0)
            return -1;
        for (uint32_t t = 0; t < threads; ++t) {
            set->threads[first + t].thread_index = adt_cursor_u32(in);
            set->threads[first + t].name = translate(maps, ADT_DEF_STRING, adt_cursor_u32(in), &bad);
        }
        set->rank_first_thread[rank + 1] = first + threads;
        set->rank_count = rank + 1;
    }
    return bad || in->failed ? -1 : 0;
}

int adt_set_merge(adt_global_defs *set, adt_cursor *in, adt_class_maps *maps)
{
    memset(maps, 0, sizeof *maps);
    for (adt_def_class c = 0; c < ADT_DEF_CLASS_COUNT; ++c)
        if (merge_class(set, c, in, maps) != 0)
            return -1;
    if (merge_ranks(set, in, maps) != 0)
        return -1;
    return in->offset == in->size ? 0 : -1;
}

void adt_set_finish(adt_global_defs *set)
{
    uint32_t self_group = 1 + set->groups.count;
    for (uint32_t c = 0; c < set->comms.count; ++c)
        if (set->comm_info[c].group == ADT_UNDEFINED_ID) {
            set->comm_info[c].group = self_group;
            set->self_group_used = true;
        }
}

void adt_class_maps_free(adt_class_maps *maps)
{
    for (adt_def_class c = 0; c < ADT_DEF_CLASS_COUNT; ++c)
        free(maps->map[c]);
    memset(maps, 0, sizeof *maps);
}
