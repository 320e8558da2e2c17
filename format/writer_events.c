/*
 * The end-of-run writer's event stream: one location's records, read back
 * from the buffer in order, become OTF2 events with global ids (no copy of
 * the trace is made). End of run, normal context.
 */
#include <stdlib.h>

#include "format/writer_internal.h"

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
    /* The sampling rate's steps: when the buffer reached each shift
     * (adt_location_stats), from 0, and the next shift to write; none when
     * the rate is not defined (an unsampled run). */
    const uint64_t *shift_reached_at;
    unsigned next_rate_shift;
    /* The buffer's bytes in use before and after the drop that reached
     * each shift (adt_location_stats), written with the rate's steps. */
    const uint64_t (*bytes_in_use_at_shift)[2];
    /* ADAPTRACE_ON_FULL=fold: from when the location's events are only in
     * its skeleton (0: never), and whether that point is written yet. */
    uint64_t folded_from;
    bool fold_marked;
    location_summary summary;
} stream;

static bool payload_fits(stream *s, const adt_record_view *record, size_t needed)
{
    if (record->payload_size >= needed)
        return true;
    adt_writer_error(s->w, "writing trace %s: location %llu has a record of kind %u with %u payload bytes (expected %zu)",
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
    adt_writer_error(s->w, "writing trace %s: location %llu refers to %s %u, which was never defined (%u defined)",
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
            adt_writer_error(s->w, "writing trace %s: out of memory", s->w->input->archive_dir);
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
    uint32_t distance = adt_writer_unwind_distance(s->w, s->prev_cc, rec->calling_context);
    s->prev_cc = rec->calling_context;
    return OTF2_EvtWriter_CallingContextEnter(s->out, NULL, time, cc, distance);
}

/* Leaves the innermost open region; a Leave that does not match it would
 * break the nesting every reader relies on, so it is refused. The open
 * region's calling context decides the form, as it did for its Enter. */
static OTF2_ErrorCode write_leave(stream *s, uint64_t time, const adt_rec_region *rec)
{
    if (s->depth == 0 || s->stack[s->depth - 1].region != rec->region) {
        adt_writer_error(s->w, "writing trace %s: location %llu leaves region %u at time %llu without a matching enter",
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
        adt_writer_error(s->w, "writing trace %s: location %llu has a sample at rate shift %u, its location ends at shift %u, "
                  "initial rate %u Hz (accepted: sample shift <= final shift < 64, rate > 0)",
                  s->w->input->archive_dir, (unsigned long long)s->location, rec->rate_shift, s->final_shift,
                  s->w->input->initial_rate_hz);
        return OTF2_ERROR_INVALID_DATA;
    }
    if (rec->metric_count) {
        if (rec->metric_count != s->w->maps.metric_count ||
            !payload_fits(s, record, sizeof *rec + (size_t)rec->metric_count * sizeof(uint64_t))) {
            adt_writer_error(s->w, "writing trace %s: location %llu has a sample with %u metric values, but %u metrics are defined",
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
     * period adds up to the sampled time. A sample in the event chain
     * (streamed with the events, ADAPTRACE_ONLINE_OUTPUT=trace: no level,
     * no halving removes it) stands for the 2^j periods of the shift j it
     * was taken at. Generator ids are shifts here, mapped to global ids
     * by the location's mapping table (adt_writer_write_local_definitions). */
    unsigned weight = record->level == ADT_EVENT_LEVEL ? rec->rate_shift : s->final_shift;
    s->summary.rate_shifts |= 1ull << weight;
    uint32_t distance = adt_writer_unwind_distance(s->w, s->prev_cc, rec->calling_context);
    s->prev_cc = rec->calling_context;
    return OTF2_EvtWriter_CallingContextSample(s->out, NULL, time, cc, distance, weight);
}

static OTF2_ErrorCode write_rate(stream *s, uint64_t time, unsigned shift)
{
    OTF2_Type type = OTF2_TYPE_DOUBLE;
    OTF2_MetricValue value = { .floating_point = s->w->input->initial_rate_hz / (double)(1ull << shift) };
    return OTF2_EvtWriter_Metric(s->out, NULL, time, s->w->maps.sampling_rate_class, 1, &type, &value);
}

/* The location's stream so far ends at time (events come in time order):
 * its summary's first and last time. */
static void note_time(stream *s, uint64_t time)
{
    if (!s->summary.has_events) {
        s->summary.has_events = 1;
        s->summary.first_time = time;
    }
    s->summary.last_time = time;
}

/* The buffer's use at the halving to shift (docs/otf2-records.md): two
 * values at its time, the bytes in use just before the drop, then just
 * after. */
static OTF2_ErrorCode write_buffer_use(stream *s, uint64_t time, unsigned shift)
{
    OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_ErrorCode status = OTF2_SUCCESS;
    for (unsigned side = 0; side < 2 && status == OTF2_SUCCESS; side++) {
        OTF2_MetricValue value = { .unsigned_int = s->bytes_in_use_at_shift[shift][side] };
        status = OTF2_EvtWriter_Metric(s->out, NULL, time, s->w->maps.buffer_use_class, 1, &type, &value);
    }
    return status;
}

/* The sampling rate of the location (docs/otf2-records.md): one value at
 * each time the buffer stamped a shift, from the start of its sampling
 * (shift 0) to its last halving, written before the records of that time
 * and later ones, so that marks before the location's first record are
 * written at their own time too. A shift without a stamp (its sampling
 * never started) has no mark. Each halving's step (shift 1 on) comes
 * with the buffer's use at it. */
static OTF2_ErrorCode write_rates_until(stream *s, uint64_t time)
{
    if (!s->shift_reached_at)
        return OTF2_SUCCESS;
    for (; s->next_rate_shift <= s->final_shift; s->next_rate_shift++) {
        uint64_t reached = s->shift_reached_at[s->next_rate_shift];
        if (reached > time)
            return OTF2_SUCCESS;
        if (reached != 0) {
            note_time(s, reached);
            OTF2_ErrorCode status = write_rate(s, reached, s->next_rate_shift);
            if (status == OTF2_SUCCESS && s->next_rate_shift > 0)
                status = write_buffer_use(s, reached, s->next_rate_shift);
            if (status != OTF2_SUCCESS)
                return status;
        }
    }
    return OTF2_SUCCESS;
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
    case ADT_REC_PARAMETER_INT: {
        uint32_t parameter;
        if (!payload_fits(s, r, sizeof(adt_rec_parameter)) ||
            !map_id(s, s->w->maps.parameter, s->w->maps.parameter_count, ((const adt_rec_parameter *)p)->parameter,
                    "parameter", &parameter))
            return OTF2_ERROR_INVALID_DATA;
        return OTF2_EvtWriter_ParameterInt(s->out, NULL, t, parameter, ((const adt_rec_parameter *)p)->value);
    }
    case ADT_REC_USER_METRIC: {
        uint32_t metric_class;
        if (!payload_fits(s, r, sizeof(adt_rec_user_metric)) ||
            !map_id(s, s->w->maps.user_metric_class, s->w->maps.user_metric_count,
                    ((const adt_rec_user_metric *)p)->metric, "user metric", &metric_class))
            return OTF2_ERROR_INVALID_DATA;
        OTF2_Type type = OTF2_TYPE_DOUBLE;
        OTF2_MetricValue value = { .floating_point = ((const adt_rec_user_metric *)p)->value };
        return OTF2_EvtWriter_Metric(s->out, NULL, t, metric_class, 1, &type, &value);
    }
    case ADT_REC_KIND_COUNT:
        break;
    }
    adt_writer_error(s->w, "writing trace %s: location %llu has a record of unknown kind %u",
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

/* The point from which a location's events were folded into its skeleton
 * (ADAPTRACE_ON_FULL=fold): the calls still open there are closed, then a
 * MeasurementOnOff(off) says that no event follows, which Vampir shows as
 * an interval with measurement off up to the end; its samples go on. The
 * buffer keeps no record for it (the chunk the point needed had no room),
 * so it is written from the location's folding_began_at, in time order. */
static OTF2_ErrorCode mark_folded(stream *s)
{
    s->fold_marked = true;
    OTF2_ErrorCode status = write_rates_until(s, s->folded_from);
    if (status != OTF2_SUCCESS)
        return status;
    note_time(s, s->folded_from);
    status = close_open_regions(s, s->folded_from);
    if (status != OTF2_SUCCESS)
        return status;
    return OTF2_EvtWriter_MeasurementOnOff(s->out, NULL, s->folded_from, OTF2_MEASUREMENT_OFF);
}

static bool fold_due(const stream *s, uint64_t time)
{
    return s->folded_from != 0 && !s->fold_marked && time > s->folded_from;
}

int adt_writer_write_location(writer *w, const adt_trace_thread *thread, location_summary *summary)
{
    stream s = { .w = w, .prev_cc = ADT_UNDEFINED_ID };
    s.location = adt_writer_location_id(w->collectives->rank, thread->thread_index);
    s.summary.thread_index = thread->thread_index;
    uint32_t metrics = w->maps.metric_count;
    s.metric_types = malloc((metrics + 1) * sizeof *s.metric_types);
    s.metric_values = malloc((metrics + 1) * sizeof *s.metric_values);
    adt_location_stats location_stats;
    adt_location_get_stats(thread->location, &location_stats);
    s.final_shift = location_stats.shift;
    bool sampled = w->maps.sampling_rate_class != ADT_UNDEFINED_ID && s.final_shift < RATE_SHIFTS;
    s.shift_reached_at = sampled ? location_stats.shift_reached_at : NULL;
    s.bytes_in_use_at_shift = location_stats.bytes_in_use_at_shift;
    s.folded_from = location_stats.folding_began_at;
    adt_reader *reader = adt_reader_open(thread->location);
    s.out = OTF2_Archive_GetEvtWriter(w->archive, s.location);
    int rc = -1;
    if (!s.metric_types || !s.metric_values || !reader) {
        adt_writer_error(w, "writing trace %s: cannot read location %llu from the buffer (out of memory or spill file unreadable)",
                  w->input->archive_dir, (unsigned long long)s.location);
        goto out;
    }
    if (!s.out) {
        adt_writer_otf2_error(w, "opening an event writer", OTF2_ERROR_INVALID);
        goto out;
    }
    for (uint32_t i = 0; i < metrics; ++i)
        s.metric_types[i] = OTF2_TYPE_UINT64;
    adt_record_view record;
    OTF2_ErrorCode status = OTF2_SUCCESS;
    while (status == OTF2_SUCCESS && adt_reader_next(reader, &record)) {
        if (fold_due(&s, record.time))
            status = mark_folded(&s);
        if (status == OTF2_SUCCESS)
            status = write_rates_until(&s, record.time);
        note_time(&s, record.time);
        if (status == OTF2_SUCCESS)
            status = write_record(&s, &record);
    }
    if (status == OTF2_SUCCESS && fold_due(&s, UINT64_MAX))
        status = mark_folded(&s);
    if (status == OTF2_SUCCESS)
        status = close_open_regions(&s, s.summary.last_time);
    /* Halvings after the last record (a save taken meanwhile) still count. */
    if (status == OTF2_SUCCESS)
        status = write_rates_until(&s, UINT64_MAX);
    if (status == OTF2_SUCCESS)
        status = OTF2_EvtWriter_GetNumberOfEvents(s.out, &s.summary.events);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "writing events", status);
        goto out;
    }
    rc = 0;
out:
    if (s.out && !adt_writer_otf2_failed()) {
        OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(w->archive, s.out);
        if (closed != OTF2_SUCCESS && rc == 0) {
            adt_writer_otf2_error(w, "closing an event file", closed);
            rc = -1;
        }
    }
    if (reader)
        adt_reader_close(reader);
    free(s.stack);
    free(s.metric_types);
    free(s.metric_values);
    s.summary.first_time = adt_writer_corrected_time(w->input, s.summary.first_time);
    s.summary.last_time = adt_writer_corrected_time(w->input, s.summary.last_time);
    *summary = s.summary;
    return rc;
}
