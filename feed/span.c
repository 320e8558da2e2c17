/*
 * A rank's span and its computation (feed.h): the span from its main
 * thread's first to its last event, the computation that span less the
 * rank's time in MPI. Normal context (adaptrace-report, the analysis
 * process).
 */
#include "feed/feed.h"

void adt_feed_span_event(adt_feed_span *span, uint64_t time)
{
    if (!span->seen || time < span->first)
        span->first = time;
    if (!span->seen || time > span->last)
        span->last = time;
    span->seen = true;
}

adt_feed_rank_time adt_feed_rank_time_of(const adt_feed_span *span, uint64_t ticks_per_second, double mpi_seconds)
{
    adt_feed_rank_time time = { .mpi_seconds = mpi_seconds };
    if (span->seen && ticks_per_second > 0)
        time.span_seconds = (double)(span->last - span->first) / (double)ticks_per_second;
    /* MPI time beyond the span (another thread's, or a clock that stepped)
     * leaves no computation rather than a negative one. */
    time.computation_seconds = time.span_seconds > mpi_seconds ? time.span_seconds - mpi_seconds : 0;
    return time;
}
