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
 * 4. Write the archive with the end-of-run writer, one thread per rank
 *    over adt_thread_group collectives (the same unification as a live
 *    run), and summary.json with how the run ended.
 * 5. Remove the rescue files, and temporary directories that a killed
 *    final write left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rescue.h"
#include "runtime_internal.h"
#include "sampler/sampler.h"

typedef struct saved_process {
    char path[ADT_PATH_MAX + 64];
    void *file;
    size_t file_bytes;
    const adt_rescue_header *header;   /* NULL: a rank that was not saved */
    const void *journal;
    size_t journal_bytes;
    const void *image;
    size_t image_bytes;
    const void *tree;
    size_t tree_bytes;
    const char *maps;
    size_t maps_bytes;
    adt_run_counters counters;
    const adt_location_summary *saved_lines;
    size_t saved_line_count;
    /* rebuilt */
    uint32_t rank;
    adt_defs *defs;
    adt_buffer *buffer;
    int spill_fd;
    adt_image_repair repair;
    uint64_t regions_closed;
    adt_location_summary *lines;
    adt_trace_thread *threads;
    char *thread_names;
    size_t thread_count;
    /* written */
    adt_trace_result written;
    int write_status;
    int summary_status;
} saved_process;

/* One point-to-point message end: +1 sent, -1 received. */
typedef struct message_end {
    uint64_t comm_key;
    uint32_t sender;
    uint32_t receiver;
    uint32_t tag;
    int32_t delta;
} message_end;

typedef struct recovery {
    const char *archive_dir;
    bool quiet;
    saved_process *processes;  /* by rank */
    uint32_t ranks;
    uint32_t cut_short;        /* .partial files */
    char cut_short_names[256];
    message_end *message_ends;
    size_t message_end_count, message_end_capacity;
    adt_run_ending ending;
    adt_thread_group *group;
} recovery;

/* ---- 1. reading the files ---------------------------------------------- */

static int map_file(saved_process *process)
{
    int fd = open(process->path, O_RDONLY | O_CLOEXEC);
    struct stat status;
    if (fd < 0 || fstat(fd, &status) != 0) {
        fprintf(stderr, "adaptrace-recover: cannot read %s: %s\n", process->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    process->file_bytes = (size_t)status.st_size;
    process->file = process->file_bytes > 0 ? mmap(NULL, process->file_bytes, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (process->file == MAP_FAILED || process->file == NULL) {
        process->file = NULL;
        fprintf(stderr, "adaptrace-recover: cannot map %s: %s\n", process->path, strerror(errno));
        return -1;
    }
    return 0;
}

static int bad_file(const saved_process *process, const char *why)
{
    fprintf(stderr, "adaptrace-recover: %s is not usable: %s\n", process->path, why);
    return -1;
}

static int read_sections(saved_process *process)
{
    const char *at = process->file;
    size_t left = process->file_bytes;
    if (left < sizeof(adt_rescue_header))
        return bad_file(process, "shorter than its header");
    process->header = (const adt_rescue_header *)at;
    if (process->header->magic != ADT_RESCUE_MAGIC)
        return bad_file(process, "not a rescue file of adaptrace");
    if (process->header->version != ADT_RESCUE_VERSION)
        return bad_file(process, "written by another version of adaptrace");
    at += sizeof(adt_rescue_header);
    left -= sizeof(adt_rescue_header);
    bool ended = false;
    while (!ended) {
        adt_rescue_section section;
        if (left < sizeof section)
            return bad_file(process, "cut short (the save did not finish)");
        memcpy(&section, at, sizeof section);
        at += sizeof section;
        left -= sizeof section;
        size_t padded = (size_t)((section.bytes + 7u) & ~(uint64_t)7u);
        if (section.bytes > left || padded > left)
            return bad_file(process, "cut short (the save did not finish)");
        switch ((adt_rescue_section_tag)section.tag) {
        case ADT_RESCUE_SECTION_DEFS:
            process->journal = at, process->journal_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_BUFFER:
            process->image = at, process->image_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_CONTEXTS:
            process->tree = at, process->tree_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_MAPS:
            process->maps = at, process->maps_bytes = section.bytes;
            break;
        case ADT_RESCUE_SECTION_COUNTERS:
            if (section.bytes != sizeof process->counters)
                return bad_file(process, "its counters have another layout");
            memcpy(&process->counters, at, sizeof process->counters);
            break;
        case ADT_RESCUE_SECTION_LOCATION_LINES:
            process->saved_lines = (const adt_location_summary *)at;
            process->saved_line_count = section.bytes / sizeof(adt_location_summary);
            break;
        case ADT_RESCUE_SECTION_END:
            ended = true;
            break;
        default:
            return bad_file(process, "a section of an unknown kind");
        }
        at += padded;
        left -= padded;
    }
    if (process->image == NULL || process->journal == NULL)
        return bad_file(process, "its buffer or definitions are missing");
    return 0;
}

static void note_cut_short(recovery *run, const char *path)
{
    const char *name = strrchr(path, '/');
    name = name != NULL ? name + 1 : path;
    size_t used = strlen(run->cut_short_names);
    snprintf(run->cut_short_names + used, sizeof run->cut_short_names - used, "%s%.*s", used ? ", " : "",
             (int)(strlen(name) - strlen(".partial")), name);
    run->cut_short++;
}

static int compare_pid(const void *a, const void *b)
{
    int32_t left = ((const saved_process *)a)->header->pid, right = ((const saved_process *)b)->header->pid;
    return (left > right) - (left < right);
}

/* Reads every complete file and places it at its rank. */
static int find_processes(recovery *run, const char *directory)
{
    char pattern[ADT_PATH_MAX + 64];
    snprintf(pattern, sizeof pattern, "%s/*.adtr.partial", directory);
    glob_t partial;
    if (glob(pattern, 0, NULL, &partial) == 0)
        for (size_t i = 0; i < partial.gl_pathc; i++)
            note_cut_short(run, partial.gl_pathv[i]);
    globfree(&partial);
    snprintf(pattern, sizeof pattern, "%s/*.adtr", directory);
    glob_t found;
    if (glob(pattern, 0, NULL, &found) != 0) {
        fprintf(stderr, "adaptrace-recover: %s holds no complete rescue file%s\n", directory,
                run->cut_short ? " (every save was cut short: the processes were killed while saving)" : "");
        return -1;
    }
    saved_process *loaded = calloc(found.gl_pathc, sizeof *loaded);
    size_t count = 0;
    uint32_t ranks = 0;
    bool any_rank = false;
    for (size_t i = 0; loaded != NULL && i < found.gl_pathc; i++) {
        saved_process *process = &loaded[count];
        snprintf(process->path, sizeof process->path, "%s", found.gl_pathv[i]);
        if (map_file(process) != 0 || read_sections(process) != 0) {
            if (process->file != NULL)
                munmap(process->file, process->file_bytes);
            memset(process, 0, sizeof *process);
            continue;
        }
        if (process->header->rank != ADT_RESCUE_NO_RANK) {
            any_rank = true;
            if (process->header->size > ranks)
                ranks = process->header->size;
        }
        count++;
    }
    globfree(&found);
    if (loaded == NULL || count == 0) {
        free(loaded);
        fprintf(stderr, "adaptrace-recover: no usable rescue file in %s\n", directory);
        return -1;
    }
    if (!any_rank) {
        /* A program without MPI (or ranks that all ended before MPI_Init):
         * its processes in pid order. */
        qsort(loaded, count, sizeof *loaded, compare_pid);
        ranks = (uint32_t)count;
    }
    run->processes = calloc(ranks, sizeof *run->processes);
    if (run->processes == NULL) {
        free(loaded);
        return -1;
    }
    run->ranks = ranks;
    for (size_t i = 0; i < count; i++) {
        saved_process *process = &loaded[i];
        uint32_t rank = any_rank ? process->header->rank : (uint32_t)i;
        if (rank == ADT_RESCUE_NO_RANK || rank >= ranks) {
            fprintf(stderr,
                    "adaptrace-recover: %s left out: its process (pid %d) ended before MPI_Init gave it a rank\n",
                    process->path, (int)process->header->pid);
            munmap(process->file, process->file_bytes);
            continue;
        }
        run->processes[rank] = *process;
        run->processes[rank].rank = rank;
    }
    free(loaded);
    for (uint32_t r = 0; r < ranks; r++)
        run->processes[r].rank = r;
    return 0;
}

/* ---- 2. rebuilding a process -------------------------------------------- */

static bool record_check(const adt_record_view *record, void *arg)
{
    return adt_record_valid(arg, record);
}

static int spill_file(const saved_process *process)
{
    const void *spill = NULL;
    size_t bytes = adt_buffer_image_spill(process->image, process->image_bytes, &spill);
    if (bytes == 0)
        return -1;
    int fd = memfd_create("adaptrace-spill", MFD_CLOEXEC);
    size_t done = 0;
    while (fd >= 0 && done < bytes) {
        ssize_t written = write(fd, (const char *)spill + done, bytes - done);
        if (written <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)written;
    }
    return fd;
}

static int add_message_end(recovery *run, uint64_t comm_key, uint32_t sender, uint32_t receiver, uint32_t tag,
                           int32_t delta)
{
    if (run->message_end_count == run->message_end_capacity) {
        size_t capacity = run->message_end_capacity ? 2 * run->message_end_capacity : 1024;
        message_end *grown = realloc(run->message_ends, capacity * sizeof *grown);
        if (grown == NULL)
            return -1;
        run->message_ends = grown;
        run->message_end_capacity = capacity;
    }
    run->message_ends[run->message_end_count++] =
        (message_end){ .comm_key = comm_key, .sender = sender, .receiver = receiver, .tag = tag, .delta = delta };
    return 0;
}

static void note_message(recovery *run, saved_process *process, const adt_record_view *record)
{
    const adt_rec_p2p *message = record->payload;
    uint32_t peer;
    uint64_t comm_key;
    if (!adt_defs_comm_world_rank(process->defs, message->comm, message->peer, &peer, &comm_key))
        return;
    bool sent = record->kind == ADT_REC_MPI_SEND || record->kind == ADT_REC_MPI_ISEND;
    if (sent)
        add_message_end(run, comm_key, process->rank, peer, message->tag, 1);
    else
        add_message_end(run, comm_key, peer, process->rank, message->tag, -1);
}

typedef struct open_regions {
    adt_rec_region *stack;
    size_t depth, capacity;
} open_regions;

static int push_region(open_regions *open, const adt_rec_region *region)
{
    if (open->depth == open->capacity) {
        size_t capacity = open->capacity ? 2 * open->capacity : 16;
        adt_rec_region *grown = realloc(open->stack, capacity * sizeof *grown);
        if (grown == NULL)
            return -1;
        open->stack = grown;
        open->capacity = capacity;
    }
    open->stack[open->depth++] = *region;
    return 0;
}

/* Reads the location once: its open regions, its last time, its messages;
 * then closes the regions at the save's time (or the last record's, if
 * later) and marks the end of the measurement there. */
static int close_location(recovery *run, saved_process *process, adt_location *location)
{
    adt_reader *reader = adt_reader_open(location);
    if (reader == NULL)
        return -1;
    open_regions open = {0};
    uint64_t last_time = 0;
    adt_record_view record;
    int status = 0;
    while (status == 0 && adt_reader_next(reader, &record)) {
        last_time = record.time;
        switch (record.kind) {
        case ADT_REC_ENTER:
            status = push_region(&open, record.payload);
            break;
        case ADT_REC_LEAVE:
            if (open.depth > 0)
                open.depth--;
            break;
        case ADT_REC_MPI_SEND:
        case ADT_REC_MPI_ISEND:
        case ADT_REC_MPI_RECV:
        case ADT_REC_MPI_IRECV:
            note_message(run, process, &record);
            break;
        default:
            break;
        }
    }
    adt_reader_close(reader);
    uint64_t end = process->header->end_time > last_time ? process->header->end_time : last_time;
    while (status == 0 && open.depth > 0) {
        adt_rec_region leave = open.stack[--open.depth];
        if (adt_buffer_append_event(location, ADT_REC_LEAVE, end, &leave, sizeof leave) == ADT_APPEND_OK)
            process->regions_closed++;
    }
    adt_rec_on_off off = { .on = 0 };
    adt_buffer_append_event(location, ADT_REC_MEASUREMENT_ON_OFF, end, &off, sizeof off);
    free(open.stack);
    return status;
}

/* A rank without a rescue file says so in its location's name. */
static int list_threads(saved_process *process)
{
    const char *main_thread_name = process->header != NULL ? "Master thread" : "Master thread (not saved)";
    process->threads =
        adt_list_locations(process->buffer, main_thread_name, &process->thread_count, &process->thread_names);
    return process->threads != NULL ? 0 : -1;
}

/* The saved counters, with what the rebuilt buffer holds now: records
 * cut from a chain are not in the trace (kept samples cut count as
 * dropped, as the buffer counts them). */
static void recount(saved_process *process)
{
    size_t count = adt_buffer_location_count(process->buffer);
    process->lines = calloc(count ? count : 1, sizeof *process->lines);
    adt_run_counters rebuilt;
    memset(&rebuilt, 0, sizeof rebuilt);
    for (size_t i = 0; i < count; i++) {
        adt_location_stats stats;
        adt_location_get_stats(adt_buffer_location_at(process->buffer, i), &stats);
        rebuilt.mpi_events += stats.events.records + stats.spilled_records;
        rebuilt.samples_kept += stats.samples_kept;
        adt_summary_add_losses(&rebuilt, &stats);
        if (process->lines == NULL)
            continue;
        if (i < process->saved_line_count)
            process->lines[i] = process->saved_lines[i];
        process->lines[i].rank = process->rank;
        process->lines[i].thread = adt_location_id(adt_buffer_location_at(process->buffer, i));
        process->lines[i].samples_kept = stats.samples_kept;
        process->lines[i].mpi_events = stats.events.records + stats.spilled_records;
    }
    adt_run_counters *counters = &process->counters;
    if (process->header == NULL) {
        memset(counters, 0, sizeof *counters);
        counters->locations = count;
    }
    counters->mpi_events = rebuilt.mpi_events;
    counters->samples_kept = rebuilt.samples_kept;
    counters->samples_dropped = rebuilt.samples_dropped;
    counters->events_dropped = rebuilt.events_dropped;
    memcpy(counters->samples_lost, rebuilt.samples_lost, sizeof counters->samples_lost);
    memcpy(counters->events_lost, rebuilt.events_lost, sizeof counters->events_lost);
    counters->location_entries = process->lines != NULL ? count : 0;
}

static int rebuild(recovery *run, saved_process *process)
{
    char error[512];
    process->spill_fd = -1;
    if (process->header == NULL) {
        process->defs = adt_defs_create();
        process->buffer = adt_buffer_create(64u << 10, 1u << 10, 1);
        if (process->defs == NULL || process->buffer == NULL ||
            adt_buffer_add_location(process->buffer, 0) == NULL)
            return -1;
        recount(process);
        return list_threads(process);
    }
    process->defs = adt_defs_replay(process->journal, process->journal_bytes);
    if (process->defs == NULL) {
        fprintf(stderr, "adaptrace-recover: %s: its definitions cannot be read back\n", process->path);
        return -1;
    }
    if (process->header->sampling &&
        adt_sampler_define_saved_contexts(process->defs, process->tree, process->tree_bytes, process->maps,
                                          process->maps_bytes) != 0) {
        fprintf(stderr, "adaptrace-recover: %s: its calling contexts cannot be defined\n", process->path);
        return -1;
    }
    process->spill_fd = spill_file(process);
    /* One chunk per location more: room for the records that close it. */
    process->buffer = adt_buffer_image_read(process->image, process->image_bytes, 1,
                                            process->spill_fd, record_check, process->defs, &process->repair,
                                            error, sizeof error);
    if (process->buffer == NULL) {
        fprintf(stderr, "adaptrace-recover: %s: %s\n", process->path, error);
        return -1;
    }
    /* Counted before the ending's own records are added. */
    recount(process);
    for (size_t i = 0; i < adt_buffer_location_count(process->buffer); i++)
        if (close_location(run, process, adt_buffer_location_at(process->buffer, i)) != 0) {
            fprintf(stderr, "adaptrace-recover: %s: out of memory reading location %zu\n", process->path, i);
            return -1;
        }
    return list_threads(process);
}

/* ---- 3. messages without their other side ------------------------------ */

static int compare_message_end(const void *a, const void *b)
{
    const message_end *left = a, *right = b;
    if (left->comm_key != right->comm_key)
        return left->comm_key < right->comm_key ? -1 : 1;
    if (left->sender != right->sender)
        return left->sender < right->sender ? -1 : 1;
    if (left->receiver != right->receiver)
        return left->receiver < right->receiver ? -1 : 1;
    return (left->tag > right->tag) - (left->tag < right->tag);
}

/* Sends and receives of one (communicator, sender, receiver, tag) pair up
 * in order (MPI's non-overtaking rule); what remains has no other side. */
static uint64_t unmatched_messages(recovery *run)
{
    if (run->message_end_count > 0)
        qsort(run->message_ends, run->message_end_count, sizeof *run->message_ends, compare_message_end);
    uint64_t unmatched = 0;
    for (size_t i = 0; i < run->message_end_count;) {
        int64_t balance = 0;
        size_t j = i;
        while (j < run->message_end_count && compare_message_end(&run->message_ends[i], &run->message_ends[j]) == 0)
            balance += run->message_ends[j++].delta;
        unmatched += (uint64_t)(balance < 0 ? -balance : balance);
        i = j;
    }
    return unmatched;
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
        ending->records_cut += process->repair.records_cut;
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
                                                  run->archive_dir, input.initial_rate_hz, run->quiet, &run->ending);
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
    for (uint32_t r = 0; r < run->ranks; r++) {
        saved_process *process = &run->processes[r];
        adt_buffer_destroy(process->buffer);
        adt_defs_destroy(process->defs);
        if (process->spill_fd >= 0)
            close(process->spill_fd);
        if (process->file != NULL)
            munmap(process->file, process->file_bytes);
        free(process->lines);
        free(process->threads);
        free(process->thread_names);
    }
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
    int result = find_processes(&run, directory);
    for (uint32_t r = 0; result == 0 && r < run.ranks; r++)
        result = rebuild(&run, &run.processes[r]);
    if (result == 0) {
        run.ending.messages_unmatched = unmatched_messages(&run);
        describe_ending(&run);
        result = write_archive(&run);
    }
    if (result == 0) {
        remove_abandoned_writes(archive_dir);
        adt_remove_tree(directory);
    }
    free_recovery(&run);
    return result == 0 ? 0 : 1;
}
