/*
 * adaptrace-replay ARCHIVE: the run's skeleton.adts replayed under mpirun
 * with the run's number of ranks (issue #25; docs/folding.md "Replay").
 * Every rank reads the file and builds its plan; the ranks agree that all
 * succeeded before any communication (else the lowest failing rank says
 * why in one line and every rank exits with 2). Then the calls are
 * issued and rank 0 prints one JSON object: the original run's span and
 * the replay's. Its own agreement and reduction go through PMPI_, so that
 * a replay traced with adaptrace records exactly the replayed calls.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static const char usage[] = "usage: mpirun -np RANKS adaptrace-replay [--compute=mean|bins] [--seed=N] ARCHIVE";

/* The options and the archive; false with the reason in error. */
static bool parse(int argc, char **argv, adt_replay_options *options, const char **archive, char *error,
                  size_t error_size)
{
    *options = (adt_replay_options){ false, 1, 1.0 };
    *archive = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        char *end = NULL;
        if (strcmp(arg, "--compute=mean") == 0) {
            options->draw_from_bins = false;
        } else if (strcmp(arg, "--compute=bins") == 0) {
            options->draw_from_bins = true;
        } else if (strncmp(arg, "--seed=", 7) == 0) {
            options->seed = strtoull(arg + 7, &end, 10);
            if (*end != '\0' || end == arg + 7) {
                snprintf(error, error_size, "--seed needs a number, not '%s'", arg + 7);
                return false;
            }
        } else if (arg[0] == '-' || *archive) {
            snprintf(error, error_size, "unexpected argument '%s' (%s)", arg, usage);
            return false;
        } else {
            *archive = arg;
        }
    }
    if (!*archive) {
        snprintf(error, error_size, "no archive given (%s)", usage);
        return false;
    }
    return true;
}

/* The original run's span: the longest of its ranks' (ticks), and which. */
static uint64_t original_span(const adt_skeleton_file *file, uint32_t *rank)
{
    uint64_t longest = 0;
    for (uint32_t k = 0; k < file->class_count; ++k) {
        for (uint32_t t = 0; t < file->classes[k].thread_count; ++t) {
            const adt_skeleton_thread_view *thread = &file->classes[k].threads[t];
            if (thread->span >= longest) {
                longest = thread->span;
                *rank = thread->span_rank;
            }
        }
    }
    return longest;
}

static const char help[] =
    "Replays the MPI calls of an adaptrace run from its skeleton (ARCHIVE/skeleton.adts),\n"
    "under mpirun with the run's number of ranks, and prints the original span and the replay's as JSON.\n"
    "  --compute=mean   spend each computation as its histogram's mean (the default)\n"
    "  --compute=bins   spend a value drawn from the histogram's bins\n"
    "  --seed=N         the seed of those draws (default 1)\n"
    "  --help           print this and exit\n";

int main(int argc, char **argv)
{
    /* --help needs no MPI. */
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("%s\n%s", usage, help);
            return 0;
        }
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char error[1024] = "";
    adt_replay_options options;
    const char *archive = NULL;
    adt_skeleton_file *file = NULL;
    adt_replay_plan *plan = NULL;
    adt_replay_state *state = NULL;
    if (parse(argc, argv, &options, &archive, error, sizeof error)) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", archive, ADT_SKELETON_FILE_NAME);
        file = adt_skeleton_file_read(path, error, sizeof error);
    }
    if (file)
        options.ns_per_tick = 1e9 / (double)file->ticks_per_second;
    if (file)
        plan = adt_replay_plan_build(file, (uint32_t)rank, (uint32_t)size, error, sizeof error);
    if (plan) {
        state = adt_replay_prepare(plan);
        if (!state)
            snprintf(error, sizeof error, "rank %d: out of memory for the buffers of %llu bytes", rank,
                     (unsigned long long)plan->largest_message);
    }
    /* All ranks agree before any communication: the lowest failing rank
     * says why, once. */
    int failing = state ? INT_MAX : rank, first_failing = INT_MAX;
    PMPI_Allreduce(&failing, &first_failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_failing != INT_MAX) {
        if (rank == first_failing)
            fprintf(stderr, "adaptrace-replay: %s\n", error);
        adt_replay_state_free(state);
        adt_replay_plan_free(plan);
        adt_skeleton_file_free(file);
        MPI_Finalize();
        return 2;
    }
    /* The approximations, said once (rank 0's plan; every rank's is
     * agreed to be replayable). */
    bool splits = plan->splits_equally, any_splits = false;
    PMPI_Allreduce(&splits, &any_splits, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && (plan->untrafficked[0] || any_splits))
        fprintf(stderr, "adaptrace-replay: %s%s%severy communicator is replayed as MPI_COMM_WORLD%s\n",
                plan->untrafficked[0] ? "calls without recorded traffic are replayed as their recorded duration (" : "",
                plan->untrafficked, plan->untrafficked[0] ? "); " : "",
                any_splits ? "; MPI_Alltoallv's per-peer counts are not recorded: each rank's sent total is split "
                             "equally among the ranks (its received totals may differ from the original's)"
                           : "");
    uint64_t span = adt_replay_run(state, &options), longest = 0;
    PMPI_Reduce(&span, &longest, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    uint64_t calls = plan->length, all_calls = 0;
    PMPI_Reduce(&calls, &all_calls, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        uint32_t original_rank = 0;
        uint64_t original = original_span(file, &original_rank);
        printf("{\"archive\": \"%s\", \"ranks\": %d, \"calls\": %llu, \"compute\": \"%s\", \"seed\": %llu, "
               "\"original_span_s\": %.6f, \"original_span_rank\": %u, \"replay_span_s\": %.6f, \"ratio\": %.4f}\n",
               archive, size, (unsigned long long)all_calls, options.draw_from_bins ? "bins" : "mean",
               (unsigned long long)options.seed, (double)original * options.ns_per_tick / 1e9, original_rank,
               (double)longest / 1e9, original > 0 ? (double)longest / ((double)original * options.ns_per_tick) : 0.0);
    }
    adt_replay_state_free(state);
    adt_replay_plan_free(plan);
    adt_skeleton_file_free(file);
    MPI_Finalize();
    return 0;
}
