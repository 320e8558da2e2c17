/*
 * The rank's stream of calls to its analyzer, on the MPI wrapper hot path:
 * every wrapped call of the thread that called MPI_Init ends here
 * (adt_online_stream_call). No malloc (the chunks are reserved by
 * adt_online_stream_open), no lock (only that thread touches the chunks;
 * other threads only count their calls, atomically), no stdio. The only
 * MPI calls are PMPI_Isend and PMPI_Test on adaptrace's private
 * inter-communicator, whose error handler returns errors: a send that
 * fails (a dead analyzer) ends the stream, never the application. A chunk
 * that cannot be sent because all are in flight is never waited for: the
 * calls that find no free chunk are counted as 'analyzer behind'.
 */
#include <stdlib.h>
#include <time.h>

#include "online/online_internal.h"

atomic_bool adt_online_on;
__thread bool adt_online_streams __attribute__((tls_model("initial-exec")));
adt_online_frame adt_online_frames[ADT_ONLINE_DEPTH];
uint32_t adt_online_depth;

static struct {
    MPI_Comm inter;
    int analyzer;
    uint32_t rank;
    uint64_t hold_ticks;
    adt_online_chunk *chunks;
    MPI_Request requests[ADT_ONLINE_CHUNKS];
    bool in_flight[ADT_ONLINE_CHUNKS];
    unsigned flying;
    int filling; /* the chunk being filled, -1: none */
    uint64_t send_at;
    bool lost;
    uint64_t unstreamed[ADT_ONLINE_LOSS_COUNT];
    atomic_uint_fast64_t other_threads;
    uint64_t calls_streamed;
    uint64_t bytes_streamed;
    uint64_t chunks_streamed;
} stream = { .filling = -1 };

/* A send or a test failed: the analyzer is gone (or its connection is);
 * the rank stops streaming and keeps only its buffer. Requests still in
 * flight are left to MPI: cancelling a send to a dead peer is not
 * reliable. */
static void lose_analyzer(void)
{
    stream.lost = true;
    stream.flying = 0;
    for (int i = 0; i < ADT_ONLINE_CHUNKS; i++)
        stream.in_flight[i] = false;
}

/* Tests each chunk in flight once (PMPI_Test: no wait); frees those whose
 * sends completed. */
static void progress(void)
{
    for (int i = 0; i < ADT_ONLINE_CHUNKS && stream.flying > 0; i++) {
        if (!stream.in_flight[i])
            continue;
        int done = 0;
        if (PMPI_Test(&stream.requests[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            lose_analyzer();
            return;
        }
        if (done) {
            stream.in_flight[i] = false;
            stream.flying--;
        }
    }
}

/* A chunk neither filling nor in flight, after one round of tests; -1
 * when the bound is reached. */
static int free_chunk(void)
{
    if (stream.flying > 0)
        progress();
    for (int i = 0; i < ADT_ONLINE_CHUNKS; i++)
        if (!stream.in_flight[i] && i != stream.filling)
            return i;
    return -1;
}

static void fill_header(adt_online_chunk_header *header, uint32_t calls)
{
    header->ticks_per_second = adt_clock_resolution_now();
    for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
        header->unstreamed[cause] = stream.unstreamed[cause];
    header->unstreamed[ADT_ONLINE_LOSS_OTHER_THREAD] = atomic_load(&stream.other_threads);
    header->rank = stream.rank;
    header->calls = calls;
}

/* Sends chunk index with tag (its header filled here); it is in flight
 * until a test finds the send complete. */
static void send_chunk(int index, int tag)
{
    adt_online_chunk *chunk = &stream.chunks[index];
    uint32_t calls = chunk->header.calls;
    fill_header(&chunk->header, calls);
    int bytes = (int)(sizeof chunk->header + calls * sizeof chunk->calls[0]);
    if (PMPI_Isend(chunk, bytes, MPI_BYTE, stream.analyzer, tag, stream.inter, &stream.requests[index]) !=
        MPI_SUCCESS) {
        lose_analyzer();
        return;
    }
    stream.in_flight[index] = true;
    stream.flying++;
    stream.chunks_streamed++;
    stream.bytes_streamed += (uint64_t)bytes;
    if (index == stream.filling)
        stream.filling = -1;
}

void adt_online_stream_call(uint32_t function, uint64_t time)
{
    if (!adt_online_streams) {
        atomic_fetch_add_explicit(&stream.other_threads, 1, memory_order_relaxed);
        return;
    }
    if (adt_online_depth == 0)
        return; /* a Leave whose Enter came before the stream opened */
    uint32_t depth = --adt_online_depth;
    if (depth >= ADT_ONLINE_DEPTH) {
        stream.unstreamed[ADT_ONLINE_LOSS_NESTED_TOO_DEEP]++;
        return;
    }
    if (stream.lost) {
        stream.unstreamed[ADT_ONLINE_LOSS_ANALYZER_LOST]++;
        return;
    }
    if (stream.filling < 0) {
        stream.filling = free_chunk();
        if (stream.lost || stream.filling < 0) {
            stream.unstreamed[stream.lost ? ADT_ONLINE_LOSS_ANALYZER_LOST : ADT_ONLINE_LOSS_ANALYZER_BEHIND]++;
            return;
        }
        stream.chunks[stream.filling].header.calls = 0;
        stream.send_at = time + stream.hold_ticks;
    } else if (stream.flying > 0) {
        progress();
    }
    adt_online_chunk *chunk = &stream.chunks[stream.filling];
    const adt_online_frame *frame = &adt_online_frames[depth];
    chunk->calls[chunk->header.calls++] = (adt_online_call){
        .enter = frame->enter, .leave = time, .sent = frame->sent, .received = frame->received, .function = function
    };
    stream.calls_streamed++;
    if (chunk->header.calls == ADT_ONLINE_CHUNK_CALLS || time >= stream.send_at)
        send_chunk(stream.filling, ADT_ONLINE_TAG_CHUNK);
}

int adt_online_stream_open(MPI_Comm inter, int analyzer, uint32_t rank, uint64_t hold_ticks, uint64_t init_enter)
{
    stream.chunks = calloc(ADT_ONLINE_CHUNKS, sizeof *stream.chunks);
    if (stream.chunks == NULL)
        return -1;
    stream.inter = inter;
    stream.analyzer = analyzer;
    stream.rank = rank;
    stream.hold_ticks = hold_ticks;
    adt_online_frames[0] = (adt_online_frame){ init_enter, 0, 0 };
    adt_online_depth = 1;
    adt_online_streams = true;
    atomic_store(&adt_online_on, true);
    return 0;
}

/* Sleeps a millisecond between the tests of a bounded wait: the analyzer
 * may share this rank's core. */
static void pause_briefly(void)
{
    struct timespec millisecond = { 0, 1000000 };
    nanosleep(&millisecond, NULL);
}

bool adt_online_stream_close(uint64_t wait_ticks, adt_online_stats *stats)
{
    uint64_t give_up = adt_clock_now() + wait_ticks;
    /* The last chunk says the rank is done, calls or none. */
    int last = stream.filling;
    while (!stream.lost && last < 0) {
        last = free_chunk();
        if (last < 0 && adt_clock_now() >= give_up)
            break;
        if (last < 0)
            pause_briefly();
        else
            stream.chunks[last].header.calls = 0;
    }
    if (!stream.lost && last >= 0)
        send_chunk(last, ADT_ONLINE_TAG_LAST);
    while (!stream.lost && stream.flying > 0 && adt_clock_now() < give_up) {
        progress();
        if (stream.flying > 0)
            pause_briefly();
    }
    bool complete = !stream.lost && last >= 0 && stream.flying == 0;
    /* Chunks whose sends never completed did not reach the analyzer. */
    for (int i = 0; i < ADT_ONLINE_CHUNKS; i++) {
        if (!stream.in_flight[i])
            continue;
        stream.calls_streamed -= stream.chunks[i].header.calls;
        stream.unstreamed[ADT_ONLINE_LOSS_ANALYZER_LOST] += stream.chunks[i].header.calls;
    }
    atomic_store(&adt_online_on, false);
    adt_online_streams = false;
    *stats = (adt_online_stats){ .calls_streamed = stream.calls_streamed,
                                 .bytes_streamed = stream.bytes_streamed,
                                 .chunks_streamed = stream.chunks_streamed };
    for (int cause = 0; cause < ADT_ONLINE_LOSS_COUNT; cause++)
        stats->unstreamed[cause] = stream.unstreamed[cause];
    stats->unstreamed[ADT_ONLINE_LOSS_OTHER_THREAD] = atomic_load(&stream.other_threads);
    /* Sends left in flight (a wait that gave up) still read their chunks. */
    if (complete)
        free(stream.chunks);
    stream.chunks = NULL;
    return complete;
}
