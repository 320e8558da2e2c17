/*
 * The end-of-run unification over the binomial tree (issue #15) for
 * P = 2^4, 2^5, ... simulated ranks in one process, measured at rank 0
 * (the root) and at rank P/2 (the inner rank with the most children after
 * the root: its subtree is half the ranks).
 *
 * Rank 0 runs the real adt_unify; a stand-in collectives object plays its
 * children (ranks 1, 2, 4, ..., P/2) and hands it, message by message, the
 * bytes each would send: the union of its subtree's definitions, built
 * beforehand with the same adt_set_merge and adt_set_serialize the tree
 * uses (outside the time and memory measured). Rank P/2's part of the tree
 * is its merge of its own definitions and its children's sets and the
 * serialisation of the union it sends up, timed the same way; its step
 * down (composing id maps, at most 4 bytes per definition) is left out.
 *
 * The definitions are shaped like CP2K's (15,753 calling contexts on a
 * rank, 400 KB of global definitions at 2 ranks): most calling contexts,
 * regions and source locations are the same on every rank, 3 % of the
 * calling contexts are the rank's own (their own source lines); the
 * communicators are what MPI gives every rank (MPI_COMM_WORLD with its P
 * members, the rank's MPI_COMM_SELF, a duplicate of MPI_COMM_WORLD) and
 * the row and column communicators of a 2-D process grid.
 *
 * Prints one JSON object; per P: the definitions of one rank, the global
 * definitions rank 0 ends with, and for the root and the inner rank the
 * bytes received from children, the seconds (wall and CPU time) and
 * peak_bytes: the process's RSS high-water mark during the step minus its
 * RSS before it (memory freed earlier returned with malloc_trim, the
 * high-water mark reset through /proc/self/clear_refs before each step).
 *
 * usage: unify_bench [MAX_LOG2_RANKS] [SECONDS]
 * (default 16, 100): P doubles from 16 up to 2^MAX_LOG2_RANKS, and stops
 * early when the next P, extrapolated from the last two, would end past
 * SECONDS or need more than half the memory available.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/unify.h"

#define CALLING_CONTEXTS 15753
#define RANK_OWN_CALLING_CONTEXTS (CALLING_CONTEXTS * 3 / 100)
#define SHARED_FUNCTIONS 1200
#define MPI_FUNCTIONS 60
#define SOURCE_FILES 300
#define RANKS_PER_HOST 32
#define FIRST_LOG2_RANKS 4

/* CPU time of the process: on a shared machine wall time also counts the
 * time other processes held the cores. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A field of /proc/self/status in bytes ("VmRSS:", "VmHWM:"), 0 if absent. */
static size_t status_bytes(const char *field)
{
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    size_t kib = 0;
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, field, strlen(field)) == 0)
            kib = strtoull(line + strlen(field), NULL, 10);
    if (status)
        fclose(status);
    return kib * 1024;
}

/* Resets VmHWM to the current RSS (Linux ≥ 4.0); false where not allowed. */
static bool reset_peak_rss(void)
{
    FILE *clear_refs = fopen("/proc/self/clear_refs", "w");
    if (!clear_refs)
        return false;
    bool ok = fputs("5", clear_refs) >= 0;
    return fclose(clear_refs) == 0 && ok;
}

/* Builds the definitions of rank of rank_count, as its MPI wrappers and
 * sampler would have registered them; NULL when out of memory. */
static adt_defs *define_rank(uint32_t rank, uint32_t rank_count, const uint32_t *world_members,
                             adt_cc_node *nodes)
{
    adt_defs *defs = adt_defs_create();
    if (!defs)
        return NULL;
    char name[64], file[64];
    uint32_t regions[SHARED_FUNCTIONS];
    for (uint32_t f = 0; f < MPI_FUNCTIONS; ++f) {
        snprintf(name, sizeof name, "MPI_Function_%u", f);
        adt_defs_region(defs, name, NULL, ADT_ROLE_POINT2POINT, ADT_PARADIGM_MPI, NULL, 0, 0);
    }
    for (uint32_t f = 0; f < SHARED_FUNCTIONS; ++f) {
        snprintf(name, sizeof name, "__cp2k_module_%u_MOD_routine_%u", f % SOURCE_FILES, f);
        snprintf(file, sizeof file, "src/cp2k_module_%u.F", f % SOURCE_FILES);
        regions[f] = adt_defs_region(defs, name, NULL, ADT_ROLE_FUNCTION, ADT_PARADIGM_SAMPLING, file, 0, 0);
    }

    /* A tree of call paths: node i calls from node i / 4 (a few calls per
     * function), its line is the call site; the last 3 % are the rank's
     * own paths (code only this rank ran), at lines no other rank has. */
    uint32_t shared = CALLING_CONTEXTS - RANK_OWN_CALLING_CONTEXTS;
    for (uint32_t i = 0; i < CALLING_CONTEXTS; ++i) {
        uint32_t function = (i * 7u) % SHARED_FUNCTIONS;
        uint32_t line = i < shared ? 10 + i % 5000 : 100000 + rank * RANK_OWN_CALLING_CONTEXTS + (i - shared);
        snprintf(file, sizeof file, "src/cp2k_module_%u.F", function % SOURCE_FILES);
        nodes[i] = (adt_cc_node){ regions[function], adt_defs_source_location(defs, file, line),
                                  i == 0 ? ADT_UNDEFINED_ID : (i < shared ? i / 4 : (i - shared) % shared) };
    }

    /* a process grid of about sqrt(P) × sqrt(P): the rank's row and column */
    uint32_t columns = 1;
    while (columns * columns < rank_count)
        columns *= 2;
    uint32_t row = rank / columns, column = rank % columns, rows = (rank_count + columns - 1) / columns;
    uint32_t row_members[columns], column_members[rows], row_size = 0, column_size = 0;
    for (uint32_t c = 0; c < columns && row * columns + c < rank_count; ++c)
        row_members[row_size++] = row * columns + c;
    for (uint32_t r = 0; r * columns + column < rank_count; ++r)
        column_members[column_size++] = r * columns + column;

    adt_comm_desc comms[] = {
        { 0, 0, "MPI_COMM_WORLD", world_members, rank_count, NULL, 0, ADT_UNDEFINED_ID, false },
        { rank, 1, "MPI_COMM_SELF", NULL, 0, NULL, 0, ADT_UNDEFINED_ID, true },
        { 0, 2, "cp2k_para_env", world_members, rank_count, NULL, 0, 0, false },
        { row_members[0], 3, "cp2k_grid_row", row_members, row_size, NULL, 0, 2, false },
        { column_members[0], 4, "cp2k_grid_column", column_members, column_size, NULL, 0, 2, false },
    };
    bool ok = true;
    for (size_t c = 0; c < sizeof comms / sizeof comms[0]; ++c)
        ok &= adt_defs_comm(defs, &comms[c]) != ADT_UNDEFINED_ID;
    if (!ok || adt_defs_set_calling_contexts(defs, nodes, CALLING_CONTEXTS) != 0) {
        adt_defs_destroy(defs);
        return NULL;
    }
    return defs;
}

static const adt_trace_thread master_thread = { NULL, 0, "Master thread" };

/* Rank's own definitions as the bytes of a set; false when out of memory. */
static bool rank_bytes_of(uint32_t rank, uint32_t rank_count, const uint32_t *world_members, adt_cc_node *nodes,
                          adt_blob *blob)
{
    adt_defs *defs = define_rank(rank, rank_count, world_members, nodes);
    if (!defs)
        return false;
    char host[32];
    snprintf(host, sizeof host, "node%04u", rank / RANKS_PER_HOST);
    uint32_t *group_entries;
    adt_unify_serialize(defs, host, &master_thread, 1, blob, &group_entries);
    free(group_entries);
    adt_defs_destroy(defs);
    return !blob->failed;
}

static bool merge_bytes(adt_global_defs *set, const adt_blob *blob)
{
    adt_cursor in = { .data = blob->data, .size = blob->size };
    adt_class_maps maps;
    bool ok = adt_set_merge(set, &in, &maps) == 0;
    adt_class_maps_free(&maps);
    return ok;
}

/* The bytes rank sends its parent: its own bytes for a leaf, else the
 * union of its own set and its children's, in rank order (depth first, so
 * that only one path of partial unions is held at a time). */
static bool subtree_bytes(uint32_t rank, uint32_t rank_count, const uint32_t *world_members, adt_cc_node *nodes,
                          adt_blob *out)
{
    uint32_t children[32];
    uint32_t count = adt_unify_tree_children(rank, rank_count, children);
    if (!rank_bytes_of(rank, rank_count, world_members, nodes, out))
        return false;
    if (count == 0)
        return true;
    adt_global_defs set = { 0 };
    bool ok = merge_bytes(&set, out);
    adt_blob_free(out);
    for (uint32_t k = 0; ok && k < count; ++k) {
        adt_blob child = { 0 };
        ok = subtree_bytes(children[k], rank_count, world_members, nodes, &child) && merge_bytes(&set, &child);
        adt_blob_free(&child);
    }
    if (ok)
        adt_set_serialize(&set, out);
    adt_global_defs_free(&set);
    return ok && !out->failed;
}

/* Rank 0's children, seen from rank 0: each one's bytes, built
 * beforehand, handed out in the pieces adt_unify asks for (first the byte
 * count, then the bytes). What rank 0 sends them is counted and dropped. */
typedef struct standin {
    uint32_t children[32];
    uint32_t child_count;
    adt_blob sent_up[32];   /* child k's subtree */
    size_t handed[32];      /* bytes of sent_up[k] handed out so far */
    bool size_handed[32];
    uint64_t received_bytes; /* by rank 0 */
} standin;

static int standin_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    standin *s = context;
    for (uint32_t k = 0; k < s->child_count; ++k) {
        if (s->children[k] != from)
            continue;
        const adt_blob *blob = &s->sent_up[k];
        if (!s->size_handed[k]) {
            uint64_t size = blob->size;
            if (bytes != sizeof size)
                return -1;
            memcpy(data, &size, sizeof size);
            s->size_handed[k] = true;
        } else {
            if (bytes > blob->size - s->handed[k])
                return -1;
            memcpy(data, blob->data + s->handed[k], bytes);
            s->handed[k] += bytes;
        }
        s->received_bytes += bytes;
        return 0;
    }
    return -1;
}

static int standin_send(void *context, const void *data, size_t bytes, uint32_t to)
{
    (void)context, (void)data, (void)bytes, (void)to;
    return 0;
}

/* One step's cost. */
typedef struct step {
    uint64_t received_bytes;
    double seconds;
    double cpu_seconds;
    uint64_t peak_bytes;
} step;

typedef struct measurement {
    uint32_t ranks;
    uint32_t definitions_per_rank;
    uint32_t global_definitions;
    step root;
    uint32_t inner_rank;
    uint32_t inner_children;
    step inner;
    double wall_seconds; /* with building the other ranks' bytes: what the next P is extrapolated from */
} measurement;

typedef struct window {
    size_t rss_before;
    bool peak_known;
    double start, cpu_start;
} window;

static window open_window(void)
{
    /* memory freed while building the inputs goes back to the system
     * first, or the step would reuse it unseen by the RSS */
    malloc_trim(0);
    window w = { status_bytes("VmRSS:"), reset_peak_rss(), 0, 0 };
    w.start = now_seconds();
    w.cpu_start = cpu_seconds();
    return w;
}

static void close_window(const window *w, step *out)
{
    out->seconds = now_seconds() - w->start;
    out->cpu_seconds = cpu_seconds() - w->cpu_start;
    size_t peak = w->peak_known ? status_bytes("VmHWM:") : 0;
    out->peak_bytes = peak > w->rss_before ? peak - w->rss_before : 0;
}

static uint32_t definitions_of(const adt_intern *const *tables, size_t count)
{
    uint32_t sum = 0;
    for (size_t t = 0; t < count; ++t)
        sum += tables[t]->count;
    return sum;
}

/* Rank P/2's step up: its own set merged with its children's, and the
 * union serialised for its parent. */
static bool measure_inner(uint32_t rank_count, const uint32_t *world_members, adt_cc_node *nodes, measurement *m)
{
    uint32_t rank = rank_count / 2, children[32];
    uint32_t count = adt_unify_tree_children(rank, rank_count, children);
    adt_blob own = { 0 }, sent_up[32] = { { 0 } }, union_bytes = { 0 };
    bool ok = rank_bytes_of(rank, rank_count, world_members, nodes, &own);
    for (uint32_t k = 0; ok && k < count; ++k)
        ok = subtree_bytes(children[k], rank_count, world_members, nodes, &sent_up[k]);
    adt_global_defs set = { 0 };
    m->inner_rank = rank;
    m->inner_children = count;
    m->inner.received_bytes = 0;
    if (ok) {
        window w = open_window();
        ok = merge_bytes(&set, &own);
        for (uint32_t k = 0; ok && k < count; ++k) {
            ok = merge_bytes(&set, &sent_up[k]);
            m->inner.received_bytes += sent_up[k].size;
        }
        if (ok)
            adt_set_serialize(&set, &union_bytes);
        ok = ok && !union_bytes.failed;
        close_window(&w, &m->inner);
    }
    adt_global_defs_free(&set);
    adt_blob_free(&own);
    adt_blob_free(&union_bytes);
    for (uint32_t k = 0; k < count; ++k)
        adt_blob_free(&sent_up[k]);
    return ok;
}

static bool measure_root(uint32_t rank_count, const uint32_t *world_members, adt_cc_node *nodes, measurement *m)
{
    standin *others = calloc(1, sizeof *others);
    adt_defs *mine = NULL;
    bool ok = others != NULL;
    if (ok)
        others->child_count = adt_unify_tree_children(0, rank_count, others->children);
    for (uint32_t k = 0; ok && k < others->child_count; ++k)
        ok = subtree_bytes(others->children[k], rank_count, world_members, nodes, &others->sent_up[k]);
    mine = ok ? define_rank(0, rank_count, world_members, nodes) : NULL;
    ok = mine != NULL;

    /* A lone process's barrier, broadcast and reductions are rank 0's side
     * of them: the other ranks send nothing there but "all is well". */
    adt_collectives collectives = adt_collectives_serial;
    collectives.context = others;
    collectives.size = rank_count;
    collectives.send = standin_send;
    collectives.recv = standin_recv;
    adt_id_maps maps;
    adt_global_defs global = { 0 };
    char error[256] = "";
    if (ok) {
        const adt_intern *local[] = { &mine->strings, &mine->regions, &mine->source_locations, &mine->comms };
        m->definitions_per_rank = definitions_of(local, 4) + (uint32_t)mine->calling_context_count;
        window w = open_window();
        ok = adt_unify(mine, "node0000", &master_thread, 1, &collectives, &maps, &global, error, sizeof error) == 0;
        close_window(&w, &m->root);
        m->root.received_bytes = others->received_bytes;
        if (!ok)
            fprintf(stderr, "unify_bench: %u ranks: %s\n", rank_count, error);
    }
    if (ok) {
        const adt_intern *merged[] = { &global.strings, &global.regions, &global.source_locations,
                                       &global.comms, &global.groups, &global.calling_contexts };
        m->global_definitions = definitions_of(merged, 6);
        adt_id_maps_free(&maps);
        adt_global_defs_free(&global);
    }
    if (mine)
        adt_defs_destroy(mine);
    for (uint32_t k = 0; others && k < others->child_count; ++k)
        adt_blob_free(&others->sent_up[k]);
    free(others);
    return ok;
}

static bool measure(uint32_t rank_count, measurement *m)
{
    double wall_start = now_seconds();
    uint32_t *world_members = malloc(rank_count * sizeof *world_members);
    adt_cc_node *nodes = malloc(CALLING_CONTEXTS * sizeof *nodes);
    bool ok = world_members && nodes;
    for (uint32_t r = 0; ok && r < rank_count; ++r)
        world_members[r] = r;
    ok = ok && measure_inner(rank_count, world_members, nodes, m) && measure_root(rank_count, world_members, nodes, m);
    if (!ok)
        fprintf(stderr, "unify_bench: %u ranks: out of memory or a failed merge\n", rank_count);
    m->ranks = rank_count;
    free(world_members);
    free(nodes);
    m->wall_seconds = now_seconds() - wall_start;
    return ok;
}

static void print_step(const char *name, const step *s)
{
    printf("\"%s_received_bytes\": %llu, \"%s_seconds\": %.4f, \"%s_cpu_seconds\": %.4f, \"%s_peak_bytes\": %llu",
           name, (unsigned long long)s->received_bytes, name, s->seconds, name, s->cpu_seconds, name,
           (unsigned long long)s->peak_bytes);
}

int main(int argc, char **argv)
{
    unsigned max_log2 = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
    double budget = argc > 2 ? atof(argv[2]) : 100.0;
    if (max_log2 < FIRST_LOG2_RANKS || max_log2 > 20 || budget <= 0) {
        fprintf(stderr, "usage: unify_bench [MAX_LOG2_RANKS (%u..20)] [SECONDS]\n", FIRST_LOG2_RANKS);
        return 2;
    }
    double half_memory = 0.5 * (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    measurement runs[21];
    unsigned count = 0;
    const char *stopped = "none";
    double start = now_seconds();
    for (unsigned log2 = FIRST_LOG2_RANKS; log2 <= max_log2; ++log2) {
        if (count >= 2) {
            /* growth from the last two runs, at least linear */
            const measurement *last = &runs[count - 1], *before = &runs[count - 2];
            double time_growth = last->wall_seconds / before->wall_seconds;
            double memory_growth = (double)last->root.peak_bytes / (double)(before->root.peak_bytes + 1);
            if (now_seconds() - start + last->wall_seconds * (time_growth > 2 ? time_growth : 2) > budget) {
                stopped = "time";
                break;
            }
            double held = (double)(last->root.peak_bytes + last->root.received_bytes);
            if (held * (memory_growth > 2 ? memory_growth : 2) > half_memory) {
                stopped = "memory";
                break;
            }
        }
        if (!measure(1u << log2, &runs[count]))
            return 1;
        ++count;
    }

    printf("{\"benchmark\": \"unify\", \"tree\": \"binomial\", \"calling_contexts_per_rank\": %u, "
           "\"rank_own_calling_contexts\": %u, "
           "\"peak_bytes_is\": \"RSS high-water mark during the step minus RSS before it\", "
           "\"largest_ranks_requested\": %u, \"largest_ranks_run\": %u, \"stopped_early_by\": \"%s\", "
           "\"seconds_budget\": %.0f, \"runs\": [",
           CALLING_CONTEXTS, RANK_OWN_CALLING_CONTEXTS, 1u << max_log2, runs[count - 1].ranks, stopped, budget);
    for (unsigned i = 0; i < count; ++i) {
        printf("%s\n  {\"ranks\": %u, \"definitions_per_rank\": %u, \"global_definitions\": %u, ", i ? "," : "",
               runs[i].ranks, runs[i].definitions_per_rank, runs[i].global_definitions);
        print_step("root", &runs[i].root);
        printf(", \"inner_rank\": %u, \"inner_children\": %u, ", runs[i].inner_rank, runs[i].inner_children);
        print_step("inner", &runs[i].inner);
        printf("}");
    }
    printf("\n]}\n");
    return 0;
}
