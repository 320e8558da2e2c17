/*
 * A rank's end state shipped to the analyzers, which write the archive
 * (ADAPTRACE_ONLINE_OUTPUT=trace, issue #28). MPI_Finalize's slow path,
 * after the final live report: the runtime's end (adt_runtime_finish)
 * hands this rank's part of the archive (the writer's input, its
 * definitions' journal and calling contexts, the image of its buffer:
 * the bytes a rescue file holds of them, buffer/image.c) to its writing
 * analyzer (its own, where each analyzer writes its ranks' parts; else
 * analyzer 0) and waits for the result, or declines; then the connection
 * is let go.
 * Normal context: allocation and MPI (PMPI on adaptrace's own
 * inter-communicator, errors returned) are fine here.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "online/online_internal.h"

/* How long a rank waits at most for its end state to be taken, and for
 * the analyzers' archive (written once every rank's part came). */
#define SHIP_WAIT_SECONDS 60
#define ARCHIVE_WAIT_SECONDS 300

static MPI_Comm held = MPI_COMM_NULL;
static uint32_t held_rank, held_ranks;
static int held_writer;
/* The end state or the decline went (the writer expects one message). */
static bool offered;
/* A wait gave up: a disconnect could wait for the analyzers forever. */
static bool gave_up;

void adt_online_hold_for_archive(MPI_Comm connection, uint32_t rank, uint32_t ranks, int writer)
{
    held = connection;
    held_writer = writer;
    held_rank = rank;
    held_ranks = ranks;
}

bool adt_online_archive_held(void)
{
    return held != MPI_COMM_NULL;
}

/* Sends length bytes to the writing analyzer with tag, waiting at most
 * seconds. */
static bool send_bounded(const void *bytes, size_t length, int tag, unsigned seconds)
{
    offered = true;
    MPI_Request request;
    bool sent = PMPI_Isend(bytes, (int)length, MPI_BYTE, held_writer, tag, held, &request) == MPI_SUCCESS &&
                adt_online_wait_bounded(&request, seconds * adt_clock_resolution());
    gave_up |= !sent;
    return sent;
}

/* bytes, then zeros up to a multiple of 8 */
static int put_padded(int fd, const void *bytes, size_t length)
{
    static const char zeros[8];
    if (adt_write_all(fd, bytes, length) != 0)
        return -1;
    return length % 8 ? adt_write_all(fd, zeros, 8 - length % 8) : 0;
}

/* The end state (wire.h) into a file in memory; its descriptor, -1 with
 * why. */
static int write_end_state(const adt_trace_input *input, adt_buffer *buffer, const char **why)
{
    size_t journal_bytes = 0, context_count = 0;
    bool complete = false;
    const void *journal = adt_defs_journal(input->defs, &journal_bytes, &complete);
    const adt_cc_node *contexts = adt_defs_calling_contexts(input->defs, &context_count);
    if (!complete) {
        *why = "its definitions' journal is incomplete (it outgrew its 64 MiB)";
        return -1;
    }
    adt_online_shipped_thread *threads = calloc(input->thread_count ? input->thread_count : 1, sizeof *threads);
    if (threads == NULL) {
        *why = "out of memory";
        return -1;
    }
    size_t locations = adt_buffer_location_count(buffer);
    for (size_t t = 0; t < input->thread_count; t++) {
        threads[t].position = UINT32_MAX;
        for (size_t i = 0; i < locations && threads[t].position == UINT32_MAX; i++)
            if (adt_buffer_location_at(buffer, i) == input->threads[t].location)
                threads[t].position = (uint32_t)i;
        threads[t].thread_index = input->threads[t].thread_index;
        snprintf(threads[t].name, sizeof threads[t].name, "%s", input->threads[t].name);
    }
    adt_online_end_state head = {
        .rank = held_rank,
        .ranks = held_ranks,
        .initial_rate_hz = input->initial_rate_hz,
        .calling_context_style = input->calling_context_style,
        .timer_resolution = input->timer_resolution,
        .journal_bytes = journal_bytes,
        .context_count = context_count,
        .thread_count = input->thread_count,
    };
    for (int i = 0; i < 2; i++) {
        head.offset_local_time[i] = input->clock_offsets[i].local_time;
        head.offset[i] = input->clock_offsets[i].offset;
        head.offset_stddev[i] = input->clock_offsets[i].stddev;
    }
    snprintf(head.hostname, sizeof head.hostname, "%s", input->hostname);
    snprintf(head.creator, sizeof head.creator, "%s", input->creator);
    snprintf(head.archive_dir, sizeof head.archive_dir, "%s", input->archive_dir);
    int fd = memfd_create("adaptrace-end-state", MFD_CLOEXEC);
    int64_t image_bytes = -1;
    if (fd >= 0 && put_padded(fd, &head, sizeof head) == 0 && put_padded(fd, journal, journal_bytes) == 0 &&
        put_padded(fd, contexts, context_count * sizeof *contexts) == 0 &&
        put_padded(fd, threads, input->thread_count * sizeof *threads) == 0)
        image_bytes = adt_buffer_image_write(buffer, fd);
    free(threads);
    head.image_bytes = image_bytes > 0 ? (uint64_t)image_bytes : 0;
    if (image_bytes < 0 || pwrite(fd, &head, sizeof head, 0) != (ssize_t)sizeof head) {
        *why = fd < 0 ? "no memory file for it" : "it could not be written into memory";
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int adt_online_ship_archive(const adt_trace_input *input, adt_buffer *buffer, adt_trace_result *written)
{
    *written = (adt_trace_result){ 0 };
    const char *why = NULL;
    int fd = write_end_state(input, buffer, &why);
    off_t length = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (fd >= 0 && (length <= 0 || length > INT_MAX))
        why = "it is over 2 GiB, more than one MPI message carries";
    void *state = fd >= 0 && why == NULL ? mmap(NULL, (size_t)length, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (state == MAP_FAILED) {
        snprintf(written->error, sizeof written->error, "rank %u: its end state was not sent: %s", held_rank,
                 why != NULL ? why : "it could not be mapped");
        written->failed_here = true;
        /* The writing analyzer waits for one message of each of its ranks. */
        adt_online_decline_archive();
        return -1;
    }
    bool sent = send_bounded(state, (size_t)length, ADT_ONLINE_TAG_END_STATE, SHIP_WAIT_SECONDS);
    munmap(state, (size_t)length);
    /* Static: a receive given up on is cancelled, but stays valid. */
    static adt_online_written answer;
    MPI_Request request;
    bool answered = sent &&
                    PMPI_Irecv(&answer, (int)sizeof answer, MPI_BYTE, held_writer, ADT_ONLINE_TAG_WRITTEN, held,
                                   &request) ==
                        MPI_SUCCESS;
    if (answered && !adt_online_wait_bounded(&request, ARCHIVE_WAIT_SECONDS * adt_clock_resolution())) {
        PMPI_Cancel(&request);
        answered = false;
        gave_up = true;
    }
    if (!answered) {
        snprintf(written->error, sizeof written->error,
                 "rank %u: analyzer %d %s within %d s", held_rank, held_writer,
                 sent ? "did not say that it wrote the archive" : "did not take its end state",
                 sent ? ARCHIVE_WAIT_SECONDS : SHIP_WAIT_SECONDS);
        written->failed_here = true;
        return -1;
    }
    *written = answer.result;
    return answer.status;
}

void adt_online_decline_archive(void)
{
    if (held == MPI_COMM_NULL || offered)
        return;
    send_bounded(NULL, 0, ADT_ONLINE_TAG_END_STATE, SHIP_WAIT_SECONDS);
}

void adt_online_release(void)
{
    if (held == MPI_COMM_NULL)
        return;
    adt_online_decline_archive();
    if (gave_up)
        PMPI_Comm_free(&held);
    else
        PMPI_Comm_disconnect(&held);
}
