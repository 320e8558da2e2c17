/*
 * The end-of-run unification over the binomial tree (issue #15) for
 * P = 2^4, 2^5, ... simulated ranks in one process, measured at rank 0
 * (the root) and at rank P/2, the busiest rank after the root: the most
 * children (log2 P - 1) and the largest subtree (P/2 ranks) of all others
 * (checked per P over the whole tree: inner_is_busiest).
 *
 * Rank 0 runs the real adt_unify; a stand-in collectives object plays its
 * children (ranks 1, 2, 4, ..., P/2) and hands it, message by message, the
 * bytes each would send: the union of its subtree's definitions. Those
 * unions are built beforehand, outside the time and memory measured, and
 * directly from the synthetic shape (benchmarks/unify/synthetic_ranks.c:
 * the shared part once, then every other rank's own part), not by merging
 * the subtree's ranks one by one, which at 2^15 ranks would take longer
 * than the steps measured; tests/format (UnifySyntheticRanks) holds the
 * two byte for byte. Rank P/2's part of the tree is its merge of its own
 * definitions and its children's sets and the serialisation of the union
 * it sends up, timed the same way; its step down (composing id maps, at
 * most 4 bytes per definition) is left out.
 *
 * The ranks are shaped like CP2K's (synthetic_ranks.h); the workload knob
 * is how many of a rank's 15,753 calling contexts are its own (default:
 * CP2K's 3 %, 472): each adds a calling context and a source location to
 * the global set per rank, which then grows with P by that much.
 *
 * Prints one JSON object; per P: the definitions of one rank, the global
 * definitions rank 0 ends with, and for the root and the inner rank the
 * bytes received from children, the seconds (wall and CPU time) and
 * peak_bytes: the process's RSS high-water mark during the step minus its
 * RSS before it (memory freed earlier returned with malloc_trim, the
 * high-water mark reset through /proc/self/clear_refs before each step);
 * the root's peak per global definition; the seconds spent building the
 * inputs.
 *
 * usage: unify_bench [MAX_LOG2_RANKS] [SECONDS] [OWN_CALLING_CONTEXTS]
 * (default 16, 100, 472): P doubles from 16 up to 2^MAX_LOG2_RANKS, and
 * stops early when the next P, extrapolated from the last two, would end
 * past SECONDS or need more than half the memory available.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_clock.h"
#include "synthetic_ranks.h"

#define FIRST_LOG2_RANKS 4

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

/* The ranks of child k of children (count of them, in increasing order)
 * whose parent's subtree ends before end: from the child up to the next
 * child, the last one up to end. */
static uint32_t child_subtree_ranks(const uint32_t *children, uint32_t count, uint32_t k, uint32_t end)
{
    return (k + 1 < count ? children[k + 1] : end) - children[k];
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
    uint32_t inner_subtree_ranks;
    bool inner_is_busiest;
    step inner;
    double inputs_seconds; /* building the children's unions, outside the steps */
    double wall_seconds;   /* all of it: what the next P is extrapolated from */
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
    w.start = bench_wall_seconds();
    w.cpu_start = bench_cpu_seconds();
    return w;
}

static void close_window(const window *w, step *out)
{
    out->seconds = bench_wall_seconds() - w->start;
    out->cpu_seconds = bench_cpu_seconds() - w->cpu_start;
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

/* Whether rank P/2 has the most children and the largest subtree of all
 * ranks but the root, by the tree adt_unify merges over (each rank's
 * subtree counted from its children's, leaves first). */
static bool half_is_busiest(uint32_t rank_count)
{
    uint32_t *subtree = malloc(rank_count * sizeof *subtree);
    if (!subtree)
        return false;
    uint32_t half = rank_count / 2, children[32], half_children = adt_unify_tree_children(half, rank_count, children);
    bool busiest = true;
    for (uint32_t rank = rank_count; rank-- > 1;) {
        uint32_t count = adt_unify_tree_children(rank, rank_count, children);
        subtree[rank] = 1;
        for (uint32_t k = 0; k < count; ++k)
            subtree[rank] += subtree[children[k]];
        busiest &= count <= half_children;
    }
    for (uint32_t rank = 1; rank < rank_count; ++rank)
        busiest &= subtree[rank] <= subtree[half];
    free(subtree);
    return busiest;
}

/* The bytes each child of the root or of rank P/2 (both subtrees end at
 * P) sends it: its subtree's union, built directly. */
static bool children_unions(const synthetic_shape *shape, const uint32_t *children, uint32_t count, adt_blob *sent_up)
{
    bool ok = true;
    for (uint32_t k = 0; ok && k < count; ++k)
        ok = synthetic_union_direct(shape, children[k], child_subtree_ranks(children, count, k, shape->rank_count),
                                    &sent_up[k]);
    return ok;
}

static bool merge_bytes(adt_global_defs *set, const adt_blob *blob)
{
    adt_cursor in = { .data = blob->data, .size = blob->size };
    adt_class_maps maps;
    bool ok = adt_set_merge(set, &in, &maps) == 0;
    adt_class_maps_free(&maps);
    return ok;
}

/* Rank P/2's step up: its own set merged with its children's, and the
 * union serialised for its parent. */
static bool measure_inner(const synthetic_shape *shape, measurement *m)
{
    uint32_t rank = shape->rank_count / 2, children[32];
    uint32_t count = adt_unify_tree_children(rank, shape->rank_count, children);
    adt_blob own = { 0 }, sent_up[32] = { { 0 } }, union_bytes = { 0 };
    double inputs_start = bench_wall_seconds();
    bool ok = synthetic_rank_bytes(shape, rank, &own) && children_unions(shape, children, count, sent_up);
    m->inputs_seconds += bench_wall_seconds() - inputs_start;
    adt_global_defs set = { 0 };
    m->inner_rank = rank;
    m->inner_children = count;
    m->inner_subtree_ranks = shape->rank_count - rank;
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

static bool measure_root(const synthetic_shape *shape, measurement *m)
{
    standin *others = calloc(1, sizeof *others);
    adt_defs *mine = NULL;
    bool ok = others != NULL;
    double inputs_start = bench_wall_seconds();
    if (ok) {
        others->child_count = adt_unify_tree_children(0, shape->rank_count, others->children);
        ok = children_unions(shape, others->children, others->child_count, others->sent_up);
    }
    mine = ok ? synthetic_rank_defs(shape, 0) : NULL;
    ok = mine != NULL;
    m->inputs_seconds += bench_wall_seconds() - inputs_start;

    /* A lone process's barrier, broadcast and reductions are rank 0's side
     * of them: the other ranks send nothing there but "all is well". */
    adt_collectives collectives = adt_collectives_serial;
    collectives.context = others;
    collectives.size = shape->rank_count;
    collectives.send = standin_send;
    collectives.recv = standin_recv;
    adt_id_maps maps;
    adt_global_defs global = { 0 };
    char error[256] = "", host[32];
    synthetic_host_name(0, host, sizeof host);
    if (ok) {
        const adt_intern *local[] = { &mine->strings, &mine->regions, &mine->source_locations, &mine->comms };
        m->definitions_per_rank = definitions_of(local, 4) + (uint32_t)mine->calling_context_count;
        window w = open_window();
        ok = adt_unify(mine, host, &synthetic_master_thread, 1, &collectives, &maps, &global, error, sizeof error) ==
             0;
        close_window(&w, &m->root);
        m->root.received_bytes = others->received_bytes;
        if (!ok)
            fprintf(stderr, "unify_bench: %u ranks: %s\n", shape->rank_count, error);
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

static bool measure(const synthetic_shape *shape, measurement *m)
{
    double wall_start = bench_wall_seconds();
    *m = (measurement){ .ranks = shape->rank_count, .inner_is_busiest = half_is_busiest(shape->rank_count) };
    bool ok = measure_inner(shape, m) && measure_root(shape, m);
    if (!ok)
        fprintf(stderr, "unify_bench: %u ranks: out of memory or a failed merge\n", shape->rank_count);
    m->wall_seconds = bench_wall_seconds() - wall_start;
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
    long own = argc > 3 ? atol(argv[3]) : (long)SYNTHETIC_CP2K_OWN_CALLING_CONTEXTS;
    if (max_log2 < FIRST_LOG2_RANKS || max_log2 > 20 || budget <= 0 || own < 0 ||
        own >= (long)SYNTHETIC_CALLING_CONTEXTS || ((uint64_t)own << max_log2) >= (1ull << 31)) {
        fprintf(stderr,
                "usage: unify_bench [MAX_LOG2_RANKS (%u..20)] [SECONDS] [OWN_CALLING_CONTEXTS (0..%u, times "
                "2^MAX_LOG2_RANKS below 2^31)]\n",
                FIRST_LOG2_RANKS, SYNTHETIC_CALLING_CONTEXTS - 1);
        return 2;
    }
    double half_memory = 0.5 * (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    measurement runs[21];
    unsigned count = 0;
    const char *stopped = "none";
    double start = bench_wall_seconds();
    for (unsigned log2 = FIRST_LOG2_RANKS; log2 <= max_log2; ++log2) {
        if (count >= 2) {
            /* growth from the last two runs, at least linear */
            const measurement *last = &runs[count - 1], *before = &runs[count - 2];
            double time_growth = last->wall_seconds / before->wall_seconds;
            double memory_growth = (double)last->root.peak_bytes / (double)(before->root.peak_bytes + 1);
            if (bench_wall_seconds() - start + last->wall_seconds * (time_growth > 2 ? time_growth : 2) > budget) {
                stopped = "time";
                break;
            }
            double held = (double)(last->root.peak_bytes + last->root.received_bytes);
            if (held * (memory_growth > 2 ? memory_growth : 2) > half_memory) {
                stopped = "memory";
                break;
            }
        }
        synthetic_shape shape = { 1u << log2, (uint32_t)own };
        if (!measure(&shape, &runs[count]))
            return 1;
        ++count;
    }

    printf("{\"benchmark\": \"unify\", \"tree\": \"binomial\", \"calling_contexts_per_rank\": %u, "
           "\"rank_own_calling_contexts\": %ld, "
           "\"peak_bytes_is\": \"RSS high-water mark during the step minus RSS before it\", "
           "\"largest_ranks_requested\": %u, \"largest_ranks_run\": %u, \"stopped_early_by\": \"%s\", "
           "\"seconds_budget\": %.0f, \"runs\": [",
           SYNTHETIC_CALLING_CONTEXTS, own, 1u << max_log2, runs[count - 1].ranks, stopped, budget);
    for (unsigned i = 0; i < count; ++i) {
        const measurement *run = &runs[i];
        printf("%s\n  {\"ranks\": %u, \"definitions_per_rank\": %u, \"global_definitions\": %u, ", i ? "," : "",
               run->ranks, run->definitions_per_rank, run->global_definitions);
        print_step("root", &run->root);
        printf(", \"root_peak_bytes_per_global_definition\": %.1f, \"inner_rank\": %u, \"inner_children\": %u, "
               "\"inner_subtree_ranks\": %u, \"inner_is_busiest\": %s, ",
               (double)run->root.peak_bytes / (double)run->global_definitions, run->inner_rank,
               run->inner_children, run->inner_subtree_ranks, run->inner_is_busiest ? "true" : "false");
        print_step("inner", &run->inner);
        printf(", \"inputs_seconds\": %.2f, \"wall_seconds\": %.2f}", run->inputs_seconds, run->wall_seconds);
    }
    printf("\n]}\n");
    return 0;
}
