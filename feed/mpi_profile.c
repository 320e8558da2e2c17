/*
 * The MPI profile of the event feed (feed.h): per MPI function and rank,
 * calls, exclusive ticks and bytes. Normal context (adaptrace-report, the
 * analysis process): malloc allowed.
 */
#include <stdlib.h>
#include <string.h>

#include "feed/feed.h"

int adt_feed_mpi_profile_create(adt_feed_mpi_profile *profile, uint32_t ranks, uint32_t functions,
                                uint64_t ticks_per_second)
{
    *profile = (adt_feed_mpi_profile){ .ranks = ranks, .ticks_per_second = ticks_per_second };
    size_t capacity = functions ? functions : 1;
    profile->figures = calloc(capacity * (ranks ? ranks : 1), sizeof *profile->figures);
    profile->seconds = calloc(capacity, sizeof *profile->seconds);
    profile->rank_seconds = calloc(ranks ? ranks : 1, sizeof *profile->rank_seconds);
    if (profile->figures == NULL || profile->seconds == NULL || profile->rank_seconds == NULL) {
        adt_feed_mpi_profile_free(profile);
        return -1;
    }
    profile->capacity = capacity;
    profile->functions = functions;
    return 0;
}

void adt_feed_mpi_profile_free(adt_feed_mpi_profile *profile)
{
    free(profile->figures);
    free(profile->seconds);
    free(profile->rank_seconds);
    *profile = (adt_feed_mpi_profile){ 0 };
}

/* The figures of function on rank, the arrays grown to hold function;
 * NULL when out of memory or rank is not one. */
static adt_feed_mpi_figures *figures_at(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function)
{
    if (rank >= profile->ranks)
        return NULL;
    if (function >= profile->capacity) {
        size_t capacity = profile->capacity;
        while (capacity <= function)
            capacity *= 2;
        adt_feed_mpi_figures *grown = realloc(profile->figures, capacity * profile->ranks * sizeof *grown);
        if (grown == NULL)
            return NULL;
        profile->figures = grown;
        memset(grown + profile->capacity * profile->ranks, 0,
               (capacity - profile->capacity) * profile->ranks * sizeof *grown);
        adt_feed_mpi_seconds *seconds = realloc(profile->seconds, capacity * sizeof *seconds);
        if (seconds == NULL)
            return NULL; /* figures grew, capacity did not: the next call grows them again */
        profile->seconds = seconds;
        memset(seconds + profile->capacity, 0, (capacity - profile->capacity) * sizeof *seconds);
        profile->capacity = capacity;
    }
    if (function >= profile->functions)
        profile->functions = function + 1;
    return &profile->figures[(size_t)function * profile->ranks + rank];
}

int adt_feed_mpi_call(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function, uint64_t exclusive_ticks,
                      bool estimated)
{
    adt_feed_mpi_figures *figures = figures_at(profile, rank, function);
    if (figures == NULL)
        return -1;
    figures->calls++;
    figures->ticks += exclusive_ticks;
    if (estimated) {
        figures->estimated_calls++;
        figures->estimated_ticks += exclusive_ticks;
    }
    if (profile->ticks_per_second > 0) {
        double seconds = (double)exclusive_ticks / (double)profile->ticks_per_second;
        profile->seconds[function].seconds += seconds;
        profile->rank_seconds[rank] += seconds;
        if (estimated)
            profile->seconds[function].estimated_seconds += seconds;
    }
    return 0;
}

int adt_feed_mpi_bytes(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function, uint64_t sent,
                       uint64_t received)
{
    adt_feed_mpi_figures *figures = figures_at(profile, rank, function);
    if (figures == NULL)
        return -1;
    figures->bytes_sent += sent;
    figures->bytes_received += received;
    return 0;
}

/* to += from, word by word (the struct is all words). */
static void add_figures(adt_feed_mpi_figures *to, const adt_feed_mpi_figures *from)
{
    uint64_t words[ADT_FEED_MPI_FIGURES_WORDS], added[ADT_FEED_MPI_FIGURES_WORDS];
    memcpy(words, to, sizeof words);
    memcpy(added, from, sizeof added);
    for (size_t w = 0; w < ADT_FEED_MPI_FIGURES_WORDS; w++)
        words[w] += added[w];
    memcpy(to, words, sizeof words);
}

int adt_feed_mpi_sums(adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function,
                      const adt_feed_mpi_figures *sums)
{
    adt_feed_mpi_figures *figures = figures_at(profile, rank, function);
    if (figures == NULL)
        return -1;
    add_figures(figures, sums);
    return 0;
}

adt_feed_mpi_figures adt_feed_mpi_of(const adt_feed_mpi_profile *profile, uint32_t rank, uint32_t function)
{
    if (rank >= profile->ranks || function >= profile->functions)
        return (adt_feed_mpi_figures){ 0 };
    return profile->figures[(size_t)function * profile->ranks + rank];
}

adt_feed_mpi_figures adt_feed_mpi_function(const adt_feed_mpi_profile *profile, uint32_t function)
{
    adt_feed_mpi_figures total = { 0 };
    for (uint32_t r = 0; function < profile->functions && r < profile->ranks; r++)
        add_figures(&total, &profile->figures[(size_t)function * profile->ranks + r]);
    return total;
}

uint64_t adt_feed_mpi_rank_ticks(const adt_feed_mpi_profile *profile, uint32_t rank)
{
    uint64_t ticks = 0;
    for (uint32_t f = 0; rank < profile->ranks && f < profile->functions; f++)
        ticks += profile->figures[(size_t)f * profile->ranks + rank].ticks;
    return ticks;
}

adt_feed_mpi_seconds adt_feed_mpi_function_seconds(const adt_feed_mpi_profile *profile, uint32_t function)
{
    return function < profile->functions ? profile->seconds[function] : (adt_feed_mpi_seconds){ 0 };
}
