/* The tree unification (format/unify.c) among threads standing for ranks,
 * against the flat merge it replaces: every rank's definitions merged in
 * rank order into one set, as rank 0 alone did. In C because it reads the
 * format module's internal layouts; unify_test.cpp asserts on what it
 * reports. */
#include "unify_tree_check.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/unify.h"

#define SHARED_FUNCTIONS 40
#define SHARED_CONTEXTS 120
#define OWN_CONTEXTS 7
#define RANKS_PER_HOST 4

/* Rank r's definitions: shared functions and call paths, a few of its own
 * (own source lines, own region, registered first on odd ranks so that
 * local ids differ), world/self/parity communicators, an RMA window and
 * I/O on the parity communicator, a group, and metrics that differ
 * between ranks (two metric classes). */
static adt_defs *define_rank(uint32_t rank, uint32_t ranks)
{
    adt_defs *defs = adt_defs_create();
    uint32_t *world = malloc(ranks * sizeof *world), *parity = malloc(ranks * sizeof *parity);
    uint32_t parity_size = 0;
    for (uint32_t r = 0; r < ranks; ++r) {
        world[r] = r;
        if (r % 2 == rank % 2)
            parity[parity_size++] = r;
    }
    char own[64], name[64];
    snprintf(own, sizeof own, "own_function_of_rank_%u", rank);
    if (rank % 2)
        adt_defs_region(defs, own, NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, "own.c", 1, 2);
    uint32_t regions[SHARED_FUNCTIONS];
    for (uint32_t f = 0; f < SHARED_FUNCTIONS; ++f) {
        snprintf(name, sizeof name, "shared_function_%u", f);
        regions[f] = adt_defs_region(defs, name, NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, "shared.c", f, f + 1);
    }
    uint32_t own_region = adt_defs_region(defs, own, NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, "own.c", 1, 2);
    adt_comm_desc comms[] = {
        { 0, 0, "MPI_COMM_WORLD", world, ranks, NULL, 0, ADT_UNDEFINED_ID, false },
        { rank, 1, "MPI_COMM_SELF", NULL, 0, NULL, 0, ADT_UNDEFINED_ID, true },
        { rank % 2, 2, rank % 2 ? "odd" : "even", parity, parity_size, NULL, 0, 0, false },
    };
    for (size_t c = 0; c < sizeof comms / sizeof comms[0]; ++c)
        adt_defs_comm(defs, &comms[c]);
    adt_defs_rma_win(defs, rank % 2, 3, 2);
    uint32_t file = adt_defs_io_file(defs, rank % 2 ? "odd.dat" : "even.dat");
    adt_defs_io_handle(defs, rank % 2, 4, file, 2);
    uint32_t pair[] = { rank, (rank + 1) % ranks };
    adt_defs_group(defs, pair, 2);
    adt_defs_metric(defs, "PAPI_TOT_CYC", "cycles");
    if (rank % 3 == 0)
        adt_defs_metric(defs, "PAPI_L1_DCM", "misses");
    adt_cc_node nodes[SHARED_CONTEXTS + OWN_CONTEXTS];
    for (uint32_t i = 0; i < SHARED_CONTEXTS; ++i)
        nodes[i] = (adt_cc_node){ regions[i % SHARED_FUNCTIONS], adt_defs_source_location(defs, "shared.c", 100 + i),
                                  i == 0 ? ADT_UNDEFINED_ID : i / 3 };
    for (uint32_t i = 0; i < OWN_CONTEXTS; ++i)
        nodes[SHARED_CONTEXTS + i] =
            (adt_cc_node){ own_region, adt_defs_source_location(defs, "own.c", 1000 * (rank + 1) + i), i * 11 };
    adt_defs_set_calling_contexts(defs, nodes, SHARED_CONTEXTS + OWN_CONTEXTS);
    free(world);
    free(parity);
    return defs;
}

static void host_of(uint32_t rank, char *host, size_t size)
{
    snprintf(host, size, "node%u", rank / RANKS_PER_HOST);
}

static const adt_trace_thread threads_of_a_rank[] = { { NULL, 0, "Master thread" }, { NULL, 2, "Pthread 2" } };

typedef struct rank_run {
    adt_thread_group *group;
    uint32_t garbling_rank;   /* garbles what it receives first from its first child; UINT32_MAX: none */
    uint32_t rank;
    adt_defs *defs;
    adt_id_maps maps;
    adt_global_defs global; /* rank 0 */
    int rc;
    char error[256];
} rank_run;

/* A rank's collectives that garble the first bytes (not the byte count)
 * its first child sends it: that child's set count of strings becomes
 * larger than the message, as a corrupted transfer would. */
typedef struct garbling {
    adt_collectives inner;
    uint32_t child;
    unsigned receives;
} garbling;

/* The garbling state of this thread's rank (only one rank garbles). */
static __thread garbling *garbling_here;

static int garbling_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    garbling *g = garbling_here;
    int rc = g->inner.recv(context, data, bytes, from);
    if (from == g->child && g->receives++ == 1 && bytes >= sizeof(uint32_t))
        memset(data, 0xff, sizeof(uint32_t));
    return rc;
}

static void *run_rank(void *argument)
{
    rank_run *run = argument;
    adt_collectives c = adt_thread_group_collectives(run->group, run->rank);
    garbling garbled = { .inner = c, .child = run->rank + 1 };
    if (run->rank == run->garbling_rank) {
        garbling_here = &garbled;
        c.recv = garbling_recv;
    }
    char host[32];
    host_of(run->rank, host, sizeof host);
    run->rc = adt_unify(run->defs, host, threads_of_a_rank, 2, &c, &run->maps, &run->global, run->error,
                        sizeof run->error);
    return NULL;
}

/* The differences found, one line each. */
typedef struct report {
    char *text;
    size_t size;
} report;

static void differ(report *out, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void differ(report *out, const char *format, ...)
{
    char line[256];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (length < 0 || out->size > 64 * 1024)
        return;
    strcat(line, "\n");
    char *grown = realloc(out->text, out->size + strlen(line) + 1);
    if (!grown)
        return;
    memcpy(grown + out->size, line, strlen(line) + 1);
    out->text = grown;
    out->size += strlen(line);
}

static void compare_table(report *out, const adt_intern *tree, const adt_intern *flat, const char *what)
{
    if (tree->count != flat->count || tree->bytes_used != flat->bytes_used ||
        memcmp(tree->bytes, flat->bytes, tree->bytes_used) != 0 ||
        (tree->count && memcmp(tree->offsets, flat->offsets, (tree->count + 1) * sizeof *tree->offsets) != 0))
        differ(out, "%s: %u definitions in the tree, %u in the flat merge, or their keys differ", what, tree->count,
               flat->count);
}

static void compare_map(report *out, uint32_t rank, const char *what, const uint32_t *tree, uint32_t tree_count,
                        const uint32_t *flat, uint32_t flat_count)
{
    if (tree_count != flat_count || memcmp(tree, flat, tree_count * sizeof *tree) != 0)
        differ(out, "rank %u: the %s map differs (%u entries in the tree, %u in the flat merge)", rank, what,
               tree_count, flat_count);
}

static void compare_sets(report *out, const adt_global_defs *tree, const adt_global_defs *flat)
{
    compare_table(out, &tree->strings, &flat->strings, "strings");
    compare_table(out, &tree->regions, &flat->regions, "regions");
    compare_table(out, &tree->source_locations, &flat->source_locations, "source locations");
    compare_table(out, &tree->metrics, &flat->metrics, "metrics");
    compare_table(out, &tree->metric_classes, &flat->metric_classes, "metric classes");
    compare_table(out, &tree->groups, &flat->groups, "groups");
    compare_table(out, &tree->comms, &flat->comms, "communicators");
    compare_table(out, &tree->rma_wins, &flat->rma_wins, "RMA windows");
    compare_table(out, &tree->io_files, &flat->io_files, "I/O files");
    compare_table(out, &tree->io_handles, &flat->io_handles, "I/O handles");
    compare_table(out, &tree->calling_contexts, &flat->calling_contexts, "calling contexts");
    compare_table(out, &tree->hosts, &flat->hosts, "hosts");
    if (out->size)
        return;
    if (memcmp(tree->comm_info, flat->comm_info, tree->comms.count * sizeof *tree->comm_info) != 0)
        differ(out, "communicator names, parents or groups differ");
    if (memcmp(tree->metric_sides, flat->metric_sides, tree->metrics.count * sizeof *tree->metric_sides) != 0)
        differ(out, "metric units or kinds differ");
    if (memcmp(tree->rma_win_comm, flat->rma_win_comm, tree->rma_wins.count * sizeof *tree->rma_win_comm) != 0)
        differ(out, "RMA window communicators differ");
    if (tree->self_group_used != flat->self_group_used)
        differ(out, "COMM_SELF used in one and not the other");
    if (tree->rank_count != flat->rank_count ||
        memcmp(tree->rank_host, flat->rank_host, tree->rank_count * sizeof *tree->rank_host) != 0 ||
        memcmp(tree->rank_first_thread, flat->rank_first_thread,
               (tree->rank_count + 1) * sizeof *tree->rank_first_thread) != 0 ||
        memcmp(tree->threads, flat->threads, tree->rank_first_thread[tree->rank_count] * sizeof *tree->threads) != 0)
        differ(out, "ranks, hosts or threads differ");
}

/* What the global definitions must hold, independently of any merge: the
 * shared ones once, every rank's own ones, every host once. */
static void check_contents(report *out, const adt_global_defs *g, uint32_t ranks)
{
    if (g->calling_contexts.count != SHARED_CONTEXTS + ranks * OWN_CONTEXTS)
        differ(out, "%u calling contexts, expected %u", g->calling_contexts.count,
               SHARED_CONTEXTS + ranks * OWN_CONTEXTS);
    if (g->regions.count != SHARED_FUNCTIONS + ranks)
        differ(out, "%u regions, expected %u", g->regions.count, SHARED_FUNCTIONS + ranks);
    /* world, every rank's self, even (and odd) */
    if (g->comms.count != 1 + ranks + (ranks > 1 ? 2 : 1))
        differ(out, "%u communicators", g->comms.count);
    if (g->hosts.count != (ranks + RANKS_PER_HOST - 1) / RANKS_PER_HOST)
        differ(out, "%u hosts", g->hosts.count);
    if (g->metric_classes.count != (ranks > 1 ? 2u : 1u))
        differ(out, "%u metric classes", g->metric_classes.count);
    if (!g->self_group_used)
        differ(out, "no COMM_SELF group");
    for (uint32_t r = 0; r < ranks; ++r) {
        char own[64];
        snprintf(own, sizeof own, "own_function_of_rank_%u", r);
        uint32_t name = adt_intern_find(&g->strings, own, strlen(own));
        bool found = false;
        for (uint32_t i = 0; name != ADT_UNDEFINED_ID && i < g->regions.count && !found; ++i)
            found = ((const adt_region_key *)adt_intern_key(&g->regions, i, NULL))->name == name;
        if (!found)
            differ(out, "no region %s", own);
    }
}

/* adt_unify on `ranks` threads, each with its own rank's definitions;
 * NULL when out of memory. Free with free_ranks. */
static rank_run *run_ranks(uint32_t ranks, uint32_t garbling_rank)
{
    adt_thread_group *group = adt_thread_group_create(ranks);
    rank_run *runs = calloc(ranks, sizeof *runs);
    pthread_t *threads = calloc(ranks, sizeof *threads);
    bool ok = group && runs && threads;
    for (uint32_t r = 0; ok && r < ranks; ++r)
        runs[r] = (rank_run){ .group = group, .garbling_rank = garbling_rank, .rank = r,
                              .defs = define_rank(r, ranks), .rc = -1 };
    for (uint32_t r = 0; ok && r < ranks; ++r)
        pthread_create(&threads[r], NULL, run_rank, &runs[r]);
    for (uint32_t r = 0; ok && r < ranks; ++r)
        pthread_join(threads[r], NULL);
    adt_thread_group_destroy(group);
    free(threads);
    if (!ok) {
        free(runs);
        return NULL;
    }
    return runs;
}

static void free_ranks(rank_run *runs, uint32_t ranks)
{
    for (uint32_t r = 0; runs && r < ranks; ++r) {
        adt_id_maps_free(&runs[r].maps);
        adt_global_defs_free(&runs[r].global);
        adt_defs_destroy(runs[r].defs);
    }
    free(runs);
}

char *unify_tree_differences(uint32_t ranks)
{
    report out = { NULL, 0 };
    rank_run *runs = run_ranks(ranks, UINT32_MAX);
    adt_global_defs flat = { 0 };
    adt_class_maps *flat_maps = calloc(ranks, sizeof *flat_maps);
    uint32_t **group_entries = calloc(ranks, sizeof *group_entries);
    if (!runs || !flat_maps || !group_entries) {
        differ(&out, "out of memory");
        goto done;
    }
    for (uint32_t r = 0; r < ranks; ++r)
        if (runs[r].rc != 0)
            differ(&out, "rank %u: adt_unify failed: %s", r, runs[r].error);
    if (out.size)
        goto done;

    for (uint32_t r = 0; r < ranks; ++r) {
        adt_blob blob = { 0 };
        char host[32];
        host_of(r, host, sizeof host);
        adt_unify_serialize(runs[r].defs, host, threads_of_a_rank, 2, &blob, &group_entries[r]);
        adt_cursor in = { .data = blob.data, .size = blob.size };
        if (blob.failed || adt_set_merge(&flat, &in, &flat_maps[r]) != 0)
            differ(&out, "rank %u: the flat merge failed", r);
        adt_blob_free(&blob);
    }
    adt_set_finish(&flat);
    if (out.size)
        goto done;
    compare_sets(&out, &runs[0].global, &flat);
    check_contents(&out, &runs[0].global, ranks);
    for (uint32_t r = 0; r < ranks; ++r) {
        const adt_id_maps *m = &runs[r].maps;
        const adt_class_maps *f = &flat_maps[r];
        compare_map(&out, r, "region", m->region, m->region_count, f->map[ADT_DEF_REGION], f->count[ADT_DEF_REGION]);
        compare_map(&out, r, "communicator", m->comm, m->comm_count, f->map[ADT_DEF_COMM], f->count[ADT_DEF_COMM]);
        compare_map(&out, r, "calling-context", m->calling_context, m->calling_context_count,
                    f->map[ADT_DEF_CALLING_CONTEXT], f->count[ADT_DEF_CALLING_CONTEXT]);
        compare_map(&out, r, "RMA window", m->rma_win, m->rma_win_count, f->map[ADT_DEF_RMA_WIN],
                    f->count[ADT_DEF_RMA_WIN]);
        compare_map(&out, r, "I/O file", m->io_file, m->io_file_count, f->map[ADT_DEF_IO_FILE],
                    f->count[ADT_DEF_IO_FILE]);
        compare_map(&out, r, "I/O handle", m->io_handle, m->io_handle_count, f->map[ADT_DEF_IO_HANDLE],
                    f->count[ADT_DEF_IO_HANDLE]);
        if (m->group_count != 1 || m->group[0] != 1 + f->map[ADT_DEF_GROUP][group_entries[r][0]])
            differ(&out, "rank %u: the group map differs", r);
        if (m->metric_class != f->map[ADT_DEF_METRIC_CLASS][0] || m->metric_count != (r % 3 == 0 ? 2u : 1u))
            differ(&out, "rank %u: the metric class differs", r);
    }
done:
    for (uint32_t r = 0; r < ranks; ++r) {
        if (flat_maps)
            adt_class_maps_free(&flat_maps[r]);
        if (group_entries)
            free(group_entries[r]);
    }
    free_ranks(runs, ranks);
    adt_global_defs_free(&flat);
    free(flat_maps);
    free(group_entries);
    if (!out.text)
        out.text = calloc(1, 1);
    return out.text;
}

char *unify_tree_failure_differences(uint32_t ranks, uint32_t garbling_rank)
{
    report out = { NULL, 0 };
    rank_run *runs = run_ranks(ranks, garbling_rank);
    if (!runs)
        differ(&out, "out of memory");
    for (uint32_t r = 0; runs && r < ranks; ++r) {
        char expected[256];
        if (r == garbling_rank)
            snprintf(expected, sizeof expected,
                     "unifying definitions: rank %u: out of memory or malformed definitions merging a child rank's", r);
        else
            snprintf(expected, sizeof expected, "unifying definitions failed on another rank");
        if (runs[r].rc != -1 || strcmp(runs[r].error, expected) != 0)
            differ(&out, "rank %u: returned %d with \"%s\", expected -1 with \"%s\"", r, runs[r].rc, runs[r].error,
                   expected);
        if (runs[r].maps.region || runs[r].global.strings.count)
            differ(&out, "rank %u: kept maps or definitions after the failure", r);
    }
    free_ranks(runs, ranks);
    if (!out.text)
        out.text = calloc(1, 1);
    return out.text;
}
