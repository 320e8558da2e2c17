/*
 * adaptrace-recover: the archive of a run that did not end cleanly, made
 * after the job from the rescue files its processes saved (rescue.h).
 *
 * Execution context: a process of its own (no MPI, no measurement), run
 * on any node that sees the files; normal code throughout.
 *
 * Steps:
 * 1. Read every complete rescue file of <archive>.rescue (a .partial one
 *    is a save the process was killed in: named, not used). The run's
 *    ranks are the files' world ranks; a rank without a file is "not
 *    saved" and gets an empty location, so that communicators keep their
 *    members. Files of processes that ended before MPI_Init (pid-*) are
 *    the ranks only when no file has a rank: a program without MPI.
 * 2. Rebuild each process as it was: its definitions from the journal,
 *    its calling contexts from the saved tree and module list, its buffer
 *    from the image (chains cut where a thread was changing them), then
 *    close the regions still open at the ending, at the time of the save,
 *    and mark the end with a MeasurementOnOff(off) record.
 * 3. Count the point-to-point messages whose other side is not in the
 *    trace (sent to a rank that was not saved or never received them).
 * 4. Write skeleton.adts from the ranks' skeleton sections when every
 *    rank's rescue file has one (an ending in normal code saves the
 *    rank's part, an ending signal's handler an image of the skeletons'
 *    share, encoded here into the part), the archive with the end-of-run writer, one
 *    thread per rank over adt_thread_group collectives (the same
 *    unification as a live run), and summary.json with how the run ended
 *    and why skeleton.adts is missing, if it is. The skeleton file is
 *    written first into the rescue directory and moved into the archive
 *    once that exists (the writer makes it whole, then renames it).
 * 5. Remove the rescue files, the ranks' files of event chunks streamed
 *    to the online analyzers (<archive>.events, read in step 2 as their
 *    spill files), and temporary directories that a killed final write
 *    left behind.
 *
 * Files: this one runs the steps and holds 4 and 5; recover_read.c step 1,
 * recover_rebuild.c steps 2 and 3 (recover_internal.h, their shared state).
 */
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recover_internal.h"

/* ---- 2. rebuilding, or leaving out a damaged file ---------------------- */

/* What a process holds, rebuilt or read: freed, its file unmapped. */
static void free_process(saved_process *process)
{
    adt_buffer_destroy(process->buffer);
    adt_defs_destroy(process->defs);
    if (process->spill_fd >= 0)
        close(process->spill_fd);
    if (process->file != NULL)
        munmap(process->file, process->file_bytes);
    free(process->lines);
    free(process->threads);
    free(process->thread_names);
    free(process->skeleton_encoded);
}

/* A file whose contents cannot be rebuilt (adt_recover_rebuild said why,
 * once) is left out like a rank that was not saved: the other ranks are
 * worth their archive. */
static int rebuild_or_leave_out(recovery *run, saved_process *process)
{
    if (process->header == NULL)
        return adt_recover_rebuild(run, process);
    size_t message_ends = run->message_end_count;
    if (adt_recover_rebuild(run, process) == 0)
        return 0;
    run->message_end_count = message_ends;
    free_process(process);
    *process = (saved_process){ .rank = process->rank, .spill_fd = -1 };
    return adt_recover_rebuild(run, process);
}

static bool any_saved(const recovery *run)
{
    for (uint32_t r = 0; r < run->ranks; r++)
        if (run->processes[r].header != NULL)
            return true;
    return false;
}

/* ---- 4. the ending and the archive -------------------------------------- */

static void describe_kind(const adt_rescue_header *header, char *how, size_t size)
{
    switch ((adt_rescue_kind)header->kind) {
    case ADT_RESCUE_SIGNAL:
        snprintf(how, size, "SIG%s", sigabbrev_np(header->signal) ? sigabbrev_np(header->signal) : "?");
        break;
    case ADT_RESCUE_MPI_ABORT:
        snprintf(how, size, "MPI_Abort");
        break;
    case ADT_RESCUE_NO_FINALIZE:
        snprintf(how, size, "exit without MPI_Finalize");
        break;
    case ADT_RESCUE_SNAPSHOT:
        snprintf(how, size, "snapshot (SIG%s)", sigabbrev_np(header->signal) ? sigabbrev_np(header->signal) : "?");
        break;
    }
}

/* The first process to end, by the corrected clock: the run's ending. */
static void describe_ending(recovery *run)
{
    adt_run_ending *ending = &run->ending;
    const saved_process *first = NULL;
    int64_t first_time = 0;
    size_t missing_used = 0;
    ending->ranks_total = run->ranks;
    ending->rank = ADT_RESCUE_NO_RANK;
    for (uint32_t r = 0; r < run->ranks; r++) {
        const saved_process *process = &run->processes[r];
        if (process->header == NULL) {
            /* The list holds the first ranks that fit; ranks_saved of
             * ranks_total stays exact. */
            size_t room = sizeof ending->ranks_missing - missing_used;
            int written = snprintf(ending->ranks_missing + missing_used, room, "%s%u", missing_used ? ", " : "", r);
            if (written > 0 && (size_t)written < room)
                missing_used += (size_t)written;
            else
                ending->ranks_missing[missing_used] = '\0';
            continue;
        }
        ending->ranks_saved++;
        ending->regions_closed += process->regions_closed;
        ending->records_cut += process->repair.records_cut - process->repair.list_records_cut;
        ending->streamed_events_missing += process->repair.list_records_cut;
        ending->streamed_chunks_rescued += process->undelivered_written;
        int64_t offset = process->header->has_clock_offset ? process->header->clock_offset.offset : 0;
        int64_t time = (int64_t)process->header->end_time + offset;
        /* A snapshot is not an ending: an ending anywhere is the run's. */
        bool snapshot = process->header->kind == ADT_RESCUE_SNAPSHOT;
        bool first_snapshot = first != NULL && first->header->kind == ADT_RESCUE_SNAPSHOT;
        if (first == NULL || (first_snapshot && !snapshot) || (first_snapshot == snapshot && time < first_time)) {
            first = process;
            first_time = time;
        }
    }
    if (first == NULL)
        return;
    describe_kind(first->header, ending->how, sizeof ending->how);
    ending->signal = first->header->signal;
    ending->rank = first->header->rank;
    uint64_t resolution = first->header->timer_resolution ? first->header->timer_resolution : 1000000000ull;
    ending->after_seconds = (double)(first->header->end_time - first->header->start_time) / (double)resolution;
    ending->saves_cut_short = run->cut_short;
    snprintf(ending->cut_short_files, sizeof ending->cut_short_files, "%s", run->cut_short_names);
}

/* ---- 4. the skeletons --------------------------------------------------- */

static const char *const saved_words[ADT_SKELETON_SAVED_CAUSES] = {
    [ADT_SKELETON_SAVED_NOT_FOLDING] = "had no skeleton (ADAPTRACE_SKELETON off, or a buffer under 16 MiB)",
    [ADT_SKELETON_SAVED] = "saved theirs",
    [ADT_SKELETON_NOT_SAVED_SNAPSHOT] = "were saved by a snapshot only, which leaves folding running",
    [ADT_SKELETON_NOT_SAVED_MEMORY] = "were out of memory for the encoding",
    [ADT_SKELETON_NOT_SAVED_STILL_FOLDING] = "had a thread still in the middle of a fold after a second",
    [ADT_SKELETON_NOT_SAVED_NO_BARRIER] = "could not wait for their threads' folds (membarrier refused)",
    [ADT_SKELETON_NOT_SAVED_INTERRUPTED_FOLD] = "were ended by a signal in the middle of a fold",
    [ADT_SKELETON_NOT_SAVED_DAMAGED] = "saved a damaged skeleton image",
};

/* The cause skeleton.adts names for a rank without a skeleton: the
 * summary's key of adt_skeleton_saved, or NOT_SAVED_CAUSE for a rank
 * whose rescue file is missing or was left out. */
#define NOT_SAVED_CAUSE "not_saved"

/* The skeleton a process saved (its rank's part), or NULL. */
static const uint8_t *saved_part(const saved_process *process)
{
    return process->header != NULL && process->skeleton_saved == ADT_SKELETON_SAVED ? process->skeleton_part : NULL;
}

/* Counts the ranks by adt_skeleton_saved, and which are missing from
 * skeleton.adts and why (in words, into why; "" when every rank saved
 * its skeleton). Returns whether the file can be written: a rank saved
 * its skeleton and those that did agree on their function names (the
 * first field of every key), else why says why not. */
static bool skeleton_missing(recovery *run, char *why, size_t size)
{
    adt_run_ending *ending = &run->ending;
    const saved_process *first = NULL;
    uint32_t not_saved = 0;
    size_t used = 0;
    why[0] = '\0';
    for (uint32_t r = 0; r < run->ranks; r++) {
        const saved_process *process = &run->processes[r];
        if (process->header != NULL)
            ending->skeleton_ranks[process->skeleton_saved]++;
        else
            not_saved++;
        if (saved_part(process) == NULL)
            continue;
        if (first == NULL)
            first = process;
        else if (process->skeleton_names_bytes != first->skeleton_names_bytes ||
                 memcmp(process->skeleton_names, first->skeleton_names, first->skeleton_names_bytes) != 0) {
            snprintf(why, size, "the ranks' function names differ");
            return false;
        }
    }
    if (not_saved > 0)
        used += (size_t)snprintf(why, size, "%u rank%s saved no rescue file (or a damaged one)", not_saved,
                                 not_saved == 1 ? "" : "s");
    for (int cause = 0; cause < ADT_SKELETON_SAVED_CAUSES && used < size; cause++)
        if (cause != ADT_SKELETON_SAVED && ending->skeleton_ranks[cause] > 0)
            used += (size_t)snprintf(why + used, size - used, "%s%u rank%s %s", used ? ", " : "",
                                     ending->skeleton_ranks[cause], ending->skeleton_ranks[cause] == 1 ? "" : "s",
                                     saved_words[cause]);
    return first != NULL;
}

/* Each rank's image of its skeletons (an ending signal's save) encoded
 * into its part, as the rank would have encoded it in normal code. An
 * image whose check does not match, or that does not encode (its tables
 * do not fit its slabs; out of memory, which this does not tell apart),
 * is left out with one line and its rank counted as damaged: the rest of
 * the archive is recovered, and skeleton.adts names the rank missing. */
static void encode_images(recovery *run)
{
    for (uint32_t r = 0; r < run->ranks; r++) {
        saved_process *process = &run->processes[r];
        if (process->header == NULL)
            continue;
        if (process->skeleton_image != NULL && process->skeleton_damage == NULL) {
            process->skeleton_encoded =
                adt_skeleton_image_encode(process->skeleton_image, process->skeleton_image_bytes, r,
                                          &process->skeleton_part_bytes, process->skeleton_damage_text,
                                          sizeof process->skeleton_damage_text);
            process->skeleton_part = process->skeleton_encoded;
            if (process->skeleton_encoded == NULL)
                process->skeleton_damage = process->skeleton_damage_text;
        }
        if (process->skeleton_damage != NULL) {
            process->skeleton_saved = ADT_SKELETON_NOT_SAVED_DAMAGED;
            fprintf(stderr, "adaptrace-recover: %s: its skeleton's image is damaged (%s), left out\n", process->path,
                    process->skeleton_damage);
        }
    }
}

/* skeleton.adts from the ranks' parts, into the rescue directory (moved
 * into the archive by move_skeleton); the clock rate is the headers'
 * (adt_clock_resolution_now, the same on every rank of a node). The ranks
 * without a saved skeleton are named missing in it, with their cause.
 * Says why not, or which ranks it lacks, in run->ending.skeleton_problem. */
static void write_skeleton(recovery *run, const char *directory)
{
    adt_run_ending *ending = &run->ending;
    encode_images(run);
    if (!skeleton_missing(run, ending->skeleton_problem, sizeof ending->skeleton_problem))
        return;
    const saved_process *first = NULL;
    for (uint32_t r = 0; first == NULL; r++)
        first = saved_part(&run->processes[r]) != NULL ? &run->processes[r] : NULL;
    const char **names = malloc(first->skeleton_function_count * sizeof *names);
    const uint8_t **parts = malloc(run->ranks * sizeof *parts);
    size_t *sizes = malloc(run->ranks * sizeof *sizes);
    const char **causes = malloc(run->ranks * sizeof *causes);
    if (names == NULL || parts == NULL || sizes == NULL || causes == NULL) {
        snprintf(ending->skeleton_problem, sizeof ending->skeleton_problem, "out of memory");
    } else {
        const char *name = first->skeleton_names;
        for (uint32_t f = 0; f < first->skeleton_function_count; f++, name += strlen(name) + 1)
            names[f] = name;
        for (uint32_t r = 0; r < run->ranks; r++) {
            const saved_process *process = &run->processes[r];
            parts[r] = saved_part(process);
            sizes[r] = process->skeleton_part_bytes;
            causes[r] = process->header != NULL ? adt_skeleton_saved_keys[process->skeleton_saved] : NOT_SAVED_CAUSE;
        }
        char path[ADT_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", directory, ADT_SKELETON_FILE_NAME);
        if (adt_skeleton_file_write(path, names, first->skeleton_function_count, parts, sizes, run->ranks,
                                    first->header->timer_resolution, causes) != 0) {
            snprintf(ending->skeleton_problem, sizeof ending->skeleton_problem, "writing it failed: %s",
                     errno == EINVAL ? "a rank's skeleton is damaged" : strerror(errno));
        } else {
            /* The writer copies each class's structure as its rank gave
             * it: the reader is the one that checks it whole. */
            char error[128];
            adt_skeleton_file *check = adt_skeleton_file_read(path, error, sizeof error);
            if (check != NULL)
                ending->skeleton_written = true;
            else
                snprintf(ending->skeleton_problem, sizeof ending->skeleton_problem,
                         "a rank's skeleton is damaged: %s", error);
            adt_skeleton_file_free(check);
            if (check == NULL)
                unlink(path);
        }
    }
    free(names);
    free(parts);
    free(sizes);
    free(causes);
}

static int move_skeleton(recovery *run, const char *directory)
{
    if (!run->ending.skeleton_written)
        return 0;
    char from[ADT_PATH_MAX + 32], to[ADT_PATH_MAX + 32];
    snprintf(from, sizeof from, "%s/%s", directory, ADT_SKELETON_FILE_NAME);
    snprintf(to, sizeof to, "%s/%s", run->archive_dir, ADT_SKELETON_FILE_NAME);
    if (rename(from, to) == 0)
        return 0;
    fprintf(stderr, "adaptrace-recover: cannot move %s into the archive: %s\n", from, strerror(errno));
    return -1;
}

typedef struct rank_job {
    recovery *run;
    saved_process *process;
} rank_job;

static void *write_rank(void *arg)
{
    rank_job *job = arg;
    recovery *run = job->run;
    saved_process *process = job->process;
    const saved_process *reference = process;
    for (uint32_t r = 0; reference->header == NULL && r < run->ranks; r++)
        reference = &run->processes[r];
    const adt_rescue_header *header = reference->header;
    adt_collectives collectives = adt_thread_group_collectives(run->group, process->rank);
    adt_trace_input input = {
        .archive_dir = run->archive_dir,
        .hostname = process->header != NULL ? process->header->hostname : "unknown (not saved)",
        .threads = process->threads,
        .thread_count = process->thread_count,
        .defs = process->defs,
        .calling_context_style = header->sampling != 0,
        .initial_rate_hz = header->initial_rate_hz,
        .creator = "adaptrace " ADAPTRACE_VERSION " (recovered)",
        .timer_resolution = header->timer_resolution,
    };
    if (process->header != NULL && process->header->has_clock_offset) {
        /* Only the offset of MPI_Init was measured: it holds until the
         * ending (the live run measures a second one in MPI_Finalize). */
        input.clock_offsets[0] = process->header->clock_offset;
        input.clock_offsets[1] = process->header->clock_offset;
        if (process->header->end_time > input.clock_offsets[0].local_time)
            input.clock_offsets[1].local_time = process->header->end_time;
    }
    process->write_status = adt_trace_write(&input, &collectives, &process->written);
    if (process->write_status != 0)
        return NULL;
    process->counters.bytes_written = process->written.bytes_written;
    process->counters.events_written = process->written.events_written;
    process->counters.write_seconds = process->written.seconds;
    process->summary_status = adt_summary_publish(&collectives, &process->counters, process->lines,
                                                  run->archive_dir, input.initial_rate_hz, run->quiet, &run->ending,
                                                  "");
    return NULL;
}

static int write_archive(recovery *run)
{
    run->group = adt_thread_group_create(run->ranks);
    pthread_t *threads = calloc(run->ranks, sizeof *threads);
    rank_job *jobs = calloc(run->ranks, sizeof *jobs);
    if (run->group == NULL || threads == NULL || jobs == NULL) {
        free(threads);
        free(jobs);
        fprintf(stderr, "adaptrace-recover: out of memory for %u ranks\n", run->ranks);
        return -1;
    }
    uint32_t started = 0;
    for (; started < run->ranks; started++) {
        jobs[started] = (rank_job){ .run = run, .process = &run->processes[started] };
        if (pthread_create(&threads[started], NULL, write_rank, &jobs[started]) != 0)
            break;
    }
    if (started < run->ranks) {
        /* The group waits for all ranks in its first collective: without
         * every thread it cannot go on. */
        fprintf(stderr, "adaptrace-recover: cannot start a thread for each of %u ranks\n", run->ranks);
        _exit(1);
    }
    for (uint32_t r = 0; r < run->ranks; r++)
        pthread_join(threads[r], NULL);
    free(threads);
    free(jobs);
    saved_process *root = &run->processes[0];
    if (root->write_status != 0) {
        for (uint32_t r = 0; r < run->ranks; r++)
            if (run->processes[r].written.failed_here || r == 0)
                fprintf(stderr, "adaptrace-recover: no archive written: %s\n",
                        run->processes[r].written.error[0] ? run->processes[r].written.error : "writing failed");
        return -1;
    }
    return root->summary_status;
}

/* ---- 5. cleaning up ------------------------------------------------------- */

/* A final write killed outright (SIGKILL) leaves <archive>.tmp-XXXXXX. */
static size_t remove_abandoned_writes(const char *archive_dir)
{
    char pattern[ADT_PATH_MAX + 16];
    snprintf(pattern, sizeof pattern, "%s.tmp-??????", archive_dir);
    glob_t found;
    size_t removed = 0;
    if (glob(pattern, GLOB_ONLYDIR, NULL, &found) != 0)
        return 0;
    for (size_t i = 0; i < found.gl_pathc; i++) {
        fprintf(stderr, "adaptrace-recover: removing %s, left by a final write that was killed\n",
                found.gl_pathv[i]);
        adt_remove_tree(found.gl_pathv[i]);
        removed++;
    }
    globfree(&found);
    return removed;
}

static void free_recovery(recovery *run)
{
    for (uint32_t r = 0; r < run->ranks; r++)
        free_process(&run->processes[r]);
    free(run->processes);
    free(run->message_ends);
    adt_thread_group_destroy(run->group);
}

int adt_recover_run(const char *archive_dir, bool quiet)
{
    recovery run = { .archive_dir = archive_dir, .quiet = quiet };
    char directory[ADT_PATH_MAX + 16];
    snprintf(directory, sizeof directory, "%s%s", archive_dir, ADT_RESCUE_SUFFIX);
    struct stat status;
    if (stat(directory, &status) != 0) {
        size_t removed = remove_abandoned_writes(archive_dir);
        fprintf(stderr, "adaptrace-recover: nothing to recover: %s does not exist%s\n", directory,
                removed ? " (the run was killed during its final write, before it could save anything)" : "");
        return 1;
    }
    int result = adt_recover_find_processes(&run, directory);
    for (uint32_t r = 0; result == 0 && r < run.ranks; r++)
        result = rebuild_or_leave_out(&run, &run.processes[r]);
    if (result == 0 && !any_saved(&run)) {
        /* Every file was left out while rebuilding: no rank to take the
         * run's settings from. */
        fprintf(stderr, "adaptrace-recover: no usable rescue file in %s\n", directory);
        result = -1;
    }
    if (result == 0) {
        run.ending.messages_unmatched = adt_recover_unmatched_messages(&run);
        describe_ending(&run);
        write_skeleton(&run, directory);
        result = write_archive(&run);
        if (result == 0)
            result = move_skeleton(&run, directory);
    }
    if (result == 0) {
        remove_abandoned_writes(archive_dir);
        adt_remove_tree(directory);
        /* The ranks' files of streamed event chunks are in the archive
         * now, as at a normal end (online/archive.c). */
        snprintf(directory, sizeof directory, ADT_ONLINE_EVENTS_DIRECTORY, archive_dir);
        adt_remove_tree(directory);
    }
    free_recovery(&run);
    return result == 0 ? 0 : 1;
}
