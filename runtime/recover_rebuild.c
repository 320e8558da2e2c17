/*
 * adaptrace-recover, steps 2 and 3: rebuilding each process as it was and
 * counting the messages without their other side.
 * 2. A process's definitions from the journal, its calling contexts from
 *    the saved tree and module list, its buffer from the image (chains
 *    cut where a thread was changing them); then the regions still open
 *    at the ending are closed, at the time of the save, and the end is
 *    marked with a MeasurementOnOff(off) record. A rank that was not
 *    saved gets an empty location, so that communicators keep their
 *    members.
 * 3. The point-to-point messages whose other side is not in the trace
 *    (sent to a rank that was not saved or never received them).
 *
 * Execution context: adaptrace-recover, a process of its own (no MPI, no
 * measurement); normal code.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recover_internal.h"
#include "sampler/sampler.h"

/* ---- 2. rebuilding a process -------------------------------------------- */

/* array (count elements used of *capacity) with room for one more:
 * itself, or moved and doubled (first elements the first time); NULL
 * when out of memory, array left as it was. */
static void *room_for_one_more(void *array, size_t count, size_t *capacity, size_t element, size_t first)
{
    if (count < *capacity)
        return array;
    size_t grown_capacity = *capacity ? 2 * *capacity : first;
    void *grown = realloc(array, grown_capacity * element);
    if (grown != NULL)
        *capacity = grown_capacity;
    return grown;
}

static int add_message_end(recovery *run, uint64_t comm_key, uint32_t sender, uint32_t receiver, uint32_t tag,
                           int32_t delta)
{
    message_end *ends = room_for_one_more(run->message_ends, run->message_end_count, &run->message_end_capacity,
                                          sizeof *ends, 1024);
    if (ends == NULL)
        return -1;
    run->message_ends = ends;
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
    adt_rec_region *stack = room_for_one_more(open->stack, open->depth, &open->capacity, sizeof *stack, 16);
    if (stack == NULL)
        return -1;
    open->stack = stack;
    open->stack[open->depth++] = *region;
    return 0;
}

/* The records of an image as adt_buffer_image_read checks them, a
 * location's chains one after the other: each must be a record the writer
 * can write (adt_record_valid), a sample no finer than its location's rate
 * at the end, and a Leave must close the region its location entered last
 * (the writer refuses the whole trace otherwise; a file damaged on disk
 * can hold any of these). */
typedef struct record_checking {
    adt_defs *defs;
    const adt_location *location;  /* whose records come now */
    unsigned final_shift;
    open_regions open;             /* its events' regions, so far */
} record_checking;

/* Whether the writer takes the sample at a location whose final shift is
 * final_shift. */
static bool sample_shift_valid(const adt_record_view *sample, unsigned final_shift)
{
    return ((const adt_rec_sample *)sample->payload)->rate_shift <= final_shift && final_shift < ADT_BUFFER_LEVELS;
}

static bool record_check(const adt_location *location, const adt_record_view *record, void *arg)
{
    record_checking *checking = arg;
    if (location != checking->location) {
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        checking->location = location;
        checking->final_shift = stats.shift;
        checking->open.depth = 0;
    }
    if (!adt_record_valid(checking->defs, record))
        return false;
    uint64_t guest_id;
    adt_record_view held;
    if (adt_guest_record_open(record, &guest_id, &held)) {
        /* Another thread's record its host kept (buffer.h), read out
         * with the other thread's records: a sample is weighed against
         * that thread's final shift, as the writer does. A guest the
         * buffer does not have is in no read-out. */
        const adt_location *guest = adt_buffer_find_location(adt_location_buffer(location), guest_id);
        if (guest == NULL || held.kind != ADT_REC_SAMPLE)
            return true;
        adt_location_stats stats;
        adt_location_get_stats(guest, &stats);
        return sample_shift_valid(&held, stats.shift);
    }
    if (record->kind == ADT_REC_SAMPLE)
        return sample_shift_valid(record, checking->final_shift);
    if (record->kind == ADT_REC_ENTER)
        return push_region(&checking->open, record->payload) == 0;
    if (record->kind == ADT_REC_LEAVE) {
        const adt_rec_region *leave = record->payload;
        if (checking->open.depth == 0 || checking->open.stack[checking->open.depth - 1].region != leave->region)
            return false;
        checking->open.depth--;
    }
    return true;
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
    /* A location folded into its skeleton (ADAPTRACE_ON_FULL=fold) has its
     * open regions closed where folding began, by the archive's writer. */
    adt_location_stats stats;
    adt_location_get_stats(location, &stats);
    if (stats.folding_began_at != 0)
        open.depth = 0;
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

/* What the read-out of location gives: its events and the samples kept
 * in event chains (ADAPTRACE_ONLINE_OUTPUT=trace: its own chain's, or
 * another thread's it kept them in, buffer.h's guests), which are no
 * events; the streamed chunks of the spill file given included. Where the
 * location cannot be read, the chains' own counts (events and samples
 * alike, the spilled ones but not the streamed). */
static void count_read_out(adt_location *location, const adt_location_stats *stats, uint64_t *events,
                           uint64_t *samples_in_chains)
{
    *events = 0;
    *samples_in_chains = 0;
    adt_reader *reader = adt_reader_open(location);
    if (reader == NULL) {
        *events = stats->events.records + stats->spilled_records;
        return;
    }
    adt_record_view record;
    while (adt_reader_next(reader, &record)) {
        if (record.level != ADT_EVENT_LEVEL)
            continue;
        if (record.kind == ADT_REC_SAMPLE)
            ++*samples_in_chains;
        else
            ++*events;
    }
    adt_reader_close(reader);
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
        adt_location *location = adt_buffer_location_at(process->buffer, i);
        adt_location_stats stats;
        adt_location_get_stats(location, &stats);
        uint64_t events, samples_in_chains;
        count_read_out(location, &stats, &events, &samples_in_chains);
        rebuilt.mpi_events += events;
        rebuilt.samples_kept += stats.samples_kept + samples_in_chains;
        adt_summary_add_losses(&rebuilt, &stats);
        if (process->lines == NULL)
            continue;
        if (i < process->saved_line_count)
            process->lines[i] = process->saved_lines[i];
        process->lines[i].rank = process->rank;
        process->lines[i].thread = adt_location_id(location);
        process->lines[i].samples_kept = stats.samples_kept + samples_in_chains;
        process->lines[i].mpi_events = events;
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

/* fd's bytes copied into a file in memory (memfd): the recovery may
 * rewrite the copy where it cuts a list, never the file it read, so that
 * a recovery run again after a failed one reads the same. -1 with errno. */
static int copy_into_memory(int fd)
{
    struct stat file;
    int copy = fstat(fd, &file) == 0 ? memfd_create("adaptrace-streamed-events", MFD_CLOEXEC) : -1;
    off_t offset = 0;
    while (copy >= 0 && offset < file.st_size) {
        ssize_t sent = sendfile(copy, fd, &offset, (size_t)(file.st_size - offset));
        if (sent > 0 || (sent < 0 && errno == EINTR))
            continue;
        if (sent == 0)
            errno = EIO; /* the file got shorter while it was copied */
        close(copy);
        copy = -1;
    }
    return copy;
}

/* The undelivered section's chunks (rescue.h) written at their places
 * into fd, the copy of the rank's file of streamed events, where it holds
 * none (the analyzer did not write them). The section's bytes have no
 * hash (copied from memory that may change), so its walk stops at the first
 * chunk whose size is not the arena's or whose place no tag could have
 * named. 0, or -1 with errno. */
static int write_undelivered(saved_process *process, int fd)
{
    const char *at = process->undelivered;
    size_t left = process->undelivered_bytes;
    adt_rescue_undelivered_head head;
    while (left >= sizeof head) {
        memcpy(&head, at, sizeof head);
        if (head.bytes != process->counters.chunk_bytes || left - sizeof head < head.bytes ||
            head.position >= ADT_ONLINE_EVENTS_PLACES)
            break;
        int written = adt_buffer_spill_fill_hole(fd, at + sizeof head, head.bytes, head.position);
        if (written < 0)
            return -1;
        process->undelivered_written += (uint64_t)written;
        at += sizeof head + head.bytes;
        left -= sizeof head + head.bytes;
    }
    return 0;
}

/* The spill file the rank's image's lists refer to: where the rank
 * streamed full event chunks to its analyzer during an online run (issue
 * #28), a copy of the file the analyzer wrote them into
 * (ADT_ONLINE_EVENTS_FILE beside the archive) with the image's spilled
 * chunks written in at their places, as the writing analyzer reads it at
 * a normal end (adt_buffer_image_spill_into); else the image's spill contents
 * alone. The chunks the stream had out at the ending (in flight, or
 * awaiting the analyzer's confirmation) are written in from the rescue
 * file where the analyzer did not write them (write_undelivered). Where
 * a streamed chunk is in neither (the analyzer ended first, a save cut
 * short) adt_buffer_image_read cuts the list there
 * (repair.list_records_cut). -1: no spill file. */
static int rank_spill_file(const recovery *run, saved_process *process)
{
    char path[ADT_PATH_MAX + 32];
    snprintf(path, sizeof path, ADT_ONLINE_EVENTS_FILE, run->archive_dir, process->rank);
    int streamed = open(path, O_RDONLY | O_CLOEXEC);
    if (streamed < 0 && process->undelivered == NULL)
        return adt_buffer_image_spill_file(process->image, process->image_bytes);
    /* No file but chunks in flight: the analyzer wrote none before the
     * ending (it makes the file at the first). */
    int fd = streamed >= 0 ? copy_into_memory(streamed) : memfd_create("adaptrace-streamed-events", MFD_CLOEXEC);
    if (streamed >= 0)
        close(streamed);
    if (fd >= 0 && adt_buffer_image_spill_into(process->image, process->image_bytes, fd) == 0 &&
        write_undelivered(process, fd) == 0)
        return fd;
    fprintf(stderr,
            "adaptrace-recover: rank %u: %s cannot be read with its spilled events (%s); its events streamed to "
            "the analyzer are left out\n",
            process->rank, path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return adt_buffer_image_spill_file(process->image, process->image_bytes);
}

int adt_recover_rebuild(recovery *run, saved_process *process)
{
    char error[512];
    process->spill_fd = -1;
    if (process->header == NULL) {
        process->defs = adt_defs_create();
        process->buffer = adt_buffer_create(64u << 10, 1u << 10, 1);
        bool made = process->defs != NULL && process->buffer != NULL &&
                    adt_buffer_add_location(process->buffer, 0) != NULL;
        if (made)
            recount(process);
        if (!made || list_threads(process) != 0) {
            fprintf(stderr, "adaptrace-recover: out of memory for rank %u, which was not saved\n", process->rank);
            return -1;
        }
        return 0;
    }
    process->defs = adt_defs_replay(process->journal, process->journal_bytes);
    if (process->defs == NULL) {
        return adt_recover_left_out(process, "its definitions cannot be read back");
    }
    if (process->header->sampling &&
        adt_sampler_define_saved_contexts(process->defs, process->tree, process->tree_bytes, process->maps,
                                          process->maps_bytes) != 0) {
        return adt_recover_left_out(process, "its calling contexts cannot be defined");
    }
    /* The image's arena is made again, every chunk of it: its size must
     * be the one the process's counters give, which their section's check
     * vouches for. The image has no check of its own (threads may change
     * it while it is saved), and a damaged chunk count within the
     * machine's memory took 16 GB and 26 s (found by fuzz_recover). */
    uint64_t arena_bytes = 0, chunk_bytes = 0;
    if (adt_buffer_image_arena(process->image, process->image_bytes, &arena_bytes, &chunk_bytes) &&
        (arena_bytes != process->counters.arena_bytes || chunk_bytes != process->counters.chunk_bytes)) {
        snprintf(error, sizeof error,
                 "its buffer image's arena (%llu bytes in chunks of %llu) is not the one its counters give "
                 "(%llu bytes in chunks of %llu)",
                 (unsigned long long)arena_bytes, (unsigned long long)chunk_bytes,
                 (unsigned long long)process->counters.arena_bytes, (unsigned long long)process->counters.chunk_bytes);
        return adt_recover_left_out(process, error);
    }
    process->spill_fd = rank_spill_file(run, process);
    /* One chunk per location more: room for the records that close it. */
    record_checking checking = { .defs = process->defs };
    process->buffer = adt_buffer_image_read(process->image, process->image_bytes, 1,
                                            process->spill_fd, record_check, &checking, &process->repair,
                                            error, sizeof error);
    free(checking.open.stack);
    if (process->buffer == NULL)
        return adt_recover_left_out(process, error);
    if (process->repair.list_records_cut > 0)
        fprintf(stderr,
                "adaptrace-recover: rank %u: %llu events are missing from the archive: a chunk "
                "of them that left its buffer is not in " ADT_ONLINE_EVENTS_FILE
                " (streamed to its analyzer: in flight at the ending, or the analyzer ended first), and the "
                "events after it are left out with it\n",
                process->rank, (unsigned long long)process->repair.list_records_cut, run->archive_dir,
                process->rank);
    /* Counted before the ending's own records are added. */
    recount(process);
    for (size_t i = 0; i < adt_buffer_location_count(process->buffer); i++)
        if (close_location(run, process, adt_buffer_location_at(process->buffer, i)) != 0)
            return adt_recover_left_out(process, "out of memory reading its locations");
    if (list_threads(process) != 0)
        return adt_recover_left_out(process, "out of memory listing its threads");
    return 0;
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
uint64_t adt_recover_unmatched_messages(recovery *run)
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
