/* adt_collectives for one process, and the OTF2 collective callbacks
 * expressed over any adt_collectives. */
#include <stdlib.h>
#include <string.h>

#include "format/otf2_collectives.h"

static int serial_barrier(void *context)
{
    (void)context;
    return 0;
}

static int serial_bcast(void *context, void *data, size_t bytes, uint32_t root)
{
    (void)context, (void)data, (void)bytes;
    return root == 0 ? 0 : -1;
}

static int serial_gatherv(void *context, const void *in, size_t in_bytes, void *out,
                          const size_t *out_bytes, uint32_t root)
{
    (void)context;
    if (root != 0 || out_bytes[0] != in_bytes)
        return -1;
    if (in_bytes)
        memmove(out, in, in_bytes);
    return 0;
}

static int serial_scatterv(void *context, const void *in, const size_t *in_bytes, void *out,
                           size_t out_bytes, uint32_t root)
{
    (void)context;
    if (root != 0 || in_bytes[0] != out_bytes)
        return -1;
    if (out_bytes)
        memmove(out, in, out_bytes);
    return 0;
}

static int serial_allreduce(void *context, uint64_t *value)
{
    (void)context, (void)value;
    return 0;
}

/* A lone process has no peer to send to or receive from. */
static int serial_send(void *context, const void *data, size_t bytes, uint32_t to)
{
    (void)context, (void)data, (void)bytes, (void)to;
    return -1;
}

static int serial_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    (void)context, (void)data, (void)bytes, (void)from;
    return -1;
}

const adt_collectives adt_collectives_serial = {
    .context = NULL,
    .rank = 0,
    .size = 1,
    .barrier = serial_barrier,
    .bcast = serial_bcast,
    .gatherv = serial_gatherv,
    .scatterv = serial_scatterv,
    .allreduce_max_u64 = serial_allreduce,
    .allreduce_min_u64 = serial_allreduce,
    .send = serial_send,
    .recv = serial_recv,
};

/* ---- OTF2 callbacks ---------------------------------------------------- */

/* OTF2 hands this context to every callback: it carries the processes. */
struct OTF2_CollectiveContext {
    const adt_collectives *collectives;
};

static size_t type_size(OTF2_Type type)
{
    switch (type) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_INT8:
        return 1;
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_INT16:
        return 2;
    case OTF2_TYPE_UINT32:
    case OTF2_TYPE_INT32:
    case OTF2_TYPE_FLOAT:
        return 4;
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT64:
    case OTF2_TYPE_DOUBLE:
        return 8;
    default:
        return 0;
    }
}

static OTF2_CallbackCode code(int rc)
{
    return rc == 0 ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode get_size(void *user, OTF2_CollectiveContext *context, uint32_t *size)
{
    (void)user;
    *size = context->collectives->size;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode get_rank(void *user, OTF2_CollectiveContext *context, uint32_t *rank)
{
    (void)user;
    *rank = context->collectives->rank;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode barrier(void *user, OTF2_CollectiveContext *context)
{
    const adt_collectives *c = context->collectives;
    (void)user;
    return code(c->barrier(c->context));
}

static OTF2_CallbackCode bcast(void *user, OTF2_CollectiveContext *context, void *data,
                               uint32_t count, OTF2_Type type, uint32_t root)
{
    const adt_collectives *c = context->collectives;
    (void)user;
    return code(c->bcast(c->context, data, (size_t)count * type_size(type), root));
}

static OTF2_CallbackCode gatherv(void *user, OTF2_CollectiveContext *context, const void *in,
                                 uint32_t in_count, void *out, const uint32_t *out_counts,
                                 OTF2_Type type, uint32_t root)
{
    const adt_collectives *c = context->collectives;
    (void)user;
    size_t element = type_size(type);
    size_t *out_bytes = NULL;
    if (c->rank == root) {
        out_bytes = calloc(c->size, sizeof *out_bytes);
        for (uint32_t r = 0; out_bytes && r < c->size; ++r)
            out_bytes[r] = (size_t)out_counts[r] * element;
    }
    /* every rank must enter the collective even if the root lacks memory */
    int rc = c->gatherv(c->context, in, (size_t)in_count * element, out, out_bytes, root);
    if (c->rank == root && !out_bytes)
        rc = -1;
    free(out_bytes);
    return code(rc);
}

/* The per-rank counts of a gather or scatter: count for every rank, on the
 * root only (elsewhere, and when memory is short, NULL). */
static uint32_t *same_counts(const adt_collectives *c, uint32_t count, uint32_t root)
{
    if (c->rank != root)
        return NULL;
    uint32_t *counts = calloc(c->size, sizeof *counts);
    for (uint32_t r = 0; counts && r < c->size; ++r)
        counts[r] = count;
    return counts;
}

static OTF2_CallbackCode gather(void *user, OTF2_CollectiveContext *context, const void *in,
                                void *out, uint32_t count, OTF2_Type type, uint32_t root)
{
    const adt_collectives *c = context->collectives;
    uint32_t *counts = same_counts(c, count, root);
    OTF2_CallbackCode result = gatherv(user, context, in, count, out, counts, type, root);
    if (c->rank == root && !counts)
        result = OTF2_CALLBACK_ERROR;
    free(counts);
    return result;
}

static OTF2_CallbackCode scatterv(void *user, OTF2_CollectiveContext *context, const void *in,
                                  const uint32_t *in_counts, void *out, uint32_t out_count,
                                  OTF2_Type type, uint32_t root)
{
    const adt_collectives *c = context->collectives;
    (void)user;
    size_t element = type_size(type);
    size_t *in_bytes = NULL;
    if (c->rank == root) {
        in_bytes = calloc(c->size, sizeof *in_bytes);
        for (uint32_t r = 0; in_bytes && r < c->size; ++r)
            in_bytes[r] = (size_t)in_counts[r] * element;
    }
    int rc = c->scatterv(c->context, in, in_bytes, out, (size_t)out_count * element, root);
    if (c->rank == root && !in_bytes)
        rc = -1;
    free(in_bytes);
    return code(rc);
}

static OTF2_CallbackCode scatter(void *user, OTF2_CollectiveContext *context, const void *in,
                                 void *out, uint32_t count, OTF2_Type type, uint32_t root)
{
    const adt_collectives *c = context->collectives;
    uint32_t *counts = same_counts(c, count, root);
    OTF2_CallbackCode result = scatterv(user, context, in, counts, out, count, type, root);
    if (c->rank == root && !counts)
        result = OTF2_CALLBACK_ERROR;
    free(counts);
    return result;
}

static const OTF2_CollectiveCallbacks otf2_callbacks = {
    .otf2_release = NULL,
    .otf2_get_size = get_size,
    .otf2_get_rank = get_rank,
    .otf2_create_local_comm = NULL,
    .otf2_free_local_comm = NULL,
    .otf2_barrier = barrier,
    .otf2_bcast = bcast,
    .otf2_gather = gather,
    .otf2_gatherv = gatherv,
    .otf2_scatter = scatter,
    .otf2_scatterv = scatterv,
};

OTF2_ErrorCode adt_otf2_set_collectives(OTF2_Archive *archive, const adt_collectives *collectives,
                                        OTF2_CollectiveContext **context)
{
    *context = malloc(sizeof **context);
    if (!*context)
        return OTF2_ERROR_MEM_ALLOC_FAILED;
    (*context)->collectives = collectives;
    return OTF2_Archive_SetCollectiveCallbacks(archive, &otf2_callbacks, NULL, *context, NULL);
}
