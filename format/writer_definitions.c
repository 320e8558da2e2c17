/*
 * The end-of-run writer's definitions: every location's local definition
 * file (clock offsets, the interrupt-generator mapping), the gather of the
 * per-location summaries on rank 0, and rank 0's global definitions.
 * End of run, normal context.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/writer_internal.h"

/* ---- local definition files ----------------------------------------------- */

int adt_writer_write_local_definitions(writer *w, const location_summary *summary)
{
    uint64_t id = adt_writer_location_id(w->collectives->rank, summary->thread_index);
    OTF2_DefWriter *out = OTF2_Archive_GetDefWriter(w->archive, id);
    if (!out) {
        adt_writer_otf2_error(w, "opening a local definition writer", OTF2_ERROR_INVALID);
        return -1;
    }
    OTF2_ErrorCode status = OTF2_SUCCESS;
    if (summary->rate_shifts) {
        uint32_t map[RATE_SHIFTS];
        uint32_t length = 64 - (uint32_t)__builtin_clzll(summary->rate_shifts);
        for (uint32_t k = 0; k < length; ++k)
            map[k] = (uint32_t)__builtin_popcountll(w->rate_shift_union & ((1ull << k) - 1));
        OTF2_IdMap *id_map = OTF2_IdMap_CreateFromUint32Array(length, map, false);
        status = id_map ? OTF2_DefWriter_WriteMappingTable(out, OTF2_MAPPING_INTERRUPT_GENERATOR, id_map)
                        : OTF2_ERROR_MEM_ALLOC_FAILED;
        if (id_map)
            OTF2_IdMap_Free(id_map);
    }
    for (int i = 0; i < 2 && status == OTF2_SUCCESS && adt_writer_has_clock_offsets(w->input); ++i) {
        const adt_clock_offset *o = &w->input->clock_offsets[i];
        /* OTF2 refuses two synchronisation points at one time. */
        if (i == 1 && o->local_time == w->input->clock_offsets[0].local_time)
            break;
        status = OTF2_DefWriter_WriteClockOffset(out, o->local_time, o->offset, o->stddev);
    }
    if (!adt_writer_otf2_failed()) {
        OTF2_ErrorCode closed = OTF2_Archive_CloseDefWriter(w->archive, out);
        if (status == OTF2_SUCCESS)
            status = closed;
    }
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "writing a local definition file", status);
        return -1;
    }
    return 0;
}

/* ---- global definitions (rank 0) ----------------------------------------- */

typedef struct global_strings {
    uint32_t empty, mpi, sampling, machine_class, node_class, machine;
    uint32_t mpi_io, mpi_io_name;  /* the I/O paradigm's, when one is written */
    uint32_t *rank_names;
    uint32_t *generator_names;
} global_strings;

static int intern_writer_strings(writer *w, global_strings *s)
{
    adt_global_defs *g = &w->global;
    char text[64];
    s->empty = adt_global_string(g, "");
    s->mpi = adt_global_string(g, "MPI");
    s->sampling = adt_global_string(g, "Sampling");
    s->machine_class = adt_global_string(g, "machine");
    s->node_class = adt_global_string(g, "node");
    s->machine = adt_global_string(g, "adaptrace machine");
    if (g->io_files.count) {
        s->mpi_io = adt_global_string(g, "MPI-IO");
        s->mpi_io_name = adt_global_string(g, "MPI I/O");
    }
    s->rank_names = malloc(((size_t)g->rank_count + 1) * sizeof *s->rank_names);
    s->generator_names = malloc(RATE_SHIFTS * sizeof *s->generator_names);
    if (!s->rank_names || !s->generator_names)
        return -1;
    bool ok = s->empty != ADT_UNDEFINED_ID && s->machine != ADT_UNDEFINED_ID;
    ok &= !g->io_files.count || (s->mpi_io != ADT_UNDEFINED_ID && s->mpi_io_name != ADT_UNDEFINED_ID);
    for (uint32_t r = 0; r < g->rank_count; ++r) {
        snprintf(text, sizeof text, "MPI Rank %u", r);
        s->rank_names[r] = adt_global_string(g, text);
        ok &= s->rank_names[r] != ADT_UNDEFINED_ID;
    }
    for (uint32_t k = 0; k < RATE_SHIFTS; ++k) {
        if (!(w->rate_shift_union >> k & 1))
            continue;
        snprintf(text, sizeof text, "timer %g us", ldexp(1e6 / w->input->initial_rate_hz, (int)k));
        s->generator_names[k] = adt_global_string(g, text);
        ok &= s->generator_names[k] != ADT_UNDEFINED_ID;
    }
    return ok ? 0 : -1;
}

/* The global definition writer and what its steps share. */
typedef struct global_output {
    OTF2_GlobalDefWriter *out;
    const writer *w;
    const adt_global_defs *g;
    const global_strings *names;
    uint64_t *members; /* room for the largest group */
} global_output;

#define TRY(call)                               \
    do {                                        \
        OTF2_ErrorCode status_ = (call);        \
        if (status_ != OTF2_SUCCESS)            \
            return status_;                     \
    } while (0)

/* The time range of every location's events, in corrected time. */
static OTF2_ErrorCode write_clock_properties(const global_output *o, const location_summary *summaries,
                                             size_t location_total)
{
    uint64_t begin = UINT64_MAX, end = 0;
    for (size_t i = 0; i < location_total; ++i) {
        if (!summaries[i].has_events)
            continue;
        begin = summaries[i].first_time < begin ? summaries[i].first_time : begin;
        end = summaries[i].last_time > end ? summaries[i].last_time : end;
    }
    if (begin > end)
        begin = end = 0;
    uint64_t resolution = o->w->input->timer_resolution ? o->w->input->timer_resolution : 1000000000ull;
    return OTF2_GlobalDefWriter_WriteClockProperties(o->out, resolution, begin, end - begin,
                                                     OTF2_UNDEFINED_TIMESTAMP);
}

static OTF2_ErrorCode write_strings_and_paradigms(const global_output *o)
{
    const adt_global_defs *g = o->g;
    for (uint32_t i = 0; i < g->strings.count; ++i) {
        size_t size;
        const char *bytes = adt_intern_key(&g->strings, i, &size);
        char *text = strndup(bytes, size);
        OTF2_ErrorCode status = text ? OTF2_GlobalDefWriter_WriteString(o->out, i, text) : OTF2_ERROR_MEM_ALLOC_FAILED;
        free(text);
        TRY(status);
    }
    TRY(OTF2_GlobalDefWriter_WriteParadigm(o->out, OTF2_PARADIGM_MPI, o->names->mpi, OTF2_PARADIGM_CLASS_PROCESS));
    if (o->w->input->calling_context_style || o->w->rate_shift_union)
        TRY(OTF2_GlobalDefWriter_WriteParadigm(o->out, OTF2_PARADIGM_SAMPLING, o->names->sampling,
                                               OTF2_PARADIGM_CLASS_PROCESS));
    return OTF2_SUCCESS;
}

/* The machine, one node per host, one location group per rank and one
 * location per thread. */
static OTF2_ErrorCode write_system_tree(const global_output *o, const location_summary *summaries,
                                        const uint64_t *first_summary)
{
    const adt_global_defs *g = o->g;
    const global_strings *names = o->names;
    TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(o->out, 0, names->machine, names->machine_class,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    TRY(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(o->out, 0, OTF2_SYSTEM_TREE_DOMAIN_MACHINE));
    for (uint32_t h = 0; h < g->hosts.count; ++h) {
        uint32_t host_name = *(const uint32_t *)adt_intern_key(&g->hosts, h, NULL);
        TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(o->out, 1 + h, host_name, names->node_class, 0));
        TRY(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(o->out, 1 + h, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY));
    }
    for (uint32_t r = 0; r < g->rank_count; ++r)
        TRY(OTF2_GlobalDefWriter_WriteLocationGroup(o->out, r, names->rank_names[r], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                    1 + g->rank_host[r], OTF2_UNDEFINED_LOCATION_GROUP));
    for (uint32_t r = 0; r < g->rank_count; ++r) {
        for (size_t i = first_summary[r]; i < first_summary[r + 1]; ++i) {
            const adt_global_thread *thread = &g->threads[g->rank_first_thread[r] + (i - first_summary[r])];
            TRY(OTF2_GlobalDefWriter_WriteLocation(o->out, adt_writer_location_id(r, summaries[i].thread_index),
                                                   thread->name, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   summaries[i].events, r));
        }
    }
    return OTF2_SUCCESS;
}

/* The user API's phases are its USER CODE regions (format.h). */
static OTF2_RegionFlag region_flags(uint32_t role, uint32_t paradigm)
{
    return role == ADT_ROLE_CODE && paradigm == ADT_PARADIGM_USER ? OTF2_REGION_FLAG_PHASE : OTF2_REGION_FLAG_NONE;
}

static OTF2_ErrorCode write_regions(const global_output *o)
{
    const adt_global_defs *g = o->g;
    for (uint32_t i = 0; i < g->regions.count; ++i) {
        const adt_region_key *k = adt_intern_key(&g->regions, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteRegion(o->out, i, k->name, k->canonical_name, o->names->empty,
                                             (OTF2_RegionRole)k->role, (OTF2_Paradigm)k->paradigm,
                                             region_flags(k->role, k->paradigm), k->source_file, k->begin_line,
                                             k->end_line));
    }
    return OTF2_SUCCESS;
}

/* The groups (COMM_LOCATIONS, every COMM_GROUP, COMM_SELF when used) and
 * the communicators on them. */
static OTF2_ErrorCode write_groups_and_comms(const global_output *o)
{
    const adt_global_defs *g = o->g;
    uint32_t empty = o->names->empty;
    uint64_t *members = o->members;
    /* member i of COMM_LOCATIONS: the location doing MPI for world rank i */
    for (uint32_t r = 0; r < g->rank_count; ++r)
        members[r] = adt_writer_location_id(r, 0);
    TRY(OTF2_GlobalDefWriter_WriteGroup(o->out, ADT_GROUP_COMM_LOCATIONS, empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, g->rank_count, members));
    for (uint32_t i = 0; i < g->groups.count; ++i) {
        size_t bytes;
        const uint32_t *ranks = adt_intern_key(&g->groups, i, &bytes);
        uint32_t count = (uint32_t)(bytes / sizeof *ranks);
        for (uint32_t m = 0; m < count; ++m)
            members[m] = ranks[m];
        TRY(OTF2_GlobalDefWriter_WriteGroup(o->out, 1 + i, empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, count, members));
    }
    if (g->self_group_used)
        TRY(OTF2_GlobalDefWriter_WriteGroup(o->out, 1 + g->groups.count, empty, OTF2_GROUP_TYPE_COMM_SELF,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, members));
    for (uint32_t i = 0; i < g->comms.count; ++i) {
        const adt_global_comm *c = &g->comm_info[i];
        if (c->remote_group == ADT_UNDEFINED_ID)
            TRY(OTF2_GlobalDefWriter_WriteComm(o->out, i, c->name, c->group, c->parent, OTF2_COMM_FLAG_NONE));
        else
            TRY(OTF2_GlobalDefWriter_WriteInterComm(o->out, i, c->name, c->group, c->remote_group, c->parent,
                                                    OTF2_COMM_FLAG_NONE));
    }
    return OTF2_SUCCESS;
}

static OTF2_ErrorCode write_rma_windows_and_io(const global_output *o)
{
    const adt_global_defs *g = o->g;
    /* RmaWinCreate/RmaWinDestroy events bound each window's life, as in
     * Score-P's traces. */
    for (uint32_t i = 0; i < g->rma_wins.count; ++i)
        TRY(OTF2_GlobalDefWriter_WriteRmaWin(o->out, i, o->names->empty, g->rma_win_comm[i],
                                             OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS));
    /* As Score-P's MPI-IO adapter: one parallel paradigm without
     * properties; files are global (scope: the machine); a handle is named
     * after its file and scoped by the communicator that opened it. */
    if (g->io_files.count)
        TRY(OTF2_GlobalDefWriter_WriteIoParadigm(o->out, IO_PARADIGM_MPI, o->names->mpi_io, o->names->mpi_io_name,
                                                 OTF2_IO_PARADIGM_CLASS_PARALLEL, OTF2_IO_PARADIGM_FLAG_NONE, 0,
                                                 NULL, NULL, NULL));
    for (uint32_t i = 0; i < g->io_files.count; ++i)
        TRY(OTF2_GlobalDefWriter_WriteIoRegularFile(o->out, i,
                                                    *(const uint32_t *)adt_intern_key(&g->io_files, i, NULL), 0));
    for (uint32_t i = 0; i < g->io_handles.count; ++i) {
        const adt_io_handle_key *k = adt_intern_key(&g->io_handles, i, NULL);
        uint32_t name = *(const uint32_t *)adt_intern_key(&g->io_files, k->file, NULL);
        TRY(OTF2_GlobalDefWriter_WriteIoHandle(o->out, i, name, k->file, IO_PARADIGM_MPI, OTF2_IO_HANDLE_FLAG_NONE,
                                               k->comm, OTF2_UNDEFINED_IO_HANDLE));
    }
    return OTF2_SUCCESS;
}

/* The user API's parameters: integers, as Score-P's INT64 user parameters
 * (their values are ParameterInt events). */
static OTF2_ErrorCode write_parameters(const global_output *o)
{
    const adt_global_defs *g = o->g;
    for (uint32_t i = 0; i < g->parameters.count; ++i)
        TRY(OTF2_GlobalDefWriter_WriteParameter(o->out, i, *(const uint32_t *)adt_intern_key(&g->parameters, i, NULL),
                                                OTF2_PARAMETER_TYPE_INT64));
    return OTF2_SUCCESS;
}

/* Counters (Score-P's way, docs/otf2-format.md 5.6): PAPI, accumulated
 * since the start, UINT64. The sampling rate (docs/otf2-records.md): a
 * value that holds from its event until the next one (ABSOLUTE_NEXT), a
 * DOUBLE in Hz, since initial / 2^k is exact in binary floating point.
 * The buffer use: bytes in use at the event's time only (ABSOLUTE_POINT:
 * nothing is known between two values), UINT64. The user API's metrics:
 * USER (Score-P's user metrics), a DOUBLE at its event's time only. */
static OTF2_ErrorCode write_metric_member(const global_output *o, uint32_t id)
{
    const adt_global_defs *g = o->g;
    uint32_t name = *(const uint32_t *)adt_intern_key(&g->metrics, id, NULL);
    const adt_metric_side *side = &g->metric_sides[id];
    if (side->kind == ADT_METRIC_SAMPLING_RATE)
        return OTF2_GlobalDefWriter_WriteMetricMember(o->out, id, name, o->names->empty, OTF2_METRIC_TYPE_OTHER,
                                                      OTF2_METRIC_ABSOLUTE_NEXT, OTF2_TYPE_DOUBLE,
                                                      OTF2_BASE_DECIMAL, 0, side->unit);
    if (side->kind == ADT_METRIC_USER_DOUBLE)
        return OTF2_GlobalDefWriter_WriteMetricMember(o->out, id, name, o->names->empty, OTF2_METRIC_TYPE_USER,
                                                      OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE,
                                                      OTF2_BASE_DECIMAL, 0, side->unit);
    if (side->kind == ADT_METRIC_BUFFER_USE)
        return OTF2_GlobalDefWriter_WriteMetricMember(o->out, id, name, o->names->empty, OTF2_METRIC_TYPE_OTHER,
                                                      OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64,
                                                      OTF2_BASE_DECIMAL, 0, side->unit);
    return OTF2_GlobalDefWriter_WriteMetricMember(o->out, id, name, o->names->empty, OTF2_METRIC_TYPE_PAPI,
                                                  OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL,
                                                  0, side->unit);
}

static OTF2_ErrorCode write_metrics(const global_output *o)
{
    const adt_global_defs *g = o->g;
    for (uint32_t i = 0; i < g->metrics.count; ++i)
        TRY(write_metric_member(o, i));
    /* Counters are read at samples, the rate and the buffer use change at
     * halvings, the user metrics when the program says, not at region
     * boundaries: all asynchronous. Only the counters are recorded by
     * hardware; the others are abstract. */
    for (uint32_t i = 0; i < g->metric_classes.count; ++i) {
        size_t bytes;
        const uint32_t *member_ids = adt_intern_key(&g->metric_classes, i, &bytes);
        bool counters = g->metric_sides[member_ids[0]].kind == ADT_METRIC_COUNTER;
        TRY(OTF2_GlobalDefWriter_WriteMetricClass(o->out, i, (uint8_t)(bytes / sizeof *member_ids), member_ids,
                                                  OTF2_METRIC_ASYNCHRONOUS,
                                                  counters ? OTF2_RECORDER_KIND_CPU : OTF2_RECORDER_KIND_ABSTRACT));
    }
    return OTF2_SUCCESS;
}

/* Source code locations, the calling-context tree and one interrupt
 * generator per sampling period in use. */
static OTF2_ErrorCode write_calling_contexts(const global_output *o)
{
    const adt_global_defs *g = o->g;
    for (uint32_t i = 0; i < g->source_locations.count; ++i) {
        const adt_source_location_key *k = adt_intern_key(&g->source_locations, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteSourceCodeLocation(o->out, i, k->file, k->line));
    }
    for (uint32_t i = 0; i < g->calling_contexts.count; ++i) {
        const adt_cc_node *node = adt_intern_key(&g->calling_contexts, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteCallingContext(o->out, i, node->region, node->source_location, node->parent));
    }
    uint32_t generator = 0;
    for (uint32_t k = 0; k < RATE_SHIFTS; ++k) {
        if (!(o->w->rate_shift_union >> k & 1))
            continue;
        uint64_t period_us = (uint64_t)llround(ldexp(1e6 / o->w->input->initial_rate_hz, (int)k));
        TRY(OTF2_GlobalDefWriter_WriteInterruptGenerator(o->out, generator++, o->names->generator_names[k],
                                                         OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL,
                                                         -6, period_us));
    }
    return OTF2_SUCCESS;
}

/* Room for the members of the largest group (COMM_LOCATIONS has every
 * rank), as OTF2 wants them: 64-bit. */
static uint64_t *group_member_buffer(const adt_global_defs *g)
{
    size_t most_members = g->rank_count;
    for (uint32_t i = 0; i < g->groups.count; ++i) {
        size_t bytes;
        adt_intern_key(&g->groups, i, &bytes);
        if (bytes / sizeof(uint32_t) > most_members)
            most_members = bytes / sizeof(uint32_t);
    }
    return malloc((most_members + 1) * sizeof(uint64_t));
}

int adt_writer_write_global_definitions(writer *w, const location_summary *summaries,
                                        const uint64_t *first_summary)
{
    global_strings names = { 0 };
    uint64_t *members = group_member_buffer(&w->global);
    OTF2_GlobalDefWriter *out = OTF2_Archive_GetGlobalDefWriter(w->archive);
    OTF2_ErrorCode status = OTF2_ERROR_MEM_ALLOC_FAILED;
    if (out && members && intern_writer_strings(w, &names) == 0) {
        global_output o = { .out = out, .w = w, .g = &w->global, .names = &names, .members = members };
        status = write_clock_properties(&o, summaries, first_summary[w->global.rank_count]);
        if (status == OTF2_SUCCESS)
            status = write_strings_and_paradigms(&o);
        if (status == OTF2_SUCCESS)
            status = write_system_tree(&o, summaries, first_summary);
        if (status == OTF2_SUCCESS)
            status = write_regions(&o);
        if (status == OTF2_SUCCESS)
            status = write_groups_and_comms(&o);
        if (status == OTF2_SUCCESS)
            status = write_rma_windows_and_io(&o);
        if (status == OTF2_SUCCESS)
            status = write_parameters(&o);
        if (status == OTF2_SUCCESS)
            status = write_metrics(&o);
        if (status == OTF2_SUCCESS)
            status = write_calling_contexts(&o);
    }
    free(names.rank_names);
    free(names.generator_names);
    free(members);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "writing the global definitions", status);
        return -1;
    }
    return 0;
}

/* ---- summaries --------------------------------------------------------------- */

/* Gathers every rank's summaries on rank 0 (rank 0: *all and *first, where
 * rank r's locations are (*all)[(*first)[r] .. (*first)[r + 1])). */
int adt_writer_gather_summaries(writer *w, const location_summary *mine, size_t count,
                            location_summary **all, uint64_t **first)
{
    const adt_collectives *c = w->collectives;
    bool root = c->rank == 0;
    uint64_t my_count = count;
    size_t *byte_counts = NULL;
    uint64_t *counts = NULL;
    int rc = -1;
    bool ok = true;
    if (root) {
        byte_counts = malloc(c->size * sizeof *byte_counts);
        counts = malloc(c->size * sizeof *counts);
        *first = malloc(((size_t)c->size + 1) * sizeof **first);
        ok = byte_counts && counts && *first;
        for (uint32_t r = 0; ok && r < c->size; ++r)
            byte_counts[r] = sizeof(uint64_t);
    }
    if (adt_agree(c, ok) != 0)
        goto out;
    if (c->gatherv(c->context, &my_count, sizeof my_count, counts, byte_counts, 0) != 0)
        goto out;
    if (root) {
        (*first)[0] = 0;
        for (uint32_t r = 0; r < c->size; ++r) {
            (*first)[r + 1] = (*first)[r] + counts[r];
            byte_counts[r] = (size_t)counts[r] * sizeof(location_summary);
        }
        *all = malloc((size_t)(*first)[c->size] * sizeof **all + 1);
        ok = *all != NULL;
    }
    if (adt_agree(c, ok) != 0)
        goto out;
    if (c->gatherv(c->context, mine, count * sizeof *mine, root ? *all : NULL, byte_counts, 0) != 0)
        goto out;
    rc = 0;
out:
    free(byte_counts);
    free(counts);
    return rc;
}
