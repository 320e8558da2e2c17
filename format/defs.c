/* The process-local definitions registry: dense local ids per class,
 * identical definitions share an id, one mutex around everything. */
#include <stdlib.h>
#include <string.h>

#include "format/defs_internal.h"

adt_defs *adt_defs_create(void)
{
    adt_defs *defs = calloc(1, sizeof *defs);
    if (!defs)
        return NULL;
    if (adt_journal_open(&defs->journal) != 0) {
        free(defs);
        return NULL;
    }
    pthread_mutex_init(&defs->lock, NULL);
    adt_intern_init(&defs->strings);
    adt_intern_init(&defs->regions);
    adt_intern_init(&defs->source_locations);
    adt_intern_init(&defs->metrics);
    adt_intern_init(&defs->comms);
    adt_intern_init(&defs->rma_wins);
    adt_intern_init(&defs->groups);
    adt_intern_init(&defs->io_files);
    adt_intern_init(&defs->parameters);
    adt_intern_init(&defs->user_metrics);
    adt_intern_init(&defs->io_handles);
    return defs;
}

void adt_defs_destroy(adt_defs *defs)
{
    if (!defs)
        return;
    for (uint32_t i = 0; i < defs->comms.count; ++i)
        free(defs->comm_defs[i].members);
    free(defs->comm_defs);
    free(defs->metric_units);
    free(defs->rma_win_comms);
    free(defs->calling_contexts);
    adt_intern_free(&defs->strings);
    adt_intern_free(&defs->regions);
    adt_intern_free(&defs->source_locations);
    adt_intern_free(&defs->metrics);
    adt_intern_free(&defs->comms);
    adt_intern_free(&defs->rma_wins);
    adt_intern_free(&defs->groups);
    adt_intern_free(&defs->io_files);
    adt_intern_free(&defs->parameters);
    adt_intern_free(&defs->user_metrics);
    adt_intern_free(&defs->io_handles);
    adt_journal_close(&defs->journal);
    pthread_mutex_destroy(&defs->lock);
    free(defs);
}

/* Caller holds the lock. NULL stands for "no string" (ADT_UNDEFINED_ID). */
static uint32_t string_id(adt_defs *defs, const char *text)
{
    if (!text)
        return ADT_UNDEFINED_ID;
    return adt_intern_add(&defs->strings, text, strlen(text), NULL);
}

uint32_t adt_defs_region(adt_defs *defs, const char *name, const char *canonical_name,
                         adt_region_role role, adt_paradigm paradigm,
                         const char *source_file, uint32_t begin_line, uint32_t end_line)
{
    if (!name)
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    adt_region_key key = {
        .name = string_id(defs, name),
        .canonical_name = string_id(defs, canonical_name ? canonical_name : name),
        .role = (uint32_t)role,
        .paradigm = (uint32_t)paradigm,
        .source_file = string_id(defs, source_file),
        .begin_line = begin_line,
        .end_line = end_line,
    };
    uint32_t id = ADT_UNDEFINED_ID;
    int added = 0;
    if (key.name != ADT_UNDEFINED_ID && key.canonical_name != ADT_UNDEFINED_ID &&
        (key.source_file != ADT_UNDEFINED_ID || !source_file))
        id = adt_intern_add(&defs->regions, &key, sizeof key, &added);
    if (added)
        adt_journal_region(&defs->journal, name, canonical_name ? canonical_name : name, (uint32_t)role,
                           (uint32_t)paradigm, source_file, begin_line, end_line);
    pthread_mutex_unlock(&defs->lock);
    return id;
}

size_t adt_defs_region_name(adt_defs *defs, uint32_t region, char *name, size_t size)
{
    size_t length = 0;
    pthread_mutex_lock(&defs->lock);
    if (region < defs->regions.count) {
        adt_region_key key;
        memcpy(&key, adt_intern_key(&defs->regions, region, NULL), sizeof key);
        const char *text = adt_intern_key(&defs->strings, key.name, &length);
        size_t copied = length < size ? length : (size > 0 ? size - 1 : 0);
        memcpy(name, text, copied);
        if (size > 0)
            name[copied] = '\0';
    }
    pthread_mutex_unlock(&defs->lock);
    return length;
}

uint32_t adt_defs_source_location(adt_defs *defs, const char *file, uint32_t line)
{
    if (!file)
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    adt_source_location_key key = { .file = string_id(defs, file), .line = line };
    uint32_t id = ADT_UNDEFINED_ID;
    int added = 0;
    if (key.file != ADT_UNDEFINED_ID)
        id = adt_intern_add(&defs->source_locations, &key, sizeof key, &added);
    if (added)
        adt_journal_source_location(&defs->journal, file, line);
    pthread_mutex_unlock(&defs->lock);
    return id;
}

static int reserve_comm(adt_defs *defs)
{
    if (defs->comms.count < defs->comm_capacity)
        return 0;
    uint32_t capacity = defs->comm_capacity ? defs->comm_capacity * 2 : 16;
    adt_comm_def *grown = realloc(defs->comm_defs, (size_t)capacity * sizeof *grown);
    if (!grown)
        return -1;
    defs->comm_defs = grown;
    defs->comm_capacity = capacity;
    return 0;
}

uint32_t adt_defs_comm(adt_defs *defs, const adt_comm_desc *comm)
{
    uint32_t size = comm->is_self ? 0 : comm->size;
    uint32_t remote_size = comm->is_self ? 0 : comm->remote_size;
    if ((size && !comm->members) || (remote_size && !comm->remote_members))
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    uint32_t id = ADT_UNDEFINED_ID;
    adt_comm_key key = { comm->creator_world_rank, comm->sequence };
    uint32_t existing = adt_intern_find(&defs->comms, &key, sizeof key);
    if (existing != ADT_UNDEFINED_ID) {
        id = existing;
        goto out;
    }
    if (comm->parent != ADT_UNDEFINED_ID && comm->parent >= defs->comms.count)
        goto out;
    uint32_t name = string_id(defs, comm->name ? comm->name : "");
    if (name == ADT_UNDEFINED_ID || reserve_comm(defs) != 0)
        goto out;
    uint32_t *members = malloc(((size_t)size + remote_size) * sizeof *members + 1);
    if (!members)
        goto out;
    if (size)
        memcpy(members, comm->members, (size_t)size * sizeof *members);
    if (remote_size)
        memcpy(members + size, comm->remote_members, (size_t)remote_size * sizeof *members);
    id = adt_intern_add(&defs->comms, &key, sizeof key, NULL);
    if (id == ADT_UNDEFINED_ID) {
        free(members);
        goto out;
    }
    defs->comm_defs[id] = (adt_comm_def){
        .name = name, .parent = comm->parent, .is_self = comm->is_self,
        .size = size, .remote_size = remote_size, .members = members,
    };
    adt_journal_comm(&defs->journal, comm);
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

int adt_defs_comm_set_name(adt_defs *defs, uint32_t comm, const char *name)
{
    int result = -1;
    pthread_mutex_lock(&defs->lock);
    if (comm < defs->comms.count) {
        uint32_t id = string_id(defs, name ? name : "");
        if (id != ADT_UNDEFINED_ID) {
            defs->comm_defs[comm].name = id;
            adt_journal_comm_name(&defs->journal, comm, name ? name : "");
            result = 0;
        }
    }
    pthread_mutex_unlock(&defs->lock);
    return result;
}

/* Room for one more entry in a per-id array of uint32_t (count used). */
static int reserve_u32(uint32_t **array, uint32_t *capacity, uint32_t count)
{
    if (count < *capacity)
        return 0;
    uint32_t grown_capacity = *capacity ? *capacity * 2 : 8;
    uint32_t *grown = realloc(*array, (size_t)grown_capacity * sizeof *grown);
    if (!grown)
        return -1;
    *array = grown;
    *capacity = grown_capacity;
    return 0;
}

uint32_t adt_defs_rma_win(adt_defs *defs, uint32_t creator_world_rank, uint32_t sequence, uint32_t comm)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = ADT_UNDEFINED_ID;
    adt_rma_win_key key = { creator_world_rank, sequence };
    if (comm >= defs->comms.count ||
        reserve_u32(&defs->rma_win_comms, &defs->rma_win_capacity, defs->rma_wins.count) != 0)
        goto out;
    int added;
    id = adt_intern_add(&defs->rma_wins, &key, sizeof key, &added);
    if (added) {
        defs->rma_win_comms[id] = comm;
        adt_journal_rma_win(&defs->journal, &key, comm);
    }
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

/* A definition that is a name alone (an I/O file, a parameter): its id in
 * table, defined and journaled (by journal_name) when new. */
static uint32_t named_definition(adt_defs *defs, adt_intern *table, const char *name,
                                 void (*journal_name)(adt_journal *journal, const char *name))
{
    if (!name)
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    uint32_t name_id = string_id(defs, name);
    uint32_t id = ADT_UNDEFINED_ID;
    int added = 0;
    if (name_id != ADT_UNDEFINED_ID)
        id = adt_intern_add(table, &name_id, sizeof name_id, &added);
    if (added)
        journal_name(&defs->journal, name);
    pthread_mutex_unlock(&defs->lock);
    return id;
}

uint32_t adt_defs_io_file(adt_defs *defs, const char *name)
{
    return named_definition(defs, &defs->io_files, name, adt_journal_io_file);
}

uint32_t adt_defs_parameter(adt_defs *defs, const char *name)
{
    return named_definition(defs, &defs->parameters, name, adt_journal_parameter);
}

uint32_t adt_defs_user_metric(adt_defs *defs, const char *name)
{
    if (!name)
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    uint32_t name_id = string_id(defs, name);
    uint32_t unit_id = string_id(defs, "");
    uint32_t id = ADT_UNDEFINED_ID;
    int added = 0;
    if (name_id != ADT_UNDEFINED_ID && unit_id != ADT_UNDEFINED_ID) {
        defs->user_metric_unit = unit_id;
        id = adt_intern_add(&defs->user_metrics, &name_id, sizeof name_id, &added);
    }
    if (added)
        adt_journal_user_metric(&defs->journal, name);
    pthread_mutex_unlock(&defs->lock);
    return id;
}

uint32_t adt_defs_io_handle(adt_defs *defs, uint32_t creator_world_rank, uint32_t sequence, uint32_t file,
                            uint32_t comm)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = ADT_UNDEFINED_ID;
    adt_io_handle_key key = { creator_world_rank, sequence, file, comm };
    if (file < defs->io_files.count && comm < defs->comms.count) {
        int added;
        id = adt_intern_add(&defs->io_handles, &key, sizeof key, &added);
        if (added)
            adt_journal_io_handle(&defs->journal, &key);
    }
    pthread_mutex_unlock(&defs->lock);
    return id;
}

uint32_t adt_defs_group(adt_defs *defs, const uint32_t *members, uint32_t size)
{
    if (!members || size == 0)
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    int added;
    uint32_t id = adt_intern_add(&defs->groups, members, (size_t)size * sizeof *members, &added);
    if (added)
        adt_journal_group(&defs->journal, members, size);
    pthread_mutex_unlock(&defs->lock);
    return id;
}

int adt_defs_adaptive_metrics(adt_defs *defs)
{
    pthread_mutex_lock(&defs->lock);
    if (!defs->adaptive_metrics) {
        defs->sampling_rate_name = string_id(defs, "sampling rate");
        defs->sampling_rate_unit = string_id(defs, "Hz");
        defs->buffer_use_name = string_id(defs, "buffer use");
        defs->buffer_use_unit = string_id(defs, "bytes");
        defs->adaptive_metrics =
            defs->sampling_rate_name != ADT_UNDEFINED_ID && defs->sampling_rate_unit != ADT_UNDEFINED_ID &&
            defs->buffer_use_name != ADT_UNDEFINED_ID && defs->buffer_use_unit != ADT_UNDEFINED_ID;
    }
    bool defined = defs->adaptive_metrics;
    pthread_mutex_unlock(&defs->lock);
    return defined ? 0 : -1;
}

uint32_t adt_defs_metric(adt_defs *defs, const char *name, const char *unit)
{
    if (!name)
        return ADT_UNDEFINED_ID;
    pthread_mutex_lock(&defs->lock);
    uint32_t id = ADT_UNDEFINED_ID;
    uint32_t name_id = string_id(defs, name);
    uint32_t unit_id = string_id(defs, unit ? unit : "#");
    if (name_id == ADT_UNDEFINED_ID || unit_id == ADT_UNDEFINED_ID ||
        reserve_u32(&defs->metric_units, &defs->metric_capacity, defs->metrics.count) != 0)
        goto out;
    int added;
    id = adt_intern_add(&defs->metrics, &name_id, sizeof name_id, &added);
    if (added) {
        defs->metric_units[id] = unit_id;
        adt_journal_metric(&defs->journal, name, unit ? unit : "#");
    }
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

int adt_defs_set_calling_contexts(adt_defs *defs, const adt_cc_node *nodes, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if ((nodes[i].parent != ADT_UNDEFINED_ID && nodes[i].parent >= i) || count >= ADT_UNDEFINED_ID)
            return -1;
    adt_cc_node *copy = NULL;
    if (count) {
        copy = malloc(count * sizeof *copy);
        if (!copy)
            return -1;
        memcpy(copy, nodes, count * sizeof *copy);
    }
    pthread_mutex_lock(&defs->lock);
    for (size_t i = 0; i < count; ++i) {
        bool region_known = copy[i].region < defs->regions.count;
        bool location_known = copy[i].source_location == ADT_UNDEFINED_ID ||
                              copy[i].source_location < defs->source_locations.count;
        if (!region_known || !location_known) {
            pthread_mutex_unlock(&defs->lock);
            free(copy);
            return -1;
        }
    }
    free(defs->calling_contexts);
    defs->calling_contexts = copy;
    defs->calling_context_count = count;
    pthread_mutex_unlock(&defs->lock);
    return 0;
}

const adt_cc_node *adt_defs_calling_contexts(adt_defs *defs, size_t *count)
{
    pthread_mutex_lock(&defs->lock);
    const adt_cc_node *nodes = defs->calling_contexts;
    *count = defs->calling_context_count;
    pthread_mutex_unlock(&defs->lock);
    return nodes;
}

bool adt_defs_comm_world_rank(adt_defs *defs, uint32_t comm, uint32_t comm_rank, uint32_t *world_rank,
                              uint64_t *comm_key)
{
    bool known = false;
    pthread_mutex_lock(&defs->lock);
    if (comm < defs->comms.count) {
        const adt_comm_def *def = &defs->comm_defs[comm];
        const adt_comm_key *key = adt_intern_key(&defs->comms, comm, NULL);
        *comm_key = (uint64_t)key->creator_world_rank << 32 | key->sequence;
        /* Point-to-point peers of an inter-communicator are remote ranks. */
        if (def->is_self && comm_rank == 0) {
            known = false;
        } else if (def->remote_size > 0 && comm_rank < def->remote_size) {
            *world_rank = def->members[def->size + comm_rank];
            known = true;
        } else if (def->remote_size == 0 && comm_rank < def->size) {
            *world_rank = def->members[comm_rank];
            known = true;
        }
    }
    pthread_mutex_unlock(&defs->lock);
    return known;
}
