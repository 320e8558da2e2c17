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
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "core/core.h"
#include "format/blob.h"
#include "format/otf2_collectives.h"
#include "format/unify.h"

#define ARCHIVE_NAME "traces"
#define TEMP_SUFFIX ".tmp-XXXXXX"
/* OTF2 copies every write smaller than its 4 MiB file buffer into that
 * buffer first (OTF2_FILE_BUFFER_SIZE in OTF2 3.0.2's file layer); a full
 * chunk of 4 MiB goes to the file directly. The definition chunk has the
 * same size, so a definition writer reuses an event writer's chunk (see
 * allocate_chunk). */
#define EVENT_CHUNK_BYTES (4u * 1024u * 1024u)
#define DEF_CHUNK_BYTES (4u * 1024u * 1024u)
#define RATE_SHIFTS 64
#define CHUNK_POOL_SIZE 4

/* Chunks of closed OTF2 writers, kept for the next writer (see allocate_chunk). */
typedef struct spare_chunk {
    void *memory;
    uint64_t bytes;
} spare_chunk;

typedef struct chunk_pool {
    spare_chunk spares[CHUNK_POOL_SIZE];
    size_t count;
} chunk_pool;

typedef struct writer {
    const adt_trace_input *input;
    const adt_collectives *collectives;
    adt_trace_result *result;
    char temp_dir[ADT_PATH_MAX + sizeof TEMP_SUFFIX];
    adt_id_maps maps;
    adt_global_defs global;          /* rank 0 */
    uint32_t *cc_parent;             /* local calling-context tree */
    uint32_t *cc_depth;
    OTF2_Archive *archive;
    OTF2_CollectiveContext *otf2_context;
    uint64_t rate_shift_union;       /* rate shifts used by any sample of any rank */
    bool archive_abandoned;          /* some rank's OTF2 reported an error */
    chunk_pool chunks;
} writer;

/* What one location's stream looked like, gathered on rank 0. */
typedef struct location_summary {
    uint64_t events;
    uint64_t first_time;  /* corrected by the clock offsets */
    uint64_t last_time;
    uint64_t rate_shifts; /* bit k: samples that stand for 2^k initial periods */
    uint32_t has_events;
    uint32_t thread_index;
} location_summary;

/* Messages are cut at the size of their buffer (paths can be long). */
static void format_message(char *out, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void format_message(char *out, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(out, size, format, args);
    va_end(args);
}

static void set_error(writer *w, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void set_error(writer *w, const char *format, ...)
{
    if (w->result->error[0])
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(w->result->error, sizeof w->result->error, format, args);
    va_end(args);
}

/* OTF2 reports its own errors through this hook; the first one becomes the
 * detail of our message instead of going to stderr.
 *
 * After OTF2 reported an error the archive object is abandoned: no further
 * call touches it, not even a close. OTF2 3.0.2 frees a file buffer twice
 * when a writer whose write failed (EFBIG, ENOSPC) is closed, so closing
 * would turn a full disk into a crash; leaking the archive's memory on this
 * error path is the lesser harm. */
static __thread char otf2_error_detail[256];
static __thread bool otf2_error_seen;
static OTF2_ErrorCode capture_otf2_error(void *user, const char *file, uint64_t line,
                                         const char *function, OTF2_ErrorCode code,
                                         const char *format, va_list args)
{
    (void)user, (void)file, (void)line, (void)function;
    otf2_error_seen = true;
    if (!otf2_error_detail[0]) {
        char message[200];
        vsnprintf(message, sizeof message, format, args);
        snprintf(otf2_error_detail, sizeof otf2_error_detail, "%s: %s",
                 OTF2_Error_GetDescription(code), message);
    }
    return code;
}

static uint64_t bytes_of_this_rank(const writer *w);

/* With the bytes this rank's files held when it failed: a full disk shows
 * how far the write got (a file size limit stops at that size). */
static void set_otf2_error(writer *w, const char *what, OTF2_ErrorCode code)
{
    set_error(w, "writing trace %s: %s failed in %s (%s; %llu bytes of this rank's files written)",
              w->input->archive_dir, what, w->temp_dir,
              otf2_error_detail[0] ? otf2_error_detail : OTF2_Error_GetName(code),
              (unsigned long long)bytes_of_this_rank(w));
}

static uint64_t location_id(uint32_t rank, uint32_t thread_index)
{
    return (uint64_t)rank + ((uint64_t)thread_index << 32);
}

static OTF2_FlushType flush_always(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                   void *caller, bool final)
{
    (void)user, (void)type, (void)location, (void)caller, (void)final;
    return OTF2_FLUSH;
}

/* No post-flush callback: with one OTF2 would record every chunk written
 * during this final write as a BufferFlush event, which it is not. */
static const OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = flush_always,
                                                     .otf2_post_flush = NULL };

/* One chunk per OTF2 writer: when it is full OTF2 gets no second one, so it
 * flushes the chunk to its file and reuses it. Without this OTF2 keeps up
 * to 128 MiB per writer in memory until the writer is closed, which would
 * be a second copy of the trace.
 *
 * A closed writer's chunk goes back to the writer's pool, and the next
 * writer of the same chunk size takes it from there, so the chunk's pages
 * are faulted in once per trace, not once per writer. That matters because
 * OTF2 fills the unused rest of a writer's last chunk when it closes the
 * writer, touching all of a definition writer's 4 MiB for a few hundred
 * bytes of definitions. Writers are open one at a time, so the pool
 * usually holds a single chunk, never more than CHUNK_POOL_SIZE. */
typedef struct writer_chunk {
    void *memory;
    uint64_t bytes;
    bool in_use;
} writer_chunk;

static void *take_spare_chunk(chunk_pool *pool, uint64_t chunk_bytes)
{
    for (size_t i = 0; i < pool->count; ++i)
        if (pool->spares[i].bytes == chunk_bytes) {
            void *memory = pool->spares[i].memory;
            pool->spares[i] = pool->spares[--pool->count];
            return memory;
        }
    return malloc(chunk_bytes);
}

static void return_spare_chunk(chunk_pool *pool, void *memory, uint64_t chunk_bytes)
{
    if (pool->count == CHUNK_POOL_SIZE) {
        free(memory);
        return;
    }
    pool->spares[pool->count++] = (spare_chunk){ memory, chunk_bytes };
}

static void free_chunk_pool(chunk_pool *pool)
{
    for (size_t i = 0; i < pool->count; ++i)
        free(pool->spares[i].memory);
    pool->count = 0;
}

static void *allocate_chunk(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer,
                            uint64_t chunk_bytes)
{
    (void)type, (void)location;
    writer_chunk *chunk = *per_buffer;
    if (!chunk) {
        chunk = calloc(1, sizeof *chunk);
        if (!chunk)
            return NULL;
        *per_buffer = chunk;
    }
    if (chunk->in_use)
        return NULL;
    if (!chunk->memory) {
        if (!(chunk->memory = take_spare_chunk(user, chunk_bytes)))
            return NULL;
        chunk->bytes = chunk_bytes;
    }
    chunk->in_use = true;
    return chunk->memory;
}

static void free_chunks(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer, bool final)
{
    (void)type, (void)location;
    writer_chunk *chunk = *per_buffer;
    if (!chunk)
        return;
    chunk->in_use = false;
    if (final) {
        if (chunk->memory)
            return_spare_chunk(user, chunk->memory, chunk->bytes);
        free(chunk);
        *per_buffer = NULL;
    }
}

static const OTF2_MemoryCallbacks memory_callbacks = { .otf2_allocate = allocate_chunk,
                                                       .otf2_free_all = free_chunks };

/* ---- clock correction --------------------------------------------------- */

static bool has_clock_offsets(const adt_trace_input *input)
{
    for (int i = 0; i < 2; ++i)
        if (input->clock_offsets[i].local_time || input->clock_offsets[i].offset ||
            input->clock_offsets[i].stddev != 0.0)
            return true;
    return false;
}

/* The correction OTF2 readers apply with two ClockOffset records. */
static uint64_t corrected_time(const adt_trace_input *input, uint64_t time)
{
    if (!has_clock_offsets(input))
        return time;
    const adt_clock_offset *a = &input->clock_offsets[0], *b = &input->clock_offsets[1];
    double slope = b->local_time != a->local_time
                       ? (double)(b->offset - a->offset) / ((double)b->local_time - (double)a->local_time)
                       : 0.0;
    return time + (uint64_t)(a->offset + (int64_t)rint(slope * ((double)time - (double)a->local_time)));
}

/* ---- calling contexts ---------------------------------------------------- */

static int prepare_calling_contexts(writer *w)
{
    adt_defs *defs = w->input->defs;
    size_t count = defs->calling_context_count;
    w->cc_parent = malloc((count + 1) * sizeof *w->cc_parent);
    w->cc_depth = malloc((count + 1) * sizeof *w->cc_depth);
    if (!w->cc_parent || !w->cc_depth)
        return -1;
    for (size_t i = 0; i < count; ++i) {
        uint32_t parent = defs->calling_contexts[i].parent;
        w->cc_parent[i] = parent;
        w->cc_depth[i] = parent == ADT_UNDEFINED_ID ? 0 : w->cc_depth[parent] + 1;
    }
    return 0;
}

/* unwindDistance of a calling-context event at cur after prev (section
 * 5.5): the frames newly entered since prev, plus one. The first frame of
 * cur's path that is prev or one of its ancestors is their lowest common
 * ancestor, so the count is depth(cur) - depth(lca). */
static uint32_t unwind_distance(const writer *w, uint32_t prev, uint32_t cur)
{
    if (prev == ADT_UNDEFINED_ID)
        return w->cc_depth[cur] + 2;
    uint32_t a = cur, b = prev;
    while (w->cc_depth[a] > w->cc_depth[b])
        a = w->cc_parent[a];
    while (w->cc_depth[b] > w->cc_depth[a])
        b = w->cc_parent[b];
    while (a != b && a != ADT_UNDEFINED_ID) {
        a = w->cc_parent[a];
        b = w->cc_parent[b];
    }
    if (a == ADT_UNDEFINED_ID)
        return w->cc_depth[cur] + 2;
    return w->cc_depth[cur] - w->cc_depth[a] + 1;
}

/* ---- event stream of one location ---------------------------------------- */

typedef struct open_region {
    uint32_t region;           /* local id */
    uint32_t calling_context;  /* local id or ADT_UNDEFINED_ID */
} open_region;

typedef struct stream {
    writer *w;
    OTF2_EvtWriter *out;
    uint64_t location;
    uint32_t prev_cc;
    open_region *stack;
    size_t depth;
    size_t stack_capacity;
    OTF2_Type *metric_types;
    OTF2_MetricValue *metric_values;
    unsigned final_shift; /* the location's shift at the end of the run */
    location_summary summary;
} stream;

static bool payload_fits(stream *s, const adt_record_view *record, size_t needed)
{
    if (record->payload_size >= needed)
        return true;
    set_error(s->w, "writing trace %s: location %llu has a record of kind %u with %u payload bytes (expected %zu)",
              s->w->input->archive_dir, (unsigned long long)s->location, record->kind,
              record->payload_size, needed);
    return false;
}

/* Maps a local id; an unknown id is a corrupt record, reported by name. */
static bool map_id(stream *s, const uint32_t *map, uint32_t count, uint32_t id, const char *what,
                   uint32_t *global)
{
    if (id < count) {
        *global = map[id];
        return true;
    }
    set_error(s->w, "writing trace %s: location %llu refers to %s %u, which was never defined (%u defined)",
              s->w->input->archive_dir, (unsigned long long)s->location, what, id, count);
    return false;
}

static bool map_comm(stream *s, uint32_t comm, uint32_t *global)
{
    return map_id(s, s->w->maps.comm, s->w->maps.comm_count, comm, "communicator", global);
}

static bool map_cc(stream *s, uint32_t cc, uint32_t *global)
{
    return map_id(s, s->w->maps.calling_context, s->w->maps.calling_context_count, cc,
                  "calling context", global);
}

static bool push_region(stream *s, uint32_t region, uint32_t calling_context)
{
    if (s->depth == s->stack_capacity) {
        size_t capacity = s->stack_capacity ? s->stack_capacity * 2 : 32;
        open_region *grown = realloc(s->stack, capacity * sizeof *grown);
        if (!grown) {
            set_error(s->w, "writing trace %s: out of memory", s->w->input->archive_dir);
            return false;
        }
        s->stack = grown;
        s->stack_capacity = capacity;
    }
    s->stack[s->depth++] = (open_region){ region, calling_context };
    return true;
}

static OTF2_ErrorCode write_enter(stream *s, uint64_t time, const adt_rec_region *rec)
{
    uint32_t region, cc;
    if (!map_id(s, s->w->maps.region, s->w->maps.region_count, rec->region, "region", &region))
        return OTF2_ERROR_INVALID_DATA;
    uint32_t local_cc = s->w->input->calling_context_style ? rec->calling_context : ADT_UNDEFINED_ID;
    if (!push_region(s, rec->region, local_cc))
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    if (local_cc == ADT_UNDEFINED_ID)
        return OTF2_EvtWriter_Enter(s->out, NULL, time, region);
    if (!map_cc(s, rec->calling_context, &cc))
        return OTF2_ERROR_INVALID_DATA;
    uint32_t distance = unwind_distance(s->w, s->prev_cc, rec->calling_context);
    s->prev_cc = rec->calling_context;
    return OTF2_EvtWriter_CallingContextEnter(s->out, NULL, time, cc, distance);
}

/* Leaves the innermost open region; a Leave that does not match it would
 * break the nesting every reader relies on, so it is refused. The open
 * region's calling context decides the form, as it did for its Enter. */
static OTF2_ErrorCode write_leave(stream *s, uint64_t time, const adt_rec_region *rec)
{
    if (s->depth == 0 || s->stack[s->depth - 1].region != rec->region) {
        set_error(s->w, "writing trace %s: location %llu leaves region %u at time %llu without a matching enter",
                  s->w->input->archive_dir, (unsigned long long)s->location, rec->region,
                  (unsigned long long)time);
        return OTF2_ERROR_INVALID_DATA;
    }
    uint32_t local_cc = s->stack[--s->depth].calling_context;
    if (local_cc == ADT_UNDEFINED_ID)
        return OTF2_EvtWriter_Leave(s->out, NULL, time, s->w->maps.region[rec->region]);
    uint32_t cc = s->w->maps.calling_context[local_cc];
    s->prev_cc = s->w->cc_parent[local_cc];
    return OTF2_EvtWriter_CallingContextLeave(s->out, NULL, time, cc);
}

static OTF2_ErrorCode write_sample(stream *s, uint64_t time, const adt_record_view *record)
{
    const adt_rec_sample *rec = record->payload;
    uint32_t cc;
    if (!map_cc(s, rec->calling_context, &cc))
        return OTF2_ERROR_INVALID_DATA;
    if (rec->rate_shift > s->final_shift || s->final_shift >= RATE_SHIFTS || s->w->input->initial_rate_hz == 0) {
        set_error(s->w, "writing trace %s: location %llu has a sample at rate shift %u, its location ends at shift %u, "
                  "initial rate %u Hz (accepted: sample shift <= final shift < 64, rate > 0)",
                  s->w->input->archive_dir, (unsigned long long)s->location, rec->rate_shift, s->final_shift,
                  s->w->input->initial_rate_hz);
        return OTF2_ERROR_INVALID_DATA;
    }
    if (rec->metric_count) {
        if (rec->metric_count != s->w->maps.metric_count ||
            !payload_fits(s, record, sizeof *rec + (size_t)rec->metric_count * sizeof(uint64_t))) {
            set_error(s->w, "writing trace %s: location %llu has a sample with %u metric values, but %u metrics are defined",
                      s->w->input->archive_dir, (unsigned long long)s->location, rec->metric_count,
                      s->w->maps.metric_count);
            return OTF2_ERROR_INVALID_DATA;
        }
        for (uint32_t i = 0; i < rec->metric_count; ++i)
            s->metric_values[i].unsigned_int = rec->metric_values[i];
        OTF2_ErrorCode status = OTF2_EvtWriter_Metric(s->out, NULL, time, s->w->maps.metric_class,
                                                      (uint8_t)rec->metric_count, s->metric_types,
                                                      s->metric_values);
        if (status != OTF2_SUCCESS)
            return status;
    }
    /* Weights: after k halvings the location keeps the samples numbered
     * n ≡ 0 mod 2^k, so every retained sample, whatever rate it was taken
     * at, stands for 2^k initial periods of its thread's time. Its
     * generator is that period (docs/otf2-records.md), so that samples ×
     * period adds up to the sampled time. Generator ids are shifts here,
     * mapped to global ids by the location's mapping table
     * (write_local_definitions). */
    s->summary.rate_shifts |= 1ull << s->final_shift;
    uint32_t distance = unwind_distance(s->w, s->prev_cc, rec->calling_context);
    s->prev_cc = rec->calling_context;
    return OTF2_EvtWriter_CallingContextSample(s->out, NULL, time, cc, distance, s->final_shift);
}

static OTF2_ErrorCode write_rma(stream *s, const adt_record_view *r)
{
    const uint64_t t = r->time;
    if (!payload_fits(s, r, sizeof(adt_rec_rma)))
        return OTF2_ERROR_INVALID_DATA;
    const adt_rec_rma *m = r->payload;
    if (r->kind == ADT_REC_RMA_COLLECTIVE_BEGIN)
        return OTF2_EvtWriter_RmaCollectiveBegin(s->out, NULL, t);
    uint32_t win, group;
    if (!map_id(s, s->w->maps.rma_win, s->w->maps.rma_win_count, m->win, "RMA window", &win))
        return OTF2_ERROR_INVALID_DATA;
    switch ((adt_record_kind)r->kind) {
    case ADT_REC_RMA_WIN_CREATE:
        return OTF2_EvtWriter_RmaWinCreate(s->out, NULL, t, win);
    case ADT_REC_RMA_WIN_DESTROY:
        return OTF2_EvtWriter_RmaWinDestroy(s->out, NULL, t, win);
    case ADT_REC_RMA_COLLECTIVE_END:
        return OTF2_EvtWriter_RmaCollectiveEnd(s->out, NULL, t, (OTF2_CollectiveOp)m->detail, m->sync_level, win,
                                               OTF2_UNDEFINED_UINT32, m->bytes_sent, m->bytes_received);
    case ADT_REC_RMA_GROUP_SYNC:
        if (!map_id(s, s->w->maps.group, s->w->maps.group_count, m->group, "group", &group))
            return OTF2_ERROR_INVALID_DATA;
        return OTF2_EvtWriter_RmaGroupSync(s->out, NULL, t, m->sync_level, win, group);
    case ADT_REC_RMA_REQUEST_LOCK:
        return OTF2_EvtWriter_RmaRequestLock(s->out, NULL, t, win, m->target, m->matching_id,
                                             (OTF2_LockType)m->detail);
    case ADT_REC_RMA_RELEASE_LOCK:
        return OTF2_EvtWriter_RmaReleaseLock(s->out, NULL, t, win, m->target, m->matching_id);
    case ADT_REC_RMA_SYNC:
        return OTF2_EvtWriter_RmaSync(s->out, NULL, t, win, m->target, (OTF2_RmaSyncType)m->detail);
    case ADT_REC_RMA_PUT:
        return OTF2_EvtWriter_RmaPut(s->out, NULL, t, win, m->target, m->bytes_sent, m->matching_id);
    case ADT_REC_RMA_GET:
        return OTF2_EvtWriter_RmaGet(s->out, NULL, t, win, m->target, m->bytes_received, m->matching_id);
    case ADT_REC_RMA_ATOMIC:
        return OTF2_EvtWriter_RmaAtomic(s->out, NULL, t, win, m->target, (OTF2_RmaAtomicType)m->detail,
                                        m->bytes_sent, m->bytes_received, m->matching_id);
    case ADT_REC_RMA_OP_COMPLETE_BLOCKING:
        return OTF2_EvtWriter_RmaOpCompleteBlocking(s->out, NULL, t, win, m->matching_id);
    case ADT_REC_RMA_OP_COMPLETE_NONBLOCKING:
        return OTF2_EvtWriter_RmaOpCompleteNonBlocking(s->out, NULL, t, win, m->matching_id);
    case ADT_REC_RMA_OP_COMPLETE_REMOTE:
        return OTF2_EvtWriter_RmaOpCompleteRemote(s->out, NULL, t, win, m->matching_id);
    default:
        return OTF2_EvtWriter_RmaOpTest(s->out, NULL, t, win, m->matching_id);
    }
}

/* The archive's one I/O paradigm, defined when an I/O file is. */
#define IO_PARADIGM_MPI 0

static OTF2_ErrorCode write_io(stream *s, const adt_record_view *r)
{
    const uint64_t t = r->time;
    if (!payload_fits(s, r, sizeof(adt_rec_io)))
        return OTF2_ERROR_INVALID_DATA;
    const adt_rec_io *m = r->payload;
    uint32_t id;
    if (r->kind == ADT_REC_IO_DELETE_FILE) {
        if (!map_id(s, s->w->maps.io_file, s->w->maps.io_file_count, m->handle, "I/O file", &id))
            return OTF2_ERROR_INVALID_DATA;
        return OTF2_EvtWriter_IoDeleteFile(s->out, NULL, t, IO_PARADIGM_MPI, id);
    }
    if (!map_id(s, s->w->maps.io_handle, s->w->maps.io_handle_count, m->handle, "I/O handle", &id))
        return OTF2_ERROR_INVALID_DATA;
    switch ((adt_record_kind)r->kind) {
    case ADT_REC_IO_CREATE_HANDLE:
        return OTF2_EvtWriter_IoCreateHandle(s->out, NULL, t, id, (OTF2_IoAccessMode)m->mode,
                                             (OTF2_IoCreationFlag)m->flags, (OTF2_IoStatusFlag)m->status_flags);
    case ADT_REC_IO_DESTROY_HANDLE:
        return OTF2_EvtWriter_IoDestroyHandle(s->out, NULL, t, id);
    case ADT_REC_IO_OPERATION_BEGIN:
        return OTF2_EvtWriter_IoOperationBegin(s->out, NULL, t, id, (OTF2_IoOperationMode)m->mode,
                                               (OTF2_IoOperationFlag)m->flags, m->bytes, m->matching_id);
    case ADT_REC_IO_OPERATION_ISSUED:
        return OTF2_EvtWriter_IoOperationIssued(s->out, NULL, t, id, m->matching_id);
    case ADT_REC_IO_OPERATION_TEST:
        return OTF2_EvtWriter_IoOperationTest(s->out, NULL, t, id, m->matching_id);
    case ADT_REC_IO_OPERATION_COMPLETE:
        return OTF2_EvtWriter_IoOperationComplete(s->out, NULL, t, id, m->bytes, m->matching_id);
    case ADT_REC_IO_OPERATION_CANCELLED:
        return OTF2_EvtWriter_IoOperationCancelled(s->out, NULL, t, id, m->matching_id);
    default:
        return OTF2_EvtWriter_IoSeek(s->out, NULL, t, id, m->offset, (OTF2_IoSeekOption)m->mode, m->bytes);
    }
}

static OTF2_ErrorCode write_record(stream *s, const adt_record_view *r)
{
    const uint64_t t = r->time;
    const void *p = r->payload;
    uint32_t comm;
    switch ((adt_record_kind)r->kind) {
    case ADT_REC_ENTER:
        return payload_fits(s, r, sizeof(adt_rec_region)) ? write_enter(s, t, p) : OTF2_ERROR_INVALID_DATA;
    case ADT_REC_LEAVE:
        return payload_fits(s, r, sizeof(adt_rec_region)) ? write_leave(s, t, p) : OTF2_ERROR_INVALID_DATA;
    case ADT_REC_SAMPLE:
        return payload_fits(s, r, sizeof(adt_rec_sample)) ? write_sample(s, t, r) : OTF2_ERROR_INVALID_DATA;
    case ADT_REC_MPI_SEND:
    case ADT_REC_MPI_ISEND:
    case ADT_REC_MPI_RECV:
    case ADT_REC_MPI_IRECV: {
        if (!payload_fits(s, r, sizeof(adt_rec_p2p)))
            return OTF2_ERROR_INVALID_DATA;
        const adt_rec_p2p *m = p;
        if (!map_comm(s, m->comm, &comm))
            return OTF2_ERROR_INVALID_DATA;
        if (r->kind == ADT_REC_MPI_SEND)
            return OTF2_EvtWriter_MpiSend(s->out, NULL, t, m->peer, comm, m->tag, m->bytes);
        if (r->kind == ADT_REC_MPI_ISEND)
            return OTF2_EvtWriter_MpiIsend(s->out, NULL, t, m->peer, comm, m->tag, m->bytes, m->request);
        if (r->kind == ADT_REC_MPI_RECV)
            return OTF2_EvtWriter_MpiRecv(s->out, NULL, t, m->peer, comm, m->tag, m->bytes);
        return OTF2_EvtWriter_MpiIrecv(s->out, NULL, t, m->peer, comm, m->tag, m->bytes, m->request);
    }
    case ADT_REC_MPI_ISEND_COMPLETE:
    case ADT_REC_MPI_IRECV_REQUEST:
    case ADT_REC_MPI_REQUEST_TEST:
    case ADT_REC_MPI_REQUEST_CANCELLED:
    case ADT_REC_NB_COLLECTIVE_REQUEST: {
        if (!payload_fits(s, r, sizeof(adt_rec_request)))
            return OTF2_ERROR_INVALID_DATA;
        uint64_t request = ((const adt_rec_request *)p)->request;
        switch ((adt_record_kind)r->kind) {
        case ADT_REC_MPI_ISEND_COMPLETE:
            return OTF2_EvtWriter_MpiIsendComplete(s->out, NULL, t, request);
        case ADT_REC_MPI_IRECV_REQUEST:
            return OTF2_EvtWriter_MpiIrecvRequest(s->out, NULL, t, request);
        case ADT_REC_MPI_REQUEST_TEST:
            return OTF2_EvtWriter_MpiRequestTest(s->out, NULL, t, request);
        case ADT_REC_MPI_REQUEST_CANCELLED:
            return OTF2_EvtWriter_MpiRequestCancelled(s->out, NULL, t, request);
        default:
            return OTF2_EvtWriter_NonBlockingCollectiveRequest(s->out, NULL, t, request);
        }
    }
    case ADT_REC_MPI_COLLECTIVE_BEGIN:
        return OTF2_EvtWriter_MpiCollectiveBegin(s->out, NULL, t);
    case ADT_REC_MPI_COLLECTIVE_END:
    case ADT_REC_NB_COLLECTIVE_COMPLETE: {
        if (!payload_fits(s, r, sizeof(adt_rec_collective)))
            return OTF2_ERROR_INVALID_DATA;
        const adt_rec_collective *c = p;
        if (!map_comm(s, c->comm, &comm))
            return OTF2_ERROR_INVALID_DATA;
        if (r->kind == ADT_REC_MPI_COLLECTIVE_END)
            return OTF2_EvtWriter_MpiCollectiveEnd(s->out, NULL, t, (OTF2_CollectiveOp)c->op, comm,
                                                   c->root, c->sent, c->received);
        return OTF2_EvtWriter_NonBlockingCollectiveComplete(s->out, NULL, t, (OTF2_CollectiveOp)c->op,
                                                            comm, c->root, c->sent, c->received,
                                                            c->request);
    }
    case ADT_REC_BUFFER_FLUSH:
        if (!payload_fits(s, r, sizeof(adt_rec_buffer_flush)))
            return OTF2_ERROR_INVALID_DATA;
        return OTF2_EvtWriter_BufferFlush(s->out, NULL, t, ((const adt_rec_buffer_flush *)p)->stop_time);
    case ADT_REC_MEASUREMENT_ON_OFF:
        if (!payload_fits(s, r, sizeof(adt_rec_on_off)))
            return OTF2_ERROR_INVALID_DATA;
        return OTF2_EvtWriter_MeasurementOnOff(s->out, NULL, t,
                                               ((const adt_rec_on_off *)p)->on ? OTF2_MEASUREMENT_ON
                                                                               : OTF2_MEASUREMENT_OFF);
    ADT_REC_RMA_CASES:
        return write_rma(s, r);
    ADT_REC_IO_CASES:
        return write_io(s, r);
    case ADT_REC_KIND_COUNT:
        break;
    }
    set_error(s->w, "writing trace %s: location %llu has a record of unknown kind %u",
              s->w->input->archive_dir, (unsigned long long)s->location, r->kind);
    return OTF2_ERROR_INVALID_DATA;
}

/* A program that ended inside a region (killed in an MPI call, or events
 * stopped by a full buffer) leaves Enters without Leaves; they are closed
 * at the last timestamp so that nesting stays valid for every reader. */
static OTF2_ErrorCode close_open_regions(stream *s, uint64_t time)
{
    while (s->depth) {
        open_region open = s->stack[s->depth - 1];
        adt_rec_region rec = { open.region, open.calling_context };
        OTF2_ErrorCode status = write_leave(s, time, &rec);
        if (status != OTF2_SUCCESS)
            return status;
    }
    return OTF2_SUCCESS;
}

static int write_location(writer *w, const adt_trace_thread *thread, location_summary *summary)
{
    stream s = { .w = w, .prev_cc = ADT_UNDEFINED_ID };
    s.location = location_id(w->collectives->rank, thread->thread_index);
    s.summary.thread_index = thread->thread_index;
    uint32_t metrics = w->maps.metric_count;
    s.metric_types = malloc((metrics + 1) * sizeof *s.metric_types);
    s.metric_values = malloc((metrics + 1) * sizeof *s.metric_values);
    adt_location_stats location_stats;
    adt_location_get_stats(thread->location, &location_stats);
    s.final_shift = location_stats.shift;
    adt_reader *reader = adt_reader_open(thread->location);
    s.out = OTF2_Archive_GetEvtWriter(w->archive, s.location);
    int rc = -1;
    if (!s.metric_types || !s.metric_values || !reader) {
        set_error(w, "writing trace %s: cannot read location %llu from the buffer (out of memory or spill file unreadable)",
                  w->input->archive_dir, (unsigned long long)s.location);
        goto out;
    }
    if (!s.out) {
        set_otf2_error(w, "opening an event writer", OTF2_ERROR_INVALID);
        goto out;
    }
    for (uint32_t i = 0; i < metrics; ++i)
        s.metric_types[i] = OTF2_TYPE_UINT64;
    adt_record_view record;
    OTF2_ErrorCode status = OTF2_SUCCESS;
    while (status == OTF2_SUCCESS && adt_reader_next(reader, &record)) {
        if (!s.summary.has_events) {
            s.summary.has_events = 1;
            s.summary.first_time = record.time;
        }
        s.summary.last_time = record.time;
        status = write_record(&s, &record);
    }
    if (status == OTF2_SUCCESS)
        status = close_open_regions(&s, s.summary.last_time);
    if (status == OTF2_SUCCESS)
        status = OTF2_EvtWriter_GetNumberOfEvents(s.out, &s.summary.events);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "writing events", status);
        goto out;
    }
    rc = 0;
out:
    if (s.out && !otf2_error_seen) {
        OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(w->archive, s.out);
        if (closed != OTF2_SUCCESS && rc == 0) {
            set_otf2_error(w, "closing an event file", closed);
            rc = -1;
        }
    }
    if (reader)
        adt_reader_close(reader);
    free(s.stack);
    free(s.metric_types);
    free(s.metric_values);
    s.summary.first_time = corrected_time(w->input, s.summary.first_time);
    s.summary.last_time = corrected_time(w->input, s.summary.last_time);
    *summary = s.summary;
    return rc;
}

/* ---- local definition files ----------------------------------------------- */

static int write_local_definitions(writer *w, const location_summary *summary)
{
    uint64_t id = location_id(w->collectives->rank, summary->thread_index);
    OTF2_DefWriter *out = OTF2_Archive_GetDefWriter(w->archive, id);
    if (!out) {
        set_otf2_error(w, "opening a local definition writer", OTF2_ERROR_INVALID);
        return -1;
    }
    OTF2_ErrorCode status = OTF2_SUCCESS;
    if (summary->rate_shifts) {
        uint32_t map[RATE_SHIFTS];
        uint32_t length = 64 - (uint32_t)__builtin_clzll(summary->rate_shifts);
        for (uint32_t k = 0; k < length; ++k)
            map[k] = (uint32_t)__builtin_popcountll(w->rate_shift_union & ((1ull << k) - 1));
        OTF2_IdMap *id_map = OTF2_IdMap_CreateFromUint32Array(length, map, false);
        status = id_map ? OTF2_DefWriter_WriteMappingTable(out, OTF2_MAPPING_INTERRUPT_GENERATOR, id_map)
                        : OTF2_ERROR_MEM_ALLOC_FAILED;
        if (id_map)
            OTF2_IdMap_Free(id_map);
    }
    for (int i = 0; i < 2 && status == OTF2_SUCCESS && has_clock_offsets(w->input); ++i) {
        const adt_clock_offset *o = &w->input->clock_offsets[i];
        /* OTF2 refuses two synchronisation points at one time. */
        if (i == 1 && o->local_time == w->input->clock_offsets[0].local_time)
            break;
        status = OTF2_DefWriter_WriteClockOffset(out, o->local_time, o->offset, o->stddev);
    }
    if (!otf2_error_seen) {
        OTF2_ErrorCode closed = OTF2_Archive_CloseDefWriter(w->archive, out);
        if (status == OTF2_SUCCESS)
            status = closed;
    }
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "writing a local definition file", status);
        return -1;
    }
    return 0;
}

/* ---- global definitions (rank 0) ----------------------------------------- */

typedef struct global_strings {
    uint32_t empty, mpi, sampling, machine_class, node_class, machine;
    uint32_t mpi_io, mpi_io_name;  /* the I/O paradigm's, when one is written */
    uint32_t *rank_names;
    uint32_t *generator_names;
} global_strings;

static int intern_writer_strings(writer *w, global_strings *s)
{
    adt_global_defs *g = &w->global;
    char text[64];
    s->empty = adt_global_string(g, "");
    s->mpi = adt_global_string(g, "MPI");
    s->sampling = adt_global_string(g, "Sampling");
    s->machine_class = adt_global_string(g, "machine");
    s->node_class = adt_global_string(g, "node");
    s->machine = adt_global_string(g, "adaptrace machine");
    if (g->io_files.count) {
        s->mpi_io = adt_global_string(g, "MPI-IO");
        s->mpi_io_name = adt_global_string(g, "MPI I/O");
    }
    s->rank_names = malloc(((size_t)g->rank_count + 1) * sizeof *s->rank_names);
    s->generator_names = malloc(RATE_SHIFTS * sizeof *s->generator_names);
    if (!s->rank_names || !s->generator_names)
        return -1;
    bool ok = s->empty != ADT_UNDEFINED_ID && s->machine != ADT_UNDEFINED_ID;
    ok &= !g->io_files.count || (s->mpi_io != ADT_UNDEFINED_ID && s->mpi_io_name != ADT_UNDEFINED_ID);
    for (uint32_t r = 0; r < g->rank_count; ++r) {
        snprintf(text, sizeof text, "MPI Rank %u", r);
        s->rank_names[r] = adt_global_string(g, text);
        ok &= s->rank_names[r] != ADT_UNDEFINED_ID;
    }
    for (uint32_t k = 0; k < RATE_SHIFTS; ++k) {
        if (!(w->rate_shift_union >> k & 1))
            continue;
        snprintf(text, sizeof text, "timer %g us", ldexp(1e6 / w->input->initial_rate_hz, (int)k));
        s->generator_names[k] = adt_global_string(g, text);
        ok &= s->generator_names[k] != ADT_UNDEFINED_ID;
    }
    return ok ? 0 : -1;
}

#define TRY(call)                          \
    do {                                   \
        status = (call);                   \
        if (status != OTF2_SUCCESS)        \
            goto out;                      \
    } while (0)

static int write_global_definitions(writer *w, const location_summary *summaries,
                                    const uint64_t *first_summary)
{
    adt_global_defs *g = &w->global;
    global_strings names = { 0 };
    uint64_t *members = NULL;
    OTF2_ErrorCode status = OTF2_ERROR_MEM_ALLOC_FAILED;
    OTF2_GlobalDefWriter *out = OTF2_Archive_GetGlobalDefWriter(w->archive);
    if (!out || intern_writer_strings(w, &names) != 0)
        goto out;
    size_t most_members = g->rank_count;
    for (uint32_t i = 0; i < g->groups.count; ++i) {
        size_t bytes;
        adt_intern_key(&g->groups, i, &bytes);
        if (bytes / sizeof(uint32_t) > most_members)
            most_members = bytes / sizeof(uint32_t);
    }
    members = malloc((most_members + 1) * sizeof *members);
    if (!members)
        goto out;

    uint64_t begin = UINT64_MAX, end = 0;
    size_t location_total = first_summary[g->rank_count];
    for (size_t i = 0; i < location_total; ++i) {
        if (!summaries[i].has_events)
            continue;
        begin = summaries[i].first_time < begin ? summaries[i].first_time : begin;
        end = summaries[i].last_time > end ? summaries[i].last_time : end;
    }
    if (begin > end)
        begin = end = 0;
    uint64_t resolution = w->input->timer_resolution ? w->input->timer_resolution : 1000000000ull;
    TRY(OTF2_GlobalDefWriter_WriteClockProperties(out, resolution, begin, end - begin,
                                                  OTF2_UNDEFINED_TIMESTAMP));
    for (uint32_t i = 0; i < g->strings.count; ++i) {
        size_t size;
        const char *bytes = adt_intern_key(&g->strings, i, &size);
        char *text = strndup(bytes, size);
        status = text ? OTF2_GlobalDefWriter_WriteString(out, i, text) : OTF2_ERROR_MEM_ALLOC_FAILED;
        free(text);
        if (status != OTF2_SUCCESS)
            goto out;
    }
    TRY(OTF2_GlobalDefWriter_WriteParadigm(out, OTF2_PARADIGM_MPI, names.mpi, OTF2_PARADIGM_CLASS_PROCESS));
    bool sampling = w->input->calling_context_style || w->rate_shift_union;
    if (sampling)
        TRY(OTF2_GlobalDefWriter_WriteParadigm(out, OTF2_PARADIGM_SAMPLING, names.sampling,
                                               OTF2_PARADIGM_CLASS_PROCESS));

    TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(out, 0, names.machine, names.machine_class,
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    TRY(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(out, 0, OTF2_SYSTEM_TREE_DOMAIN_MACHINE));
    for (uint32_t h = 0; h < g->hosts.count; ++h) {
        uint32_t host_name = *(const uint32_t *)adt_intern_key(&g->hosts, h, NULL);
        TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(out, 1 + h, host_name, names.node_class, 0));
        TRY(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(out, 1 + h, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY));
    }
    for (uint32_t r = 0; r < g->rank_count; ++r)
        TRY(OTF2_GlobalDefWriter_WriteLocationGroup(out, r, names.rank_names[r], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                    1 + g->rank_host[r], OTF2_UNDEFINED_LOCATION_GROUP));
    for (uint32_t r = 0; r < g->rank_count; ++r) {
        for (size_t i = first_summary[r]; i < first_summary[r + 1]; ++i) {
            const adt_global_thread *thread = &g->threads[g->rank_first_thread[r] + (i - first_summary[r])];
            TRY(OTF2_GlobalDefWriter_WriteLocation(out, location_id(r, summaries[i].thread_index), thread->name,
                                                   OTF2_LOCATION_TYPE_CPU_THREAD, summaries[i].events, r));
        }
    }
    for (uint32_t i = 0; i < g->regions.count; ++i) {
        const adt_region_key *k = adt_intern_key(&g->regions, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteRegion(out, i, k->name, k->canonical_name, names.empty,
                                             (OTF2_RegionRole)k->role, (OTF2_Paradigm)k->paradigm,
                                             OTF2_REGION_FLAG_NONE, k->source_file, k->begin_line,
                                             k->end_line));
    }

    /* member i of COMM_LOCATIONS: the location doing MPI for world rank i */
    for (uint32_t r = 0; r < g->rank_count; ++r)
        members[r] = location_id(r, 0);
    TRY(OTF2_GlobalDefWriter_WriteGroup(out, ADT_GROUP_COMM_LOCATIONS, names.empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, g->rank_count, members));
    for (uint32_t i = 0; i < g->groups.count; ++i) {
        size_t bytes;
        const uint32_t *ranks = adt_intern_key(&g->groups, i, &bytes);
        uint32_t count = (uint32_t)(bytes / sizeof *ranks);
        for (uint32_t m = 0; m < count; ++m)
            members[m] = ranks[m];
        TRY(OTF2_GlobalDefWriter_WriteGroup(out, 1 + i, names.empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, count, members));
    }
    if (g->self_group_used)
        TRY(OTF2_GlobalDefWriter_WriteGroup(out, 1 + g->groups.count, names.empty, OTF2_GROUP_TYPE_COMM_SELF,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, members));
    for (uint32_t i = 0; i < g->comms.count; ++i) {
        const adt_global_comm *c = &g->comm_info[i];
        if (c->remote_group == ADT_UNDEFINED_ID)
            TRY(OTF2_GlobalDefWriter_WriteComm(out, i, c->name, c->group, c->parent, OTF2_COMM_FLAG_NONE));
        else
            TRY(OTF2_GlobalDefWriter_WriteInterComm(out, i, c->name, c->group, c->remote_group, c->parent,
                                                    OTF2_COMM_FLAG_NONE));
    }
    /* RmaWinCreate/RmaWinDestroy events bound each window's life, as in
     * Score-P's traces. */
    for (uint32_t i = 0; i < g->rma_wins.count; ++i)
        TRY(OTF2_GlobalDefWriter_WriteRmaWin(out, i, names.empty, g->rma_win_comm[i],
                                             OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS));
    /* As Score-P's MPI-IO adapter: one parallel paradigm without
     * properties; files are global (scope: the machine); a handle is named
     * after its file and scoped by the communicator that opened it. */
    if (g->io_files.count)
        TRY(OTF2_GlobalDefWriter_WriteIoParadigm(out, IO_PARADIGM_MPI, names.mpi_io, names.mpi_io_name,
                                                 OTF2_IO_PARADIGM_CLASS_PARALLEL, OTF2_IO_PARADIGM_FLAG_NONE, 0,
                                                 NULL, NULL, NULL));
    for (uint32_t i = 0; i < g->io_files.count; ++i)
        TRY(OTF2_GlobalDefWriter_WriteIoRegularFile(out, i, *(const uint32_t *)adt_intern_key(&g->io_files, i, NULL),
                                                    0));
    for (uint32_t i = 0; i < g->io_handles.count; ++i) {
        const adt_io_handle_key *k = adt_intern_key(&g->io_handles, i, NULL);
        uint32_t name = *(const uint32_t *)adt_intern_key(&g->io_files, k->file, NULL);
        TRY(OTF2_GlobalDefWriter_WriteIoHandle(out, i, name, k->file, IO_PARADIGM_MPI, OTF2_IO_HANDLE_FLAG_NONE,
                                               k->comm, OTF2_UNDEFINED_IO_HANDLE));
    }

    for (uint32_t i = 0; i < g->metrics.count; ++i) {
        uint32_t name = *(const uint32_t *)adt_intern_key(&g->metrics, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteMetricMember(out, i, name, names.empty, OTF2_METRIC_TYPE_PAPI,
                                                   OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                                   OTF2_BASE_DECIMAL, 0, g->metric_units[i]));
    }
    /* counters are read at samples, not at region boundaries: asynchronous */
    for (uint32_t i = 0; i < g->metric_classes.count; ++i) {
        size_t bytes;
        const uint32_t *member_ids = adt_intern_key(&g->metric_classes, i, &bytes);
        TRY(OTF2_GlobalDefWriter_WriteMetricClass(out, i, (uint8_t)(bytes / sizeof *member_ids), member_ids,
                                                  OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_CPU));
    }
    for (uint32_t i = 0; i < g->source_locations.count; ++i) {
        const adt_source_location_key *k = adt_intern_key(&g->source_locations, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteSourceCodeLocation(out, i, k->file, k->line));
    }
    for (uint32_t i = 0; i < g->calling_contexts.count; ++i) {
        const adt_cc_node *node = adt_intern_key(&g->calling_contexts, i, NULL);
        TRY(OTF2_GlobalDefWriter_WriteCallingContext(out, i, node->region, node->source_location, node->parent));
    }
    uint32_t generator = 0;
    for (uint32_t k = 0; k < RATE_SHIFTS; ++k) {
        if (!(w->rate_shift_union >> k & 1))
            continue;
        uint64_t period_us = (uint64_t)llround(ldexp(1e6 / w->input->initial_rate_hz, (int)k));
        TRY(OTF2_GlobalDefWriter_WriteInterruptGenerator(out, generator++, names.generator_names[k],
                                                         OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL,
                                                         -6, period_us));
    }
    status = OTF2_SUCCESS;
out:
    free(names.rank_names);
    free(names.generator_names);
    free(members);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "writing the global definitions", status);
        return -1;
    }
    return 0;
}

/* ---- summaries --------------------------------------------------------------- */

/* Gathers every rank's summaries on rank 0 (rank 0: *all and *first, where
 * rank r's locations are (*all)[(*first)[r] .. (*first)[r + 1])). */
static int gather_summaries(writer *w, const location_summary *mine, size_t count,
                            location_summary **all, uint64_t **first)
{
    const adt_collectives *c = w->collectives;
    bool root = c->rank == 0;
    uint64_t my_count = count;
    size_t *byte_counts = NULL;
    uint64_t *counts = NULL;
    int rc = -1;
    bool ok = true;
    if (root) {
        byte_counts = malloc(c->size * sizeof *byte_counts);
        counts = malloc(c->size * sizeof *counts);
        *first = malloc(((size_t)c->size + 1) * sizeof **first);
        ok = byte_counts && counts && *first;
        for (uint32_t r = 0; ok && r < c->size; ++r)
            byte_counts[r] = sizeof(uint64_t);
    }
    if (adt_agree(c, ok) != 0)
        goto out;
    if (c->gatherv(c->context, &my_count, sizeof my_count, counts, byte_counts, 0) != 0)
        goto out;
    if (root) {
        (*first)[0] = 0;
        for (uint32_t r = 0; r < c->size; ++r) {
            (*first)[r + 1] = (*first)[r] + counts[r];
            byte_counts[r] = (size_t)counts[r] * sizeof(location_summary);
        }
        *all = malloc((size_t)(*first)[c->size] * sizeof **all + 1);
        ok = *all != NULL;
    }
    if (adt_agree(c, ok) != 0)
        goto out;
    if (c->gatherv(c->context, mine, count * sizeof *mine, root ? *all : NULL, byte_counts, 0) != 0)
        goto out;
    rc = 0;
out:
    free(byte_counts);
    free(counts);
    return rc;
}

/* ---- archive directory ------------------------------------------------------- */

/* Rank 0 checks archive_dir and creates the temporary directory; every rank
 * learns its name (or that it failed, with rank 0's message). */
static int prepare_directory(writer *w)
{
    const adt_collectives *c = w->collectives;
    const char *dir = w->input->archive_dir;
    struct {
        uint64_t ok;
        char temp_dir[sizeof w->temp_dir];
        char error[sizeof w->result->error];
    } message = { 0 };
    if (c->rank == 0) {
        struct stat st;
        if (!dir || !dir[0] || strlen(dir) >= ADT_PATH_MAX)
            format_message(message.error, sizeof message.error,
                     "writing trace: archive directory '%s' is not a path (accepted: a non-empty path shorter than %d bytes)",
                     dir ? dir : "(null)", ADT_PATH_MAX);
        else if (lstat(dir, &st) == 0)
            format_message(message.error, sizeof message.error,
                     "writing trace %s: the path exists already (an archive is never written over an existing path)", dir);
        else {
            snprintf(message.temp_dir, sizeof message.temp_dir, "%s" TEMP_SUFFIX, dir);
            if (!mkdtemp(message.temp_dir))
                format_message(message.error, sizeof message.error,
                         "writing trace %s: cannot create the temporary directory %s: %s", dir,
                         message.temp_dir, strerror(errno));
            else {
                /* mkdtemp creates mode 0700; give the archive the usual mode */
                mode_t mask = umask(0);
                umask(mask);
                chmod(message.temp_dir, 0777 & ~mask);
                message.ok = 1;
            }
        }
    }
    if (c->bcast(c->context, &message, sizeof message, 0) != 0) {
        set_error(w, "writing trace %s: broadcasting the temporary directory name failed", dir);
        return -1;
    }
    if (!message.ok) {
        set_error(w, "%s", message.error);
        return -1;
    }
    memcpy(w->temp_dir, message.temp_dir, sizeof w->temp_dir);
    return 0;
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static uint64_t bytes_of_this_rank(const writer *w)
{
    char path[sizeof w->temp_dir + 64];
    uint64_t total = 0;
    for (size_t i = 0; i < w->input->thread_count; ++i) {
        uint64_t id = location_id(w->collectives->rank, w->input->threads[i].thread_index);
        static const char *const suffixes[] = { "evt", "def" };
        for (int s = 0; s < 2; ++s) {
            snprintf(path, sizeof path, "%s/" ARCHIVE_NAME "/%llu.%s", w->temp_dir,
                     (unsigned long long)id, suffixes[s]);
            total += file_bytes(path);
        }
    }
    if (w->collectives->rank == 0) {
        snprintf(path, sizeof path, "%s/" ARCHIVE_NAME ".otf2", w->temp_dir);
        total += file_bytes(path);
        snprintf(path, sizeof path, "%s/" ARCHIVE_NAME ".def", w->temp_dir);
        total += file_bytes(path);
    }
    return total;
}

/* Rank 0 renames the finished archive into place; never over an entry that
 * appeared in the meantime (RENAME_NOREPLACE). */
static int publish(writer *w)
{
    const adt_collectives *c = w->collectives;
    struct {
        uint64_t ok;
        char error[sizeof w->result->error];
    } message = { 0 };
    if (c->rank == 0) {
        if (renameat2(AT_FDCWD, w->temp_dir, AT_FDCWD, w->input->archive_dir, RENAME_NOREPLACE) == 0)
            message.ok = 1;
        else
            format_message(message.error, sizeof message.error, "writing trace %s: cannot rename %s to it: %s",
                     w->input->archive_dir, w->temp_dir, strerror(errno));
    }
    if (c->bcast(c->context, &message, sizeof message, 0) != 0) {
        set_error(w, "writing trace %s: broadcasting the result of the rename failed", w->input->archive_dir);
        return -1;
    }
    if (!message.ok) {
        set_error(w, "%s", message.error);
        return -1;
    }
    return 0;
}

/* ---- the steps ------------------------------------------------------------------ */

static int open_archive(writer *w)
{
    w->archive = OTF2_Archive_Open(w->temp_dir, ARCHIVE_NAME, OTF2_FILEMODE_WRITE, EVENT_CHUNK_BYTES,
                                   DEF_CHUNK_BYTES, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!w->archive) {
        set_otf2_error(w, "opening the archive", OTF2_ERROR_INVALID);
        return -1;
    }
    OTF2_ErrorCode status = OTF2_Archive_SetFlushCallbacks(w->archive, &flush_callbacks, NULL);
    if (status == OTF2_SUCCESS)
        status = OTF2_Archive_SetMemoryCallbacks(w->archive, &memory_callbacks, &w->chunks);
    if (status == OTF2_SUCCESS)
        status = adt_otf2_set_collectives(w->archive, w->collectives, &w->otf2_context);
    if (status == OTF2_SUCCESS && w->input->creator)
        status = OTF2_Archive_SetCreator(w->archive, w->input->creator);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "configuring the archive", status);
        return -1;
    }
    return 0;
}

static int write_events(writer *w, location_summary *summaries)
{
    OTF2_ErrorCode status = OTF2_Archive_OpenEvtFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "opening the event files", status);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < w->input->thread_count && rc == 0; ++i)
        rc = write_location(w, &w->input->threads[i], &summaries[i]);
    return rc;
}

static int close_event_files(writer *w)
{
    OTF2_ErrorCode status = OTF2_Archive_CloseEvtFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "closing the event files", status);
        return -1;
    }
    return 0;
}

static int write_definitions(writer *w, location_summary *summaries, size_t count)
{
    OTF2_ErrorCode status = OTF2_Archive_OpenDefFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "opening the local definition files", status);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; ++i)
        rc = write_local_definitions(w, &summaries[i]);
    return rc;
}

static int close_definition_files(writer *w)
{
    OTF2_ErrorCode status = OTF2_Archive_CloseDefFiles(w->archive);
    if (status != OTF2_SUCCESS) {
        set_otf2_error(w, "closing the local definition files", status);
        return -1;
    }
    return 0;
}

/* Like adt_agree, and also tells every rank whether some rank's OTF2
 * archive is abandoned (see capture_otf2_error): then no rank closes its
 * archive, because the close is collective. */
static int agree_on_archive(writer *w, bool ok, const char *step)
{
    /* A step can return success although OTF2 reported an error through
     * the hook (a buffered write that failed later): this rank failed, and
     * says so with OTF2's detail, not as "another rank". */
    if (!ok || otf2_error_seen)
        set_error(w, "writing trace %s: %s failed in %s (%s)", w->input->archive_dir, step, w->temp_dir,
                  otf2_error_detail[0] ? otf2_error_detail : "no detail from OTF2");
    uint64_t state = otf2_error_seen ? 2 : ok ? 0 : 1;
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
            set_error(w, "writing trace %s: thread %zu has no buffer location", in->archive_dir, i);
            return -1;
        }
        for (size_t j = 0; j < i; ++j)
            if (in->threads[j].thread_index == in->threads[i].thread_index) {
                set_error(w, "writing trace %s: thread index %u is given twice", in->archive_dir,
                          in->threads[i].thread_index);
                return -1;
            }
    }
    if (!in->defs || !in->hostname) {
        set_error(w, "writing trace %s: no definitions registry or host name given", in->archive_dir);
        return -1;
    }
    return 0;
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

    otf2_error_detail[0] = '\0';
    otf2_error_seen = false;
    OTF2_ErrorCallback previous_handler = OTF2_Error_RegisterCallback(capture_otf2_error, NULL);

    if (adt_agree(c, summaries && check_input(&w) == 0) != 0)
        goto fail;
    if (prepare_directory(&w) != 0)
        goto fail;
    have_temp_dir = true;
    if (adt_agree(c, prepare_calling_contexts(&w) == 0) != 0)
        goto fail;
    if (adt_unify(input->defs, input->hostname, input->threads, input->thread_count, c, &w.maps, &w.global,
                  result->error, sizeof result->error) != 0)
        goto fail;
    if (agree_on_archive(&w, open_archive(&w) == 0, "opening the archive") != 0)
        goto fail;
    if (agree_on_archive(&w, write_events(&w, summaries) == 0, "writing the events") != 0)
        goto fail;
    if (agree_on_archive(&w, close_event_files(&w) == 0, "closing the event files") != 0)
        goto fail;
    if (gather_summaries(&w, summaries, input->thread_count, &all_summaries, &first_summary) != 0)
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
    if (agree_on_archive(&w, c->rank != 0 || write_global_definitions(&w, all_summaries, first_summary) == 0,
                         "writing the global definitions") != 0)
        goto fail;
    OTF2_ErrorCode closed = OTF2_Archive_Close(w.archive);
    w.archive = NULL;
    if (closed != OTF2_SUCCESS)
        set_otf2_error(&w, "closing the archive", closed);
    if (adt_agree(c, closed == OTF2_SUCCESS) != 0)
        goto fail;
    for (size_t i = 0; i < input->thread_count; ++i)
        result->events_written += summaries[i].events;
    result->bytes_written = bytes_of_this_rank(&w);
    if (publish(&w) != 0)
        goto fail;
    have_temp_dir = false;
    rc = 0;
fail:
    if (w.archive && !w.archive_abandoned)
        OTF2_Archive_Close(w.archive);
    if (rc != 0) {
        result->failed_here = result->error[0] != '\0';
        set_error(&w, "writing trace %s failed on another rank", input->archive_dir ? input->archive_dir : "");
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
    free_chunk_pool(&w.chunks);
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
