/*
 * adt_trace_write: the end-of-run writer (otf2-format.md section 5).
 *
 * Order of the collective steps (each followed by an agreement, so that a
 * failure on one rank turns every rank onto the same cleanup path and no
 * rank waits in a collective the others skipped):
 *  1. rank 0 refuses an existing archive_dir and creates the temporary
 *     sibling "<archive_dir>.tmp-XXXXXX"; the name goes to every rank;
 *  2. unification of the definitions (unify.c);
 *  3. every location's buffer read-out is streamed into its OTF2 event
 *     writer with global ids (no copy of the trace is made);
 *  4. per-location event counts, time ranges and the sampling rates in use
 *     are gathered on rank 0;
 *  5. every location gets its local definition file (ClockOffset records,
 *     the interrupt-generator mapping table), rank 0 the global ones;
 *  6. the archive is closed, and only if every rank succeeded rank 0
 *     renames the temporary directory to archive_dir (never replacing an
 *     entry that appeared meanwhile); otherwise it is removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/writer_internal.h"

/* ---- the steps ------------------------------------------------------------------ */

static int write_events(writer *w, location_summary *summaries)
{
    OTF2_ErrorCode status = OTF2_Archive_OpenEvtFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "opening the event files", status);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < w->input->thread_count && rc == 0; ++i)
        rc = adt_writer_write_location(w, &w->input->threads[i], &summaries[i]);
    return rc;
}

static int close_event_files(writer *w)
{
    OTF2_ErrorCode status = OTF2_Archive_CloseEvtFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "closing the event files", status);
        return -1;
    }
    return 0;
}

static int write_definitions(writer *w, location_summary *summaries, size_t count)
{
    OTF2_ErrorCode status = OTF2_Archive_OpenDefFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "opening the local definition files", status);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; ++i)
        rc = adt_writer_write_local_definitions(w, &summaries[i]);
    return rc;
}

static int close_definition_files(writer *w)
{
    OTF2_ErrorCode status = OTF2_Archive_CloseDefFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "closing the local definition files", status);
        return -1;
    }
    return 0;
}

/* Like adt_agree, and also tells every rank whether some rank's OTF2
 * archive is abandoned (see writer_otf2.c): then no rank closes its
 * archive, because the close is collective. */
static int agree_on_archive(writer *w, bool ok, const char *step)
{
    /* A step can return success although OTF2 reported an error through
     * the hook (a buffered write that failed later): this rank failed, and
     * says so with OTF2's detail, not as "another rank". */
    if (!ok || adt_writer_otf2_failed())
        adt_writer_error(w, "writing trace %s: %s failed in %s (%s)", w->input->archive_dir, step, w->temp_dir,
                  adt_writer_otf2_detail("no detail from OTF2"));
    uint64_t state = adt_writer_otf2_failed() ? 2 : ok ? 0 : 1;
    if (w->collectives->allreduce_max_u64(w->collectives->context, &state) != 0)
        state = 2;
    if (state == 2)
        w->archive_abandoned = true;
    return state == 0 ? 0 : -1;
}

static int check_input(writer *w)
{
    const adt_trace_input *in = w->input;
    for (size_t i = 0; i < in->thread_count; ++i) {
        if (!in->threads[i].location) {
            adt_writer_error(w, "writing trace %s: thread %zu has no buffer location", in->archive_dir, i);
            return -1;
        }
        for (size_t j = 0; j < i; ++j)
            if (in->threads[j].thread_index == in->threads[i].thread_index) {
                adt_writer_error(w, "writing trace %s: thread index %u is given twice", in->archive_dir,
                          in->threads[i].thread_index);
                return -1;
            }
    }
    if (!in->defs || !in->hostname) {
        adt_writer_error(w, "writing trace %s: no definitions registry or host name given", in->archive_dir);
        return -1;
    }
    return 0;
}

/* A sampled run's archive shows each location's sampling rate over time
 * and the buffer's use at its halvings (writer_events.c): their metrics
 * are defined before the unification. */
static int define_adaptive_metrics(writer *w)
{
    const adt_trace_input *in = w->input;
    if (!in->calling_context_style || in->initial_rate_hz == 0 || adt_defs_adaptive_metrics(in->defs) == 0)
        return 0;
    adt_writer_error(w, "writing trace %s: out of memory defining the sampling-rate and buffer-use metrics",
                     in->archive_dir);
    return -1;
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

int adt_trace_write(const adt_trace_input *input, const adt_collectives *collectives,
                    adt_trace_result *result)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    memset(result, 0, sizeof *result);
    writer w = { .input = input, .collectives = collectives, .result = result };
    const adt_collectives *c = collectives;
    location_summary *summaries = calloc(input->thread_count + 1, sizeof *summaries);
    location_summary *all_summaries = NULL;
    uint64_t *first_summary = NULL;
    bool have_temp_dir = false;
    int rc = -1;

    OTF2_ErrorCallback previous_handler = adt_writer_capture_otf2_errors();

    if (adt_agree(c, summaries && check_input(&w) == 0) != 0)
        goto fail;
    if (adt_writer_prepare_directory(&w) != 0)
        goto fail;
    have_temp_dir = true;
    if (adt_agree(c, adt_writer_prepare_calling_contexts(&w) == 0) != 0)
        goto fail;
    if (adt_agree(c, define_adaptive_metrics(&w) == 0) != 0)
        goto fail;
    if (adt_unify(input->defs, input->hostname, input->threads, input->thread_count, c, &w.maps, &w.global,
                  result->error, sizeof result->error) != 0)
        goto fail;
    if (agree_on_archive(&w, adt_writer_open_archive(&w) == 0, "opening the archive") != 0)
        goto fail;
    if (agree_on_archive(&w, write_events(&w, summaries) == 0, "writing the events") != 0)
        goto fail;
    if (agree_on_archive(&w, close_event_files(&w) == 0, "closing the event files") != 0)
        goto fail;
    if (adt_writer_gather_summaries(&w, summaries, input->thread_count, &all_summaries, &first_summary) != 0)
        goto fail;
    if (c->rank == 0)
        for (size_t i = 0; i < first_summary[c->size]; ++i)
            w.rate_shift_union |= all_summaries[i].rate_shifts;
    if (c->bcast(c->context, &w.rate_shift_union, sizeof w.rate_shift_union, 0) != 0)
        goto fail;
    if (agree_on_archive(&w, write_definitions(&w, summaries, input->thread_count) == 0,
                         "writing the local definitions") != 0)
        goto fail;
    if (agree_on_archive(&w, close_definition_files(&w) == 0, "closing the local definition files") != 0)
        goto fail;
    if (agree_on_archive(&w, c->rank != 0 || adt_writer_write_global_definitions(&w, all_summaries, first_summary) == 0,
                         "writing the global definitions") != 0)
        goto fail;
    OTF2_ErrorCode closed = OTF2_Archive_Close(w.archive);
    w.archive = NULL;
    if (closed != OTF2_SUCCESS)
        adt_writer_otf2_error(&w, "closing the archive", closed);
    /* Before the agreement: once every rank agreed, rank 0 renames the
     * temporary directory, and a rank that measured after that found no
     * file (a 4-rank run counted 2.0 of its 4.0 MiB). */
    result->bytes_written = adt_writer_bytes_of_rank(&w);
    if (adt_agree(c, closed == OTF2_SUCCESS) != 0)
        goto fail;
    for (size_t i = 0; i < input->thread_count; ++i)
        result->events_written += summaries[i].events;
    if (adt_writer_publish(&w) != 0)
        goto fail;
    have_temp_dir = false;
    rc = 0;
fail:
    if (w.archive && !w.archive_abandoned)
        OTF2_Archive_Close(w.archive);
    if (rc != 0) {
        result->failed_here = result->error[0] != '\0';
        adt_writer_error(&w, "writing trace %s failed on another rank", input->archive_dir ? input->archive_dir : "");
        result->bytes_written = 0;
        result->events_written = 0;
        /* every rank has closed its files before rank 0 removes them */
        if (have_temp_dir) {
            c->barrier(c->context);
            if (c->rank == 0)
                adt_remove_tree(w.temp_dir);
        }
    }
    OTF2_Error_RegisterCallback(previous_handler, NULL);
    free(w.otf2_context);
    adt_writer_free_chunk_pool(&w.chunks);
    free(w.cc_parent);
    free(w.cc_depth);
    adt_id_maps_free(&w.maps);
    adt_global_defs_free(&w.global);
    free(summaries);
    free(all_summaries);
    free(first_summary);
    result->seconds = seconds_since(&start);
    return rc;
}
