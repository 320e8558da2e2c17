/*
 * The synthetic ranks of the unification benchmark and the union of a
 * block of them, merged rank by rank or built directly (see
 * synthetic_ranks.h). Benchmark set-up, normal context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthetic_ranks.h"

#define SHARED_FUNCTIONS 1200
#define MPI_FUNCTIONS 60
#define SOURCE_FILES 300
#define RANKS_PER_HOST 32
#define FIRST_OWN_LINE 100000u /* above every shared call site's line */

const adt_trace_thread synthetic_master_thread = { NULL, 0, "Master thread" };

static uint32_t shared_calling_contexts(const synthetic_shape *shape)
{
    return SYNTHETIC_CALLING_CONTEXTS - shape->own_calling_contexts;
}

/* Calling context i calls into function (i * 7) mod SHARED_FUNCTIONS. */
static uint32_t function_of(uint32_t calling_context)
{
    return (calling_context * 7u) % SHARED_FUNCTIONS;
}

static void source_file_of(uint32_t function, char *file, size_t size)
{
    snprintf(file, size, "src/cp2k_module_%u.F", function % SOURCE_FILES);
}

/* A tree of call paths: node i calls from node i / 4 (a few calls per
 * function), its line is the call site; the rank's own paths (code only
 * this rank ran) hang below the first shared nodes, at lines no other rank
 * has. */
static uint32_t line_of(const synthetic_shape *shape, uint32_t rank, uint32_t calling_context)
{
    uint32_t shared = shared_calling_contexts(shape);
    return calling_context < shared ? 10 + calling_context % 5000
                                    : FIRST_OWN_LINE + rank * shape->own_calling_contexts + (calling_context - shared);
}

static uint32_t parent_of(const synthetic_shape *shape, uint32_t calling_context)
{
    uint32_t shared = shared_calling_contexts(shape);
    if (calling_context == 0)
        return ADT_UNDEFINED_ID;
    return calling_context < shared ? calling_context / 4 : (calling_context - shared) % shared;
}

void synthetic_host_name(uint32_t rank, char *name, size_t size)
{
    snprintf(name, size, "node%04u", rank / RANKS_PER_HOST);
}

/* A process grid of about sqrt(P) × sqrt(P) (columns a power of two):
 * the first rank and size of rank's row and of its column. */
typedef struct grid_place {
    uint32_t columns;
    uint32_t row_first, row_size;
    uint32_t column_first, column_size;
} grid_place;

static grid_place place_in_grid(uint32_t rank, uint32_t rank_count)
{
    grid_place g = { 1, 0, 0, 0, 0 };
    while (g.columns * g.columns < rank_count)
        g.columns *= 2;
    g.row_first = rank / g.columns * g.columns;
    g.row_size = rank_count - g.row_first < g.columns ? rank_count - g.row_first : g.columns;
    g.column_first = rank % g.columns;
    g.column_size = (rank_count - g.column_first + g.columns - 1) / g.columns;
    return g;
}

static void row_members(const grid_place *g, uint32_t *members)
{
    for (uint32_t c = 0; c < g->row_size; ++c)
        members[c] = g->row_first + c;
}

static void column_members(const grid_place *g, uint32_t *members)
{
    for (uint32_t r = 0; r < g->column_size; ++r)
        members[r] = g->column_first + r * g->columns;
}

adt_defs *synthetic_rank_defs(const synthetic_shape *shape, uint32_t rank)
{
    uint32_t rank_count = shape->rank_count;
    grid_place g = place_in_grid(rank, rank_count);
    adt_defs *defs = adt_defs_create();
    uint32_t *world = malloc(rank_count * sizeof *world);
    uint32_t *row = malloc(g.row_size * sizeof *row);
    uint32_t *column = malloc(g.column_size * sizeof *column);
    adt_cc_node *nodes = malloc(SYNTHETIC_CALLING_CONTEXTS * sizeof *nodes);
    bool ok = defs && world && row && column && nodes;
    char name[64], file[64];
    uint32_t regions[SHARED_FUNCTIONS];
    for (uint32_t f = 0; ok && f < MPI_FUNCTIONS; ++f) {
        snprintf(name, sizeof name, "MPI_Function_%u", f);
        adt_defs_region(defs, name, NULL, ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, NULL, 0, 0);
    }
    for (uint32_t f = 0; ok && f < SHARED_FUNCTIONS; ++f) {
        snprintf(name, sizeof name, "__cp2k_module_%u_MOD_routine_%u", f % SOURCE_FILES, f);
        source_file_of(f, file, sizeof file);
        regions[f] = adt_defs_region(defs, name, NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, file, 0, 0);
    }
    for (uint32_t i = 0; ok && i < SYNTHETIC_CALLING_CONTEXTS; ++i) {
        source_file_of(function_of(i), file, sizeof file);
        nodes[i] = (adt_cc_node){ regions[function_of(i)],
                                  adt_defs_source_location(defs, file, line_of(shape, rank, i)),
                                  parent_of(shape, i) };
    }
    if (ok) {
        for (uint32_t r = 0; r < rank_count; ++r)
            world[r] = r;
        row_members(&g, row);
        column_members(&g, column);
        /* comm ids 0 .. 4; the row and the column are split from
         * cp2k_para_env (comm 2) */
        adt_comm_desc comms[] = {
            { 0, 0, "MPI_COMM_WORLD", world, rank_count, NULL, 0, ADT_UNDEFINED_ID, false },
            { rank, 1, "MPI_COMM_SELF", NULL, 0, NULL, 0, ADT_UNDEFINED_ID, true },
            { 0, 2, "cp2k_para_env", world, rank_count, NULL, 0, 0, false },
            { g.row_first, 3, "cp2k_grid_row", row, g.row_size, NULL, 0, 2, false },
            { g.column_first, 4, "cp2k_grid_column", column, g.column_size, NULL, 0, 2, false },
        };
        for (size_t c = 0; c < sizeof comms / sizeof comms[0]; ++c)
            ok &= adt_defs_comm(defs, &comms[c]) != ADT_UNDEFINED_ID;
        ok = ok && adt_defs_set_calling_contexts(defs, nodes, SYNTHETIC_CALLING_CONTEXTS) == 0;
    }
    free(world);
    free(row);
    free(column);
    free(nodes);
    if (!ok && defs) {
        adt_defs_destroy(defs);
        defs = NULL;
    }
    return defs;
}

bool synthetic_rank_bytes(const synthetic_shape *shape, uint32_t rank, adt_blob *out)
{
    adt_defs *defs = synthetic_rank_defs(shape, rank);
    if (!defs)
        return false;
    char host[32];
    synthetic_host_name(rank, host, sizeof host);
    uint32_t *group_entries;
    adt_unify_serialize(defs, host, &synthetic_master_thread, 1, out, &group_entries);
    free(group_entries);
    adt_defs_destroy(defs);
    return !out->failed;
}

static bool merge_bytes(adt_global_defs *set, const adt_blob *blob, adt_class_maps *maps)
{
    adt_cursor in = { .data = blob->data, .size = blob->size };
    return adt_set_merge(set, &in, maps) == 0;
}

bool synthetic_union_merged(const synthetic_shape *shape, uint32_t first, uint32_t count, adt_blob *out)
{
    adt_global_defs set = { 0 };
    bool ok = true;
    for (uint32_t rank = first; ok && rank < first + count; ++rank) {
        adt_blob bytes = { 0 };
        adt_class_maps maps = { 0 };
        ok = synthetic_rank_bytes(shape, rank, &bytes) && merge_bytes(&set, &bytes, &maps);
        adt_class_maps_free(&maps);
        adt_blob_free(&bytes);
    }
    if (ok)
        adt_set_serialize(&set, out);
    adt_global_defs_free(&set);
    return ok && !out->failed;
}

/* ---- the union built directly --------------------------------------------- */

static uint32_t string_id(const adt_global_defs *set, const char *text)
{
    return adt_intern_find(&set->strings, text, strlen(text));
}

/* Interns a communicator with its side record, as adt_set_merge would. */
static bool add_comm(adt_global_defs *set, adt_comm_key key, adt_global_comm info)
{
    int added;
    uint32_t id = adt_intern_add(&set->comms, &key, sizeof key, &added);
    if (id == ADT_UNDEFINED_ID)
        return false;
    if (!added)
        return true;
    adt_global_comm *grown = realloc(set->comm_info, set->comms.count * sizeof *grown);
    if (!grown)
        return false;
    set->comm_info = grown;
    grown[id] = info;
    return true;
}

/* A grid communicator split from cp2k_para_env, over members. */
static bool add_grid_comm(adt_global_defs *set, uint32_t creator, uint32_t sequence, const char *name,
                          const uint32_t *members, uint32_t size)
{
    uint32_t group = adt_intern_add(&set->groups, members, size * sizeof *members, NULL);
    adt_comm_key para_env = { 0, 2 };
    uint32_t parent = adt_intern_find(&set->comms, &para_env, sizeof para_env);
    return group != ADT_UNDEFINED_ID &&
           add_comm(set, (adt_comm_key){ creator, sequence },
                    (adt_global_comm){ string_id(set, name), parent, 1 + group, ADT_UNDEFINED_ID });
}

/* Appends what rank adds to a set that already holds a rank of the same
 * shape, in the order adt_set_merge would meet it: its host name, its own
 * source locations, its row's and column's groups, its MPI_COMM_SELF, row
 * and column, its own calling contexts, its host, its rank record. Every
 * other definition of rank is the same as that of the first rank, whose
 * merge maps translate its local ids. */
static bool add_rank(adt_global_defs *set, const adt_class_maps *first_maps, const synthetic_shape *shape,
                     uint32_t rank)
{
    char host[32], file[64];
    synthetic_host_name(rank, host, sizeof host);
    uint32_t host_name = adt_intern_add(&set->strings, host, strlen(host), NULL);
    uint32_t shared = shared_calling_contexts(shape), own = shape->own_calling_contexts;
    uint32_t first_own_location = set->source_locations.count;
    for (uint32_t i = shared; i < SYNTHETIC_CALLING_CONTEXTS; ++i) {
        source_file_of(function_of(i), file, sizeof file);
        adt_source_location_key key = { string_id(set, file), line_of(shape, rank, i) };
        if (adt_intern_add(&set->source_locations, &key, sizeof key, NULL) == ADT_UNDEFINED_ID)
            return false;
    }
    grid_place g = place_in_grid(rank, shape->rank_count);
    uint32_t *row = malloc(g.row_size * sizeof *row), *column = malloc(g.column_size * sizeof *column);
    bool ok = row && column && host_name != ADT_UNDEFINED_ID;
    if (ok) {
        row_members(&g, row);
        column_members(&g, column);
        /* the groups first (class order), then the communicators */
        ok = adt_intern_add(&set->groups, row, g.row_size * sizeof *row, NULL) != ADT_UNDEFINED_ID &&
             adt_intern_add(&set->groups, column, g.column_size * sizeof *column, NULL) != ADT_UNDEFINED_ID;
        ok = ok && add_comm(set, (adt_comm_key){ rank, 1 },
                            (adt_global_comm){ string_id(set, "MPI_COMM_SELF"), ADT_UNDEFINED_ID, ADT_UNDEFINED_ID,
                                               ADT_UNDEFINED_ID });
        ok = ok && add_grid_comm(set, g.row_first, 3, "cp2k_grid_row", row, g.row_size);
        ok = ok && add_grid_comm(set, g.column_first, 4, "cp2k_grid_column", column, g.column_size);
    }
    free(row);
    free(column);
    const uint32_t *region = first_maps->map[ADT_DEF_REGION];
    const uint32_t *calling_context = first_maps->map[ADT_DEF_CALLING_CONTEXT];
    /* an own line is no other rank's: each own source location was new */
    for (uint32_t k = 0; ok && k < own; ++k) {
        uint32_t i = shared + k;
        adt_cc_node node = { region[MPI_FUNCTIONS + function_of(i)], first_own_location + k,
                             calling_context[parent_of(shape, i)] };
        ok = adt_intern_add(&set->calling_contexts, &node, sizeof node, NULL) != ADT_UNDEFINED_ID;
    }
    uint32_t host_id = ok ? adt_intern_add(&set->hosts, &host_name, sizeof host_name, NULL) : ADT_UNDEFINED_ID;
    if (host_id == ADT_UNDEFINED_ID)
        return false;
    uint32_t r = set->rank_count++;
    size_t thread = set->rank_first_thread[r];
    set->rank_host[r] = host_id;
    set->threads[thread] = (adt_global_thread){ synthetic_master_thread.thread_index,
                                                string_id(set, synthetic_master_thread.name) };
    set->rank_first_thread[r + 1] = thread + 1;
    return true;
}

/* Room for count ranks of one thread each. */
static bool reserve_ranks(adt_global_defs *set, uint32_t count)
{
    uint32_t *hosts = realloc(set->rank_host, count * sizeof *hosts);
    if (hosts)
        set->rank_host = hosts;
    size_t *first_thread = realloc(set->rank_first_thread, (count + 1) * sizeof *first_thread);
    if (first_thread)
        set->rank_first_thread = first_thread;
    adt_global_thread *threads = realloc(set->threads, count * sizeof *threads);
    if (threads)
        set->threads = threads;
    return hosts && first_thread && threads;
}

bool synthetic_union_direct(const synthetic_shape *shape, uint32_t first, uint32_t count, adt_blob *out)
{
    adt_global_defs set = { 0 };
    adt_blob first_bytes = { 0 };
    adt_class_maps first_maps = { 0 };
    bool ok = synthetic_rank_bytes(shape, first, &first_bytes) && merge_bytes(&set, &first_bytes, &first_maps);
    adt_blob_free(&first_bytes);
    ok = ok && reserve_ranks(&set, count);
    for (uint32_t rank = first + 1; ok && rank < first + count; ++rank)
        ok = add_rank(&set, &first_maps, shape, rank);
    if (ok)
        adt_set_serialize(&set, out);
    adt_class_maps_free(&first_maps);
    adt_global_defs_free(&set);
    return ok && !out->failed;
}
