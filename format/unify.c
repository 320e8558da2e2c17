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

/* ---- local side: serialise the registry -------------------------------- */

void adt_unify_serialize(adt_defs *defs, const char *hostname, const adt_trace_thread *threads,
                         size_t thread_count, adt_blob *blob)
{
    pthread_mutex_lock(&defs->lock);
    adt_blob_put_u32(blob, defs->strings.count);
    for (uint32_t i = 0; i < defs->strings.count; ++i) {
        size_t size;
        const void *bytes = adt_intern_key(&defs->strings, i, &size);
        adt_blob_put_string(blob, bytes, size);
    }
    const adt_intern *fixed[] = { &defs->regions, &defs->source_locations };
    for (size_t t = 0; t < 2; ++t) {
        adt_blob_put_u32(blob, fixed[t]->count);
        adt_blob_put(blob, fixed[t]->bytes, fixed[t]->bytes_used);
    }
    adt_blob_put_u32(blob, defs->metrics.count);
    for (uint32_t i = 0; i < defs->metrics.count; ++i) {
        adt_blob_put(blob, adt_intern_key(&defs->metrics, i, NULL), sizeof(uint32_t));
        adt_blob_put_u32(blob, defs->metric_units[i]);
    }
    adt_blob_put_u32(blob, defs->comms.count);
    for (uint32_t i = 0; i < defs->comms.count; ++i) {
        const adt_comm_def *comm = &defs->comm_defs[i];
        adt_blob_put(blob, adt_intern_key(&defs->comms, i, NULL), sizeof(adt_comm_key));
        adt_blob_put_u32(blob, comm->name);
        adt_blob_put_u32(blob, comm->parent);
        adt_blob_put_u32(blob, comm->is_self);
        adt_blob_put_u32(blob, comm->size);
        adt_blob_put_u32(blob, comm->remote_size);
        adt_blob_put(blob, comm->members, ((size_t)comm->size + comm->remote_size) * sizeof(uint32_t));
    }
    adt_blob_put_u32(blob, defs->rma_wins.count);
    for (uint32_t i = 0; i < defs->rma_wins.count; ++i) {
        adt_blob_put(blob, adt_intern_key(&defs->rma_wins, i, NULL), sizeof(adt_rma_win_key));
        adt_blob_put_u32(blob, defs->rma_win_comms[i]);
    }
    adt_blob_put_u32(blob, defs->groups.count);
    for (uint32_t i = 0; i < defs->groups.count; ++i) {
        size_t bytes;
        const void *members = adt_intern_key(&defs->groups, i, &bytes);
        adt_blob_put_u32(blob, (uint32_t)(bytes / sizeof(uint32_t)));
        adt_blob_put(blob, members, bytes);
    }
    const adt_intern *io[] = { &defs->io_files, &defs->io_handles };
    for (size_t t = 0; t < 2; ++t) {
        adt_blob_put_u32(blob, io[t]->count);
        adt_blob_put(blob, io[t]->bytes, io[t]->bytes_used);
    }
    adt_blob_put_u32(blob, (uint32_t)defs->calling_context_count);
    adt_blob_put(blob, defs->calling_contexts, defs->calling_context_count * sizeof(adt_cc_node));
    pthread_mutex_unlock(&defs->lock);

    adt_blob_put_string(blob, hostname, strlen(hostname));
    adt_blob_put_u32(blob, (uint32_t)thread_count);
    for (size_t i = 0; i < thread_count; ++i) {
        const char *name = threads[i].name ? threads[i].name : "";
        adt_blob_put_u32(blob, threads[i].thread_index);
        adt_blob_put_string(blob, name, strlen(name));
    }
}

/* ---- rank 0: merge one rank's definitions ------------------------------ */

/* Translates a local id through map (count entries); undefined stays
 * undefined, out of range marks the merge as failed. */
static uint32_t translate(const uint32_t *map, uint32_t count, uint32_t id, bool *bad)
{
    if (id == ADT_UNDEFINED_ID)
        return ADT_UNDEFINED_ID;
    if (id >= count) {
        *bad = true;
        return ADT_UNDEFINED_ID;
    }
    return map[id];
}

static uint32_t *map_alloc(uint32_t count)
{
    return malloc((size_t)count * sizeof(uint32_t) + sizeof(uint32_t));
}

static int grow_array(void **array, size_t element, uint32_t needed)
{
    void *grown = realloc(*array, (size_t)needed * element + element);
    if (!grown)
        return -1;
    *array = grown;
    return 0;
}

static uint32_t add_group(adt_global_defs *global, const uint32_t *members, uint32_t size)
{
    uint32_t index = adt_intern_add(&global->groups, members, (size_t)size * sizeof *members, NULL);
    return index == ADT_UNDEFINED_ID ? ADT_UNDEFINED_ID : 1 + index;
}

/* A rank's RMA windows: merged by their key; the window's communicator
 * through the rank's comm map. Returns the window map (count in *count). */
static uint32_t *merge_rma_wins(adt_global_defs *global, adt_cursor *in, const uint32_t *comms,
                                uint32_t comm_count, uint32_t *count, bool *bad)
{
    *count = adt_cursor_u32(in);
    uint32_t *wins = map_alloc(*count);
    *bad |= !wins;
    for (uint32_t i = 0; i < *count && !*bad && !in->failed; ++i) {
        adt_rma_win_key key;
        const void *at = adt_cursor_take(in, sizeof key);
        if (!at)
            break;
        memcpy(&key, at, sizeof key);
        uint32_t comm = translate(comms, comm_count, adt_cursor_u32(in), bad);
        int added;
        wins[i] = adt_intern_add(&global->rma_wins, &key, sizeof key, &added);
        *bad |= wins[i] == ADT_UNDEFINED_ID || comm == ADT_UNDEFINED_ID;
        if (added && !*bad) {
            *bad |= grow_array((void **)&global->rma_win_comm, sizeof(uint32_t), global->rma_wins.count) != 0;
            if (!*bad)
                global->rma_win_comm[wins[i]] = comm;
        }
    }
    return wins;
}

/* A rank's process groups: one archive group per distinct member list,
 * shared with the communicators' groups. Returns the group map. */
static uint32_t *merge_groups(adt_global_defs *global, adt_cursor *in, uint32_t *count, bool *bad)
{
    *count = adt_cursor_u32(in);
    uint32_t *groups = map_alloc(*count);
    *bad |= !groups;
    for (uint32_t i = 0; i < *count && !*bad && !in->failed; ++i) {
        uint32_t size = adt_cursor_u32(in);
        const void *members = adt_cursor_take(in, (size_t)size * sizeof(uint32_t));
        uint32_t *copy = members ? malloc((size_t)size * sizeof *copy + sizeof *copy) : NULL;
        *bad |= !copy;
        if (*bad)
            break;
        memcpy(copy, members, (size_t)size * sizeof *copy);
        groups[i] = add_group(global, copy, size);
        *bad |= groups[i] == ADT_UNDEFINED_ID;
        free(copy);
    }
    return groups;
}

/* A rank's I/O files (merged by name) and I/O handles (merged by their
 * key, with global file and comm ids). Returns the two maps. */
static void merge_io(adt_global_defs *global, adt_cursor *in, const uint32_t *strings, uint32_t string_count,
                     const uint32_t *comms, uint32_t comm_count, uint32_t *counts, uint32_t **maps, bool *bad)
{
    counts[0] = adt_cursor_u32(in);
    maps[0] = map_alloc(counts[0]);
    *bad |= !maps[0];
    for (uint32_t i = 0; i < counts[0] && !*bad && !in->failed; ++i) {
        uint32_t name = translate(strings, string_count, adt_cursor_u32(in), bad);
        maps[0][i] = adt_intern_add(&global->io_files, &name, sizeof name, NULL);
        *bad |= maps[0][i] == ADT_UNDEFINED_ID;
    }
    counts[1] = adt_cursor_u32(in);
    maps[1] = map_alloc(counts[1]);
    *bad |= !maps[1];
    for (uint32_t i = 0; i < counts[1] && !*bad && !in->failed; ++i) {
        adt_io_handle_key key;
        const void *at = adt_cursor_take(in, sizeof key);
        if (!at)
            break;
        memcpy(&key, at, sizeof key);
        key.file = translate(maps[0], counts[0], key.file, bad);
        key.comm = translate(comms, comm_count, key.comm, bad);
        maps[1][i] = adt_intern_add(&global->io_handles, &key, sizeof key, NULL);
        *bad |= maps[1][i] == ADT_UNDEFINED_ID;
    }
}

/* Merges rank's blob into global and writes its id maps into reply. */
static int merge_rank(adt_global_defs *global, uint32_t rank, adt_cursor *in, adt_blob *reply)
{
    bool bad = false;
    uint32_t string_count = adt_cursor_u32(in);
    uint32_t *strings = map_alloc(string_count);
    uint32_t *regions = NULL, *locations = NULL, *metrics = NULL, *comms = NULL, *ccs = NULL;
    if (!strings)
        return -1;
    for (uint32_t i = 0; i < string_count && !in->failed; ++i) {
        uint32_t size = adt_cursor_u32(in);
        const void *bytes = adt_cursor_take(in, size);
        strings[i] = bytes ? adt_intern_add(&global->strings, bytes, size, NULL) : ADT_UNDEFINED_ID;
        bad |= strings[i] == ADT_UNDEFINED_ID;
    }

    uint32_t region_count = adt_cursor_u32(in);
    regions = map_alloc(region_count);
    bad |= !regions;
    for (uint32_t i = 0; i < region_count && !bad && !in->failed; ++i) {
        adt_region_key key;
        const void *at = adt_cursor_take(in, sizeof key);
        if (!at)
            break;
        memcpy(&key, at, sizeof key);
        key.name = translate(strings, string_count, key.name, &bad);
        key.canonical_name = translate(strings, string_count, key.canonical_name, &bad);
        key.source_file = translate(strings, string_count, key.source_file, &bad);
        regions[i] = adt_intern_add(&global->regions, &key, sizeof key, NULL);
        bad |= regions[i] == ADT_UNDEFINED_ID;
    }

    uint32_t location_count = adt_cursor_u32(in);
    locations = map_alloc(location_count);
    bad |= !locations;
    for (uint32_t i = 0; i < location_count && !bad && !in->failed; ++i) {
        adt_source_location_key key;
        const void *at = adt_cursor_take(in, sizeof key);
        if (!at)
            break;
        memcpy(&key, at, sizeof key);
        key.file = translate(strings, string_count, key.file, &bad);
        locations[i] = adt_intern_add(&global->source_locations, &key, sizeof key, NULL);
        bad |= locations[i] == ADT_UNDEFINED_ID;
    }

    uint32_t metric_count = adt_cursor_u32(in);
    metrics = map_alloc(metric_count);
    bad |= !metrics;
    for (uint32_t i = 0; i < metric_count && !bad && !in->failed; ++i) {
        uint32_t name = translate(strings, string_count, adt_cursor_u32(in), &bad);
        uint32_t unit = translate(strings, string_count, adt_cursor_u32(in), &bad);
        int added;
        metrics[i] = adt_intern_add(&global->metrics, &name, sizeof name, &added);
        bad |= metrics[i] == ADT_UNDEFINED_ID;
        if (added && !bad) {
            bad |= grow_array((void **)&global->metric_units, sizeof(uint32_t), global->metrics.count) != 0;
            if (!bad)
                global->metric_units[metrics[i]] = unit;
        }
    }
    uint32_t metric_class = ADT_UNDEFINED_ID;
    if (metric_count && !bad) {
        metric_class = adt_intern_add(&global->metric_classes, metrics, (size_t)metric_count * sizeof *metrics, NULL);
        bad |= metric_class == ADT_UNDEFINED_ID;
    }

    uint32_t comm_count = adt_cursor_u32(in);
    comms = map_alloc(comm_count);
    bad |= !comms;
    for (uint32_t i = 0; i < comm_count && !bad && !in->failed; ++i) {
        adt_comm_key key;
        const void *at = adt_cursor_take(in, sizeof key);
        if (!at)
            break;
        memcpy(&key, at, sizeof key);
        uint32_t name = translate(strings, string_count, adt_cursor_u32(in), &bad);
        uint32_t parent = adt_cursor_u32(in);
        parent = parent < i ? comms[parent] : translate(NULL, 0, parent, &bad);
        bool is_self = adt_cursor_u32(in) != 0;
        uint32_t size = adt_cursor_u32(in);
        uint32_t remote_size = adt_cursor_u32(in);
        const uint32_t *members = adt_cursor_take(in, ((size_t)size + remote_size) * sizeof(uint32_t));
        if (in->failed || bad)
            break;
        int added;
        comms[i] = adt_intern_add(&global->comms, &key, sizeof key, &added);
        bad |= comms[i] == ADT_UNDEFINED_ID;
        if (!added || bad)
            continue;
        bad |= grow_array((void **)&global->comm_info, sizeof(adt_global_comm), global->comms.count) != 0;
        if (bad)
            break;
        /* member lists are copied out of the blob before interning */
        uint32_t *copy = malloc(((size_t)size + remote_size) * sizeof *copy + sizeof *copy);
        bad |= !copy;
        if (bad)
            break;
        memcpy(copy, members, ((size_t)size + remote_size) * sizeof *copy);
        adt_global_comm *info = &global->comm_info[comms[i]];
        info->name = name;
        info->parent = parent;
        info->remote_group = ADT_UNDEFINED_ID;
        if (is_self) {
            global->self_group_used = true;
            info->group = ADT_UNDEFINED_ID; /* resolved once all groups are known */
        } else {
            info->group = add_group(global, copy, size);
            bad |= info->group == ADT_UNDEFINED_ID;
            if (remote_size) {
                info->remote_group = add_group(global, copy + size, remote_size);
                bad |= info->remote_group == ADT_UNDEFINED_ID;
            }
        }
        free(copy);
    }

    uint32_t win_count = 0, group_count = 0;
    uint32_t *wins = merge_rma_wins(global, in, comms, comm_count, &win_count, &bad);
    uint32_t *groups = merge_groups(global, in, &group_count, &bad);
    uint32_t io_counts[2] = { 0, 0 };
    uint32_t *io_maps[2] = { NULL, NULL };
    merge_io(global, in, strings, string_count, comms, comm_count, io_counts, io_maps, &bad);

    uint32_t cc_count = adt_cursor_u32(in);
    ccs = map_alloc(cc_count);
    bad |= !ccs;
    for (uint32_t i = 0; i < cc_count && !bad && !in->failed; ++i) {
        adt_cc_node node;
        const void *at = adt_cursor_take(in, sizeof node);
        if (!at)
            break;
        memcpy(&node, at, sizeof node);
        node.region = translate(regions, region_count, node.region, &bad);
        node.source_location = translate(locations, location_count, node.source_location, &bad);
        node.parent = translate(ccs, i, node.parent, &bad);
        ccs[i] = adt_intern_add(&global->calling_contexts, &node, sizeof node, NULL);
        bad |= ccs[i] == ADT_UNDEFINED_ID;
    }

    uint32_t host_size = adt_cursor_u32(in);
    const void *host = adt_cursor_take(in, host_size);
    if (host && !bad) {
        uint32_t host_string = adt_intern_add(&global->strings, host, host_size, NULL);
        global->rank_host[rank] = adt_intern_add(&global->hosts, &host_string, sizeof host_string, NULL);
        bad |= host_string == ADT_UNDEFINED_ID || global->rank_host[rank] == ADT_UNDEFINED_ID;
    }
    uint32_t thread_count = adt_cursor_u32(in);
    size_t first = global->rank_first_thread[rank];
    if (!bad && !in->failed)
        bad |= grow_array((void **)&global->threads, sizeof(adt_global_thread), (uint32_t)(first + thread_count)) != 0;
    for (uint32_t i = 0; i < thread_count && !bad && !in->failed; ++i) {
        uint32_t index = adt_cursor_u32(in);
        uint32_t size = adt_cursor_u32(in);
        const void *name = adt_cursor_take(in, size);
        if (!name)
            break;
        global->threads[first + i].thread_index = index;
        global->threads[first + i].name = adt_intern_add(&global->strings, name, size, NULL);
        bad |= global->threads[first + i].name == ADT_UNDEFINED_ID;
    }
    global->rank_first_thread[rank + 1] = first + (bad || in->failed ? 0 : thread_count);

    adt_blob_put_u32(reply, metric_class);
    adt_blob_put_u32(reply, metric_count);
    adt_blob_put_u32(reply, region_count);
    adt_blob_put(reply, regions, (size_t)region_count * sizeof(uint32_t));
    adt_blob_put_u32(reply, comm_count);
    adt_blob_put(reply, comms, (size_t)comm_count * sizeof(uint32_t));
    adt_blob_put_u32(reply, cc_count);
    adt_blob_put(reply, ccs, (size_t)cc_count * sizeof(uint32_t));
    adt_blob_put_u32(reply, win_count);
    adt_blob_put(reply, wins, (size_t)win_count * sizeof(uint32_t));
    adt_blob_put_u32(reply, group_count);
    adt_blob_put(reply, groups, (size_t)group_count * sizeof(uint32_t));
    for (size_t t = 0; t < 2; ++t) {
        adt_blob_put_u32(reply, io_counts[t]);
        adt_blob_put(reply, io_maps[t], (size_t)io_counts[t] * sizeof(uint32_t));
        free(io_maps[t]);
    }

    free(wins);
    free(groups);
    free(strings);
    free(regions);
    free(locations);
    free(metrics);
    free(comms);
    free(ccs);
    return bad || in->failed || in->offset != in->size || reply->failed ? -1 : 0;
}

static int merge_all(adt_global_defs *global, const uint8_t *gathered, const uint64_t *sizes,
                     uint32_t rank_count, adt_blob *replies)
{
    global->rank_count = rank_count;
    global->rank_host = calloc(rank_count, sizeof *global->rank_host);
    global->rank_first_thread = calloc((size_t)rank_count + 1, sizeof *global->rank_first_thread);
    if (!global->rank_host || !global->rank_first_thread)
        return -1;
    size_t offset = 0;
    for (uint32_t r = 0; r < rank_count; ++r) {
        adt_cursor in = { .data = gathered + offset, .size = sizes[r] };
        offset += sizes[r];
        if (merge_rank(global, r, &in, &replies[r]) != 0)
            return -1;
    }
    uint32_t self_group = 1 + global->groups.count;
    for (uint32_t c = 0; c < global->comms.count; ++c)
        if (global->comm_info[c].group == ADT_UNDEFINED_ID)
            global->comm_info[c].group = self_group;
    return 0;
}

static int read_maps(const uint8_t *data, size_t size, adt_id_maps *maps)
{
    adt_cursor in = { .data = data, .size = size };
    maps->metric_class = adt_cursor_u32(&in);
    maps->metric_count = adt_cursor_u32(&in);
    uint32_t **targets[] = { &maps->region, &maps->comm, &maps->calling_context, &maps->rma_win, &maps->group,
                             &maps->io_file, &maps->io_handle };
    uint32_t *counts[] = { &maps->region_count, &maps->comm_count, &maps->calling_context_count,
                           &maps->rma_win_count, &maps->group_count, &maps->io_file_count,
                           &maps->io_handle_count };
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; ++t) {
        *counts[t] = adt_cursor_u32(&in);
        const void *at = adt_cursor_take(&in, (size_t)*counts[t] * sizeof(uint32_t));
        *targets[t] = map_alloc(*counts[t]);
        if (!at || !*targets[t])
            return -1;
        memcpy(*targets[t], at, (size_t)*counts[t] * sizeof(uint32_t));
    }
    return in.offset == in.size ? 0 : -1;
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
    size_t reply_size = 0;
    int rc = -1;
    memset(maps, 0, sizeof *maps);

    adt_unify_serialize(defs, hostname, threads, thread_count, &mine);
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
    if (adt_agree(c, read_maps(reply, reply_size, maps) == 0) != 0) {
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
    return rc;
}
