/*
 * What rank 0 does at the end of a run today (issue #15): adt_unify gathers
 * every rank's definitions on rank 0, which merges them alone and scatters
 * the id maps back. This runs the real adt_unify as rank 0 of P = 2^4, 2^5,
 * ... simulated ranks in one process; a stand-in collectives object plays
 * ranks 1 .. P-1, handing rank 0 the exact bytes adt_unify_serialize makes
 * of each one's definitions.
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
 * definitions rank 0 ends with, the bytes it gathered, the seconds of
 * adt_unify on rank 0 (wall and CPU time), and root_peak_bytes: the
 * process's RSS high-water mark during adt_unify minus its RSS before it
 * (the high-water mark is reset through /proc/self/clear_refs before each
 * P). The other ranks' bytes are built before adt_unify starts, so neither
 * figure holds them; copying them into rank 0's receive buffer stands for
 * the receive and counts.
 *
 * usage: unify_bench [MAX_LOG2_RANKS] [SECONDS]
 * (default 16, 100): P doubles from 16 up to 2^MAX_LOG2_RANKS, and stops
 * early when the next P, extrapolated from the last two, would end past
 * SECONDS or need more than half the memory available (the stand-in's
 * copy of the other ranks' bytes is as large as rank 0's receive buffer).
 */
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

/* The bytes rank r sends rank 0; false when out of memory. */
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

/* Ranks 1 .. size-1, seen from rank 0, with the bytes each sends built
 * beforehand (outside the time and memory measured). adt_unify gathers
 * twice: each rank's byte count, then the bytes. */
typedef struct standin {
    uint32_t rank_count;
    const adt_blob *rank_bytes; /* [r] for r >= 1 */
    unsigned gathers_seen;
    uint64_t gathered_bytes;    /* by rank 0 in the last gather */
} standin;

static int standin_gatherv(void *context, const void *in, size_t in_bytes, void *out, const size_t *out_bytes,
                           uint32_t root)
{
    standin *s = context;
    /* rank 0's own part as a lone process gathers it */
    if (s->gathers_seen >= 2 || adt_collectives_serial.gatherv(NULL, in, in_bytes, out, out_bytes, root) != 0)
        return -1;
    bool counting = s->gathers_seen++ == 0;
    /* the copies stand for the receives: rank 0's cost, timed */
    uint8_t *at = (uint8_t *)out + in_bytes;
    s->gathered_bytes = in_bytes;
    for (uint32_t r = 1; r < s->rank_count; ++r) {
        const adt_blob *sent = &s->rank_bytes[r];
        uint64_t size = sent->size;
        if (out_bytes[r] != (counting ? sizeof size : sent->size))
            return -1;
        memcpy(at, counting ? (const void *)&size : sent->data, out_bytes[r]);
        at += out_bytes[r];
        s->gathered_bytes += out_bytes[r];
    }
    return 0;
}

typedef struct measurement {
    uint32_t ranks;
    uint32_t definitions_per_rank;
    uint32_t global_definitions;
    uint64_t gathered_bytes_at_root;
    double root_seconds;
    double root_cpu_seconds;
    uint64_t root_peak_bytes;
    double wall_seconds; /* with building the other ranks' bytes: what the next P is extrapolated from */
} measurement;

static uint32_t definitions_of(const adt_intern *const *tables, size_t count)
{
    uint32_t sum = 0;
    for (size_t t = 0; t < count; ++t)
        sum += tables[t]->count;
    return sum;
}

static void free_rank_bytes(adt_blob *rank_bytes, uint32_t rank_count)
{
    for (uint32_t r = 0; rank_bytes && r < rank_count; ++r)
        adt_blob_free(&rank_bytes[r]);
    free(rank_bytes);
}

static bool measure(uint32_t rank_count, measurement *m)
{
    double wall_start = now_seconds();
    uint32_t *world_members = malloc(rank_count * sizeof *world_members);
    adt_cc_node *nodes = malloc(CALLING_CONTEXTS * sizeof *nodes);
    adt_blob *rank_bytes = calloc(rank_count, sizeof *rank_bytes);
    adt_defs *mine = NULL;
    bool ok = world_members && nodes && rank_bytes;
    for (uint32_t r = 0; ok && r < rank_count; ++r)
        world_members[r] = r;
    for (uint32_t r = 1; ok && r < rank_count; ++r)
        ok = rank_bytes_of(r, rank_count, world_members, nodes, &rank_bytes[r]);
    mine = ok ? define_rank(0, rank_count, world_members, nodes) : NULL;
    ok = mine != NULL;
    if (!ok)
        fprintf(stderr, "unify_bench: %u ranks: out of memory building their definitions\n", rank_count);

    standin others = { rank_count, rank_bytes, 0, 0 };
    /* A lone process's barrier, broadcast, scatter and reductions are rank
     * 0's side of them: the other ranks send nothing there but "all is
     * well", and what rank 0 scatters to them is dropped. */
    adt_collectives collectives = adt_collectives_serial;
    collectives.context = &others;
    collectives.size = rank_count;
    collectives.gatherv = standin_gatherv;
    adt_id_maps maps;
    adt_global_defs global = { 0 };
    char error[256] = "";
    if (ok) {
        const adt_intern *local[] = { &mine->strings, &mine->regions, &mine->source_locations, &mine->comms };
        m->definitions_per_rank = definitions_of(local, 4) + (uint32_t)mine->calling_context_count;
        size_t rss_before = status_bytes("VmRSS:");
        bool peak_known = reset_peak_rss();
        double start = now_seconds(), cpu_start = cpu_seconds();
        ok = adt_unify(mine, "node0000", &master_thread, 1, &collectives, &maps, &global, error, sizeof error) == 0;
        m->root_seconds = now_seconds() - start;
        m->root_cpu_seconds = cpu_seconds() - cpu_start;
        size_t peak = peak_known ? status_bytes("VmHWM:") : 0;
        m->root_peak_bytes = peak > rss_before ? peak - rss_before : 0;
        if (!ok)
            fprintf(stderr, "unify_bench: %u ranks: %s\n", rank_count, error);
    }
    if (ok) {
        const adt_intern *merged[] = { &global.strings, &global.regions, &global.source_locations,
                                       &global.comms, &global.groups, &global.calling_contexts };
        m->global_definitions = definitions_of(merged, 6);
        m->ranks = rank_count;
        m->gathered_bytes_at_root = others.gathered_bytes;
        adt_id_maps_free(&maps);
        adt_global_defs_free(&global);
    }
    if (mine)
        adt_defs_destroy(mine);
    free_rank_bytes(rank_bytes, rank_count);
    free(world_members);
    free(nodes);
    m->wall_seconds = now_seconds() - wall_start;
    return ok;
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
            double memory_growth = (double)last->root_peak_bytes / (double)(before->root_peak_bytes + 1);
            if (now_seconds() - start + last->wall_seconds * (time_growth > 2 ? time_growth : 2) > budget) {
                stopped = "time";
                break;
            }
            double held = (double)(last->root_peak_bytes + last->gathered_bytes_at_root);
            if (held * (memory_growth > 2 ? memory_growth : 2) > half_memory) {
                stopped = "memory";
                break;
            }
        }
        if (!measure(1u << log2, &runs[count]))
            return 1;
        ++count;
    }

    printf("{\"benchmark\": \"unify\", \"calling_contexts_per_rank\": %u, \"rank_own_calling_contexts\": %u, "
           "\"root_peak_bytes_is\": \"RSS high-water mark during adt_unify minus RSS before it\", "
           "\"largest_ranks_requested\": %u, \"largest_ranks_run\": %u, \"stopped_early_by\": \"%s\", "
           "\"seconds_budget\": %.0f, \"runs\": [",
           CALLING_CONTEXTS, RANK_OWN_CALLING_CONTEXTS, 1u << max_log2, runs[count - 1].ranks, stopped, budget);
    for (unsigned i = 0; i < count; ++i)
        printf("%s\n  {\"ranks\": %u, \"definitions_per_rank\": %u, \"global_definitions\": %u, "
               "\"gathered_bytes_at_root\": %llu, \"root_seconds\": %.4f, \"root_cpu_seconds\": %.4f, "
               "\"root_peak_bytes\": %llu}",
               i ? "," : "", runs[i].ranks, runs[i].definitions_per_rank, runs[i].global_definitions,
               (unsigned long long)runs[i].gathered_bytes_at_root, runs[i].root_seconds, runs[i].root_cpu_seconds,
               (unsigned long long)runs[i].root_peak_bytes);
    printf("\n]}\n");
    return 0;
}
