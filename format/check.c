/* Whether a record read back from a saved buffer is one the writer can
 * write: the recovery of a process that ended mid-append
 * (recover_rebuild.c in runtime/) cuts a chain at the first record that
 * is not. Normal context. */
#include "format/defs_internal.h"

static bool fits(const adt_record_view *record, size_t needed)
{
    return record->payload_size >= needed;
}

static bool calling_context_known(const adt_defs *defs, uint32_t id, bool undefined_allowed)
{
    return id < defs->calling_context_count || (undefined_allowed && id == ADT_UNDEFINED_ID);
}

static bool region_record_valid(const adt_defs *defs, const adt_record_view *record)
{
    if (!fits(record, sizeof(adt_rec_region)))
        return false;
    const adt_rec_region *region = record->payload;
    return region->region < defs->regions.count && calling_context_known(defs, region->calling_context, true);
}

static bool sample_record_valid(const adt_defs *defs, const adt_record_view *record)
{
    if (!fits(record, sizeof(adt_rec_sample)))
        return false;
    const adt_rec_sample *sample = record->payload;
    return calling_context_known(defs, sample->calling_context, false) && sample->rate_shift < 64 &&
           (sample->metric_count == 0 || sample->metric_count == defs->metrics.count) &&
           fits(record, sizeof *sample + (size_t)sample->metric_count * sizeof(uint64_t));
}

static bool rma_record_valid(const adt_defs *defs, const adt_record_view *record)
{
    if (!fits(record, sizeof(adt_rec_rma)))
        return false;
    const adt_rec_rma *rma = record->payload;
    if (record->kind == ADT_REC_RMA_COLLECTIVE_BEGIN)
        return true;
    if (record->kind == ADT_REC_RMA_GROUP_SYNC && rma->group >= defs->groups.count)
        return false;
    return rma->win < defs->rma_wins.count;
}

static bool io_record_valid(const adt_defs *defs, const adt_record_view *record)
{
    if (!fits(record, sizeof(adt_rec_io)))
        return false;
    const adt_rec_io *io = record->payload;
    if (record->kind == ADT_REC_IO_DELETE_FILE)
        return io->handle < defs->io_files.count;
    return io->handle < defs->io_handles.count;
}

_Static_assert(ADT_REC_KIND_COUNT <= ADT_GUEST_RECORD_KIND, "the buffer's guest kind is no record kind of ours");

static bool record_valid(const adt_defs *defs, const adt_record_view *record)
{
    if (record->kind == ADT_GUEST_RECORD_KIND) {
        /* Another thread's record its host kept (buffer.h): whole where
         * the record it holds is, which is no guest's record again. */
        uint64_t guest;
        adt_record_view held;
        return adt_guest_record_open(record, &guest, &held) && held.kind != ADT_GUEST_RECORD_KIND &&
               record_valid(defs, &held);
    }
    switch ((adt_record_kind)record->kind) {
    case ADT_REC_ENTER:
    case ADT_REC_LEAVE:
        return region_record_valid(defs, record);
    case ADT_REC_SAMPLE:
        return sample_record_valid(defs, record);
    case ADT_REC_MPI_SEND:
    case ADT_REC_MPI_ISEND:
    case ADT_REC_MPI_RECV:
    case ADT_REC_MPI_IRECV:
        return fits(record, sizeof(adt_rec_p2p)) && ((const adt_rec_p2p *)record->payload)->comm < defs->comms.count;
    case ADT_REC_MPI_ISEND_COMPLETE:
    case ADT_REC_MPI_IRECV_REQUEST:
    case ADT_REC_MPI_REQUEST_TEST:
    case ADT_REC_MPI_REQUEST_CANCELLED:
    case ADT_REC_NB_COLLECTIVE_REQUEST:
        return fits(record, sizeof(adt_rec_request));
    case ADT_REC_MPI_COLLECTIVE_BEGIN:
        return true;
    case ADT_REC_MPI_COLLECTIVE_END:
    case ADT_REC_NB_COLLECTIVE_COMPLETE:
        return fits(record, sizeof(adt_rec_collective)) &&
               ((const adt_rec_collective *)record->payload)->comm < defs->comms.count;
    case ADT_REC_BUFFER_FLUSH:
        return fits(record, sizeof(adt_rec_buffer_flush));
    case ADT_REC_MEASUREMENT_ON_OFF:
        return fits(record, sizeof(adt_rec_on_off));
    ADT_REC_RMA_CASES:
        return rma_record_valid(defs, record);
    ADT_REC_IO_CASES:
        return io_record_valid(defs, record);
    case ADT_REC_PARAMETER_INT:
        return fits(record, sizeof(adt_rec_parameter)) &&
               ((const adt_rec_parameter *)record->payload)->parameter < defs->parameters.count;
    case ADT_REC_USER_METRIC:
        return fits(record, sizeof(adt_rec_user_metric)) &&
               ((const adt_rec_user_metric *)record->payload)->metric < defs->user_metrics.count;
    case ADT_REC_KIND_COUNT:
        break;
    }
    return false;
}

bool adt_record_valid(adt_defs *defs, const adt_record_view *record)
{
    pthread_mutex_lock(&defs->lock);
    bool valid = record_valid(defs, record);
    pthread_mutex_unlock(&defs->lock);
    return valid;
}
