/*
 * The archive written by the analyzers from the ranks' end states
 * (ADAPTRACE_ONLINE_OUTPUT=trace, issue #28; the ranks' side is ship.c).
 * Each analyzer takes the end states of its own ranks (or analyzer 0 all
 * of them, where the analyzers have no MPI_THREAD_MULTIPLE). Each rank's
 * part is rebuilt as adaptrace-recover rebuilds a saved process (its
 * definitions replayed from the journal, its buffer from the image); the
 * analyzers agree that every part came and was rebuilt, and each writes
 * its parts with the end-of-run writer, one thread per rank, the threads
 * of all analyzers one group of P ranks over adt_composed_group
 * collectives: the same writer, the same unification and clock
 * correction as the ranks' own write, so the archive is the one they
 * would have written.
 *
 * Execution context: adaptrace-analyzer's main thread after the final
 * live report (normal code), and the writer threads it starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "online/online_internal.h"

/* After a rank declined, how long an analyzer still takes the messages of
 * the others (the ranks decline together; a rank that lost its analyzer
 * sends nothing). */
#define DECLINE_GRACE_SECONDS 5
/* The analyzers' agreements, on their own communicator (analyzer.c's
 * round tags are 1 and 2): every part came and was rebuilt (before the
 * write), every part was written (after it). */
#define TAG_AGREE_REBUILT 3
#define TAG_AGREE_WRITTEN 4

typedef struct part {
    bool came;       /* its end state came (it waits for an answer) */
    adt_online_end_state head;
    adt_online_shipped_thread *shipped; /* its threads' names */
    adt_defs *defs;
    adt_buffer *buffer;
    int spill_fd;
    adt_trace_thread *threads;
    adt_trace_input input;
    adt_composed_group *group;
    adt_online_written written;
} part;

static int rebuild(part *p, const char *message, size_t bytes, uint32_t rank, uint32_t ranks, char *error,
                   size_t size);

/* The rank's file of streamed event chunks (ADT_ONLINE_EVENTS_FILE,
 * written by its analyzer), with the chunks its image's spill file holds
 * written in at their places: the rank's spill file as the image's lists
 * refer to it. Removed once the archive is written (where it is not, the
 * rank reads it back itself: adt_online_writing_here). -1 where the rank
 * streamed no event chunk (or the file cannot be used: then the lists are
 * cut where their streamed chunks begin). */
static int streamed_events(const char *archive_dir, uint32_t rank, const void *image, size_t image_bytes)
{
    char path[sizeof((adt_online_end_state *)0)->archive_dir + 32];
    snprintf(path, sizeof path, ADT_ONLINE_EVENTS_FILE, archive_dir, rank);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (adt_buffer_image_spill_into(image, image_bytes, fd) != 0) {
        fprintf(stderr, "adaptrace-analyzer: cannot merge rank %u's spilled events into %s (%s)\n", rank, path,
                strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Receives one message of each rank this analyzer writes (process_of[r]
 * == here: an end state or a decline), or fewer: after a decline, those
 * that come within the grace; without one, those that come within
 * wait_seconds of each other. Each end state is rebuilt as it comes and
 * its message freed, so that the analyzer holds one message at a time
 * beside the rebuilt buffers. Returns whether every such rank's part came
 * and was rebuilt; error says why not where a part was refused. */
static bool receive_states(MPI_Comm parent, part *parts, uint32_t ranks, const uint32_t *process_of, int here,
                           unsigned wait_seconds, const volatile sig_atomic_t *ending, char *error, size_t size)
{
    uint32_t expected = 0;
    for (uint32_t r = 0; r < ranks; r++)
        expected += process_of[r] == (uint32_t)here;
    uint32_t rebuilt = 0;
    uint32_t messages = 0;
    bool declined = false;
    double give_up = MPI_Wtime() + wait_seconds;
    while (messages < expected && *ending == 0 && MPI_Wtime() < give_up) {
        int waiting = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, ADT_ONLINE_TAG_END_STATE, parent, &waiting, &status) != MPI_SUCCESS)
            return false;
        if (!waiting) {
            struct timespec millisecond = { 0, 1000000 };
            nanosleep(&millisecond, NULL);
            continue;
        }
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        char *message = malloc(bytes > 0 ? (size_t)bytes : 1);
        if (message == NULL || MPI_Recv(message, bytes, MPI_BYTE, status.MPI_SOURCE, ADT_ONLINE_TAG_END_STATE,
                                        parent, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            free(message);
            fprintf(stderr, "adaptrace-analyzer: the end state of rank %d could not be received\n",
                    status.MPI_SOURCE);
            return false;
        }
        messages++;
        uint32_t source = (uint32_t)status.MPI_SOURCE;
        part *from = source < ranks && process_of[source] == (uint32_t)here ? &parts[source] : NULL;
        if (bytes == 0 || from == NULL || from->came) {
            free(message);
            if (!declined)
                give_up = MPI_Wtime() + DECLINE_GRACE_SECONDS;
            declined = true;
            continue;
        }
        from->came = true;
        /* After a refused part the others are only answered. */
        if (error[0] == '\0' &&
            rebuild(from, message, (size_t)bytes, (uint32_t)status.MPI_SOURCE, ranks, error, size) == 0)
            rebuilt++;
        free(message);
        give_up = declined ? give_up : MPI_Wtime() + wait_seconds;
    }
    return !declined && rebuilt == expected;
}

/* One rank's part from its end state (wire.h, bytes of it in message,
 * which the part does not keep); -1 with why in error. */
static int rebuild(part *p, const char *message, size_t bytes, uint32_t rank, uint32_t ranks, char *error,
                   size_t size)
{
    const char *at = message, *end = message + bytes;
#define PADDED(n) (((n) + 7) / 8 * 8)
    if (bytes < sizeof p->head) {
        snprintf(error, size, "rank %u: an end state of %zu bytes", rank, bytes);
        return -1;
    }
    memcpy(&p->head, at, sizeof p->head);
    const adt_online_end_state *head = &p->head;
    at += PADDED(sizeof *head);
    size_t contexts_bytes = head->context_count * sizeof(adt_cc_node);
    size_t threads_bytes = head->thread_count * sizeof(adt_online_shipped_thread);
    if (head->rank != rank || head->ranks != ranks ||
        (size_t)(end - at) != PADDED(head->journal_bytes) + PADDED(contexts_bytes) + PADDED(threads_bytes) +
                                  head->image_bytes) {
        snprintf(error, size, "rank %u: its end state does not match the run (rank %u of %u, %zu bytes)", rank,
                 head->rank, head->ranks, bytes);
        return -1;
    }
    const char *journal = at, *contexts = journal + PADDED(head->journal_bytes);
    const char *threads = contexts + PADDED(contexts_bytes), *image = threads + PADDED(threads_bytes);
#undef PADDED
    p->defs = adt_defs_replay(journal, head->journal_bytes);
    if (p->defs == NULL || adt_defs_set_calling_contexts(p->defs, (const adt_cc_node *)contexts,
                                                         head->context_count) != 0) {
        snprintf(error, size, "rank %u: its definitions cannot be read back (out of memory, or a damaged journal)", rank);
        return -1;
    }
    adt_image_repair repair = { 0 };
    p->head.archive_dir[sizeof p->head.archive_dir - 1] = '\0';
    p->spill_fd = streamed_events(p->head.archive_dir, rank, image, head->image_bytes);
    if (p->spill_fd < 0)
        p->spill_fd = adt_buffer_image_spill_file(image, head->image_bytes);
    p->buffer = adt_buffer_image_read(image, head->image_bytes, 0, p->spill_fd, NULL, NULL, &repair, error, size);
    if (p->buffer == NULL)
        return -1;
    p->threads = calloc(head->thread_count ? head->thread_count : 1, sizeof *p->threads);
    if (p->threads == NULL) {
        snprintf(error, size, "rank %u: out of memory for its threads", rank);
        return -1;
    }
    p->shipped = malloc(threads_bytes ? threads_bytes : 1);
    if (p->shipped == NULL) {
        snprintf(error, size, "rank %u: out of memory for its threads", rank);
        return -1;
    }
    memcpy(p->shipped, threads, threads_bytes);
    size_t locations = adt_buffer_location_count(p->buffer);
    adt_online_shipped_thread *shipped = p->shipped;
    for (size_t t = 0; t < head->thread_count; t++) {
        shipped[t].name[sizeof shipped[t].name - 1] = '\0';
        if (shipped[t].position >= locations) {
            snprintf(error, size, "rank %u: its thread %zu has no location", rank, t);
            return -1;
        }
        p->threads[t] = (adt_trace_thread){ .location = adt_buffer_location_at(p->buffer, shipped[t].position),
                                            .thread_index = shipped[t].thread_index,
                                            .name = shipped[t].name };
    }
    p->head.hostname[sizeof p->head.hostname - 1] = '\0';
    p->head.creator[sizeof p->head.creator - 1] = '\0';
    p->input = (adt_trace_input){
        .archive_dir = p->head.archive_dir,
        .hostname = p->head.hostname,
        .threads = p->threads,
        .thread_count = head->thread_count,
        .defs = p->defs,
        .calling_context_style = head->calling_context_style != 0,
        .initial_rate_hz = head->initial_rate_hz,
        .creator = p->head.creator,
        .timer_resolution = head->timer_resolution,
    };
    for (int i = 0; i < 2; i++)
        p->input.clock_offsets[i] = (adt_clock_offset){ .local_time = head->offset_local_time[i],
                                                        .offset = head->offset[i],
                                                        .stddev = head->offset_stddev[i] };
    return 0;
}

static void *write_part(void *arg)
{
    part *p = arg;
    adt_collectives collectives = adt_composed_group_collectives(p->group, p->head.rank);
    p->written.status = adt_trace_write(&p->input, &collectives, &p->written.result);
    return NULL;
}

/* Every part this analyzer writes by a thread of its own, the threads of
 * all writing analyzers one group (writers->comm; MPI_COMM_SELF where
 * this analyzer writes every part). The writer's first collective waits
 * for all of them: where a thread cannot start, none can go on, and the
 * analyzer ends (the other analyzers' waits end by their bound, the ranks
 * write the archive themselves). false with why in error. */
static bool write_parts(part *parts, uint32_t ranks, const uint32_t *process_of, int here, MPI_Comm comm,
                        unsigned wait_seconds, char *error, size_t size)
{
    adt_composed_group *group = adt_composed_group_create(&comm, ranks, process_of, wait_seconds, error, size);
    pthread_t *threads = calloc(ranks, sizeof *threads);
    if (group == NULL || threads == NULL) {
        if (group != NULL)
            snprintf(error, size, "out of memory for the writer threads of %u ranks", ranks);
        adt_composed_group_destroy(group);
        free(threads);
        return false;
    }
    for (uint32_t r = 0; r < ranks; r++) {
        if (process_of[r] != (uint32_t)here)
            continue;
        parts[r].group = group;
        if (pthread_create(&threads[r], NULL, write_part, &parts[r]) != 0) {
            fprintf(stderr, "adaptrace-analyzer: cannot start a writer thread for each of its ranks\n");
            _exit(1);
        }
    }
    for (uint32_t r = 0; r < ranks; r++)
        if (process_of[r] == (uint32_t)here)
            pthread_join(threads[r], NULL);
    free(threads);
    bool broken = adt_composed_group_broken(group);
    adt_composed_group_destroy(group);
    if (broken)
        snprintf(error, size, "another analyzer did not answer within %u s while the parts were written",
                 wait_seconds);
    return !broken;
}

/* The most of an analyzer's reason for no that the others learn. */
#define REASON_BYTES 256

/* Whether every writing analyzer says yes: each tells each other its
 * reason for no (mine; "" for yes) and waits at most wait_seconds for
 * theirs. false where one said no, why then holding the lowest such
 * analyzer's reason ("analyzer 1: rank 1: ..."), the cause that stops
 * them all, or where one did not answer in time (why says so: its
 * receive is cancelled and the texts left allocated, as MPI may still
 * read or write them). */
static bool every_analyzer(const adt_online_writers *writers, int tag, const char *mine, char *why, size_t why_size,
                           unsigned wait_seconds)
{
    if (writers->comm == MPI_COMM_SELF || writers->count == 1)
        return mine[0] == '\0';
    int peers = writers->count - 1;
    /* [0]: mine, sent to each peer; [1 + i]: the i-th peer's. */
    char(*texts)[REASON_BYTES] = calloc((size_t)peers + 1, sizeof *texts);
    MPI_Request *requests = malloc(2 * (size_t)peers * sizeof *requests);
    if (texts == NULL || requests == NULL) {
        free(texts);
        free(requests);
        snprintf(why, why_size, "out of memory to hear the other analyzers");
        return false;
    }
    snprintf(texts[0], sizeof texts[0], "%s", mine);
    bool yes = mine[0] == '\0';
    for (int peer = 0, i = 0; peer < writers->count; peer++) {
        if (peer == writers->index)
            continue;
        if (MPI_Isend(texts[0], REASON_BYTES, MPI_CHAR, peer, tag, writers->analyzers, &requests[i]) != MPI_SUCCESS)
            requests[i] = MPI_REQUEST_NULL;
        if (MPI_Irecv(texts[1 + i / 2], REASON_BYTES, MPI_CHAR, peer, tag, writers->analyzers, &requests[i + 1]) !=
            MPI_SUCCESS) {
            requests[i + 1] = MPI_REQUEST_NULL;
            snprintf(why, why_size, "analyzer %d could not be heard", peer);
            yes = false;
        }
        i += 2;
    }
    double give_up = MPI_Wtime() + wait_seconds;
    int done = 0;
    while (MPI_Testall(2 * peers, requests, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !done &&
           MPI_Wtime() < give_up) {
        struct timespec millisecond = { 0, 1000000 };
        nanosleep(&millisecond, NULL);
    }
    if (!done) {
        for (int i = 0; i < 2 * peers; i++)
            if (requests[i] != MPI_REQUEST_NULL)
                MPI_Cancel(&requests[i]);
        free(requests);
        snprintf(why, why_size, "another analyzer did not answer within %u s", wait_seconds);
        return false;
    }
    for (int peer = 0, i = 0; peer < writers->count; peer++) {
        if (peer == writers->index)
            continue;
        char *theirs = texts[1 + i++];
        theirs[REASON_BYTES - 1] = '\0';
        if (yes && theirs[0] != '\0') {
            snprintf(why, why_size, "analyzer %d: %s", peer, theirs);
            yes = false;
        }
    }
    free(texts);
    free(requests);
    return yes;
}

/* "ranks 2-3" of the ranks this analyzer writes (contiguous). */
static void name_ranks(char *text, size_t size, const uint32_t *process_of, uint32_t ranks, int here)
{
    uint32_t first = 0, count = 0;
    for (uint32_t r = 0; r < ranks; r++)
        if (process_of[r] == (uint32_t)here && count++ == 0)
            first = r;
    if (count == 1)
        snprintf(text, size, "rank %u", first);
    else
        snprintf(text, size, "ranks %u-%u", first, first + count - 1);
}

void adt_online_archive_write(MPI_Comm parent, const adt_online_writers *writers, uint32_t ranks,
                              unsigned wait_seconds, const volatile sig_atomic_t *ending)
{
    part *parts = calloc(ranks, sizeof *parts);
    uint32_t *process_of = calloc(ranks, sizeof *process_of);
    if (parts == NULL || process_of == NULL) {
        fprintf(stderr, "adaptrace-analyzer: out of memory for the end states of %u ranks\n", ranks);
        free(parts);
        free(process_of);
        return;
    }
    /* Each analyzer its own ranks, or analyzer 0 (alone in MPI_COMM_SELF)
     * every rank. */
    bool each_own = writers->comm != MPI_COMM_SELF;
    int here = each_own ? writers->index : 0;
    for (uint32_t r = 0; r < ranks; r++) {
        parts[r].spill_fd = -1;
        process_of[r] = each_own ? adt_online_analyzer_of(r, ranks, (uint32_t)writers->count) : 0;
    }
    /* Room for the words around it in a rank's adt_trace_result.error. */
    char error[sizeof((adt_trace_result *)0)->error - 64] = "";
    bool every_part =
        receive_states(parent, parts, ranks, process_of, here, wait_seconds, ending, error, sizeof error);
    /* Each tells the others why it cannot write, so that each analyzer's
     * answer to its ranks (rank 0's line among them) names the cause. */
    char theirs[REASON_BYTES + 32] = "";
    if (!every_analyzer(writers, TAG_AGREE_REBUILT,
                        every_part ? "" : error[0] != '\0' ? error : "not every rank sent its end state", theirs,
                        sizeof theirs, wait_seconds) &&
        every_part)
        snprintf(error, sizeof error, "another analyzer did not rebuild its ranks' parts: %s", theirs);
    every_part = every_part && error[0] == '\0' &&
                 write_parts(parts, ranks, process_of, here, writers->comm, wait_seconds, error, sizeof error);
    if (!every_part && error[0] != '\0')
        fprintf(stderr, "adaptrace-analyzer: the archive is not written here (analyzer %d): %s\n", writers->index,
                error);
    bool written_here = every_part;
    for (uint32_t r = 0; r < ranks; r++)
        written_here = written_here && (process_of[r] != (uint32_t)here || parts[r].written.status == 0);
    char names[64];
    name_ranks(names, sizeof names, process_of, ranks, here);
    /* One analyzer that wrote every part needs no line: the ranks' summary
     * says that the analyzers wrote the archive. */
    if (written_here && each_own)
        fprintf(stderr, "adaptrace-analyzer %d: wrote the archive's parts of %s, one thread per rank (each "
                        "analyzer its own ranks)\n",
                writers->index, names);
    for (uint32_t r = 0; r < ranks; r++) {
        part *p = &parts[r];
        if (!p->came)
            continue;
        if (!every_part) {
            p->written = (adt_online_written){ .status = -1 };
            snprintf(p->written.result.error, sizeof p->written.result.error,
                     "analyzer %d did not write the archive: %s", writers->index,
                     error[0] != '\0' ? error : "not every rank sent its end state");
        }
        MPI_Send(&p->written, (int)sizeof p->written, MPI_BYTE, (int)r, ADT_ONLINE_TAG_WRITTEN, parent);
        adt_buffer_destroy(p->buffer);
        adt_defs_destroy(p->defs);
        if (p->spill_fd >= 0)
            close(p->spill_fd);
        free(p->threads);
        free(p->shipped);
    }
    /* The files of streamed event chunks are in the archive now (where it
     * is not written, the ranks read them back and remove them): each
     * analyzer removes its ranks' files, the last one their folder. */
    bool all_written = every_analyzer(writers, TAG_AGREE_WRITTEN, written_here ? "" : "its parts are not written",
                                      theirs, sizeof theirs, wait_seconds);
    for (uint32_t r = 0; all_written && r < ranks; r++) {
        if (process_of[r] != (uint32_t)here)
            continue;
        char path[sizeof parts[r].head.archive_dir + 32];
        snprintf(path, sizeof path, ADT_ONLINE_EVENTS_FILE, parts[r].head.archive_dir, r);
        unlink(path);
        snprintf(path, sizeof path, ADT_ONLINE_EVENTS_DIRECTORY, parts[r].head.archive_dir);
        rmdir(path);
    }
    free(parts);
    free(process_of);
}
