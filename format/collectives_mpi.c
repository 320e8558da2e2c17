/* adt_collectives over MPI. Only PMPI_* calls: the MPI_* symbols are
 * adaptrace's own wrappers, and the writer's traffic must not be traced.
 * A private duplicate of the application's world (MPI_COMM_WORLD, or its
 * narrowed world in an MPMD launch) keeps it apart from the application's
 * messages. */
#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

#include "format/format.h"

typedef struct mpi_context {
    MPI_Comm comm;
} mpi_context;

static MPI_Comm comm_of(void *context)
{
    return ((mpi_context *)context)->comm;
}

static int mpi_barrier(void *context)
{
    return PMPI_Barrier(comm_of(context)) == MPI_SUCCESS ? 0 : -1;
}

static int mpi_bcast(void *context, void *data, size_t bytes, uint32_t root)
{
    if (bytes > INT_MAX)
        return -1;
    return PMPI_Bcast(data, (int)bytes, MPI_BYTE, (int)root, comm_of(context)) == MPI_SUCCESS ? 0 : -1;
}

/* Counts and displacements in ints, as MPI wants them; -1 when a part is
 * beyond what an int can address. */
static int to_counts(const size_t *bytes, int size, int **counts, int **displacements)
{
    *counts = malloc((size_t)size * sizeof **counts);
    *displacements = malloc((size_t)size * sizeof **displacements);
    if (!*counts || !*displacements)
        return -1;
    size_t offset = 0;
    for (int r = 0; r < size; ++r) {
        if (bytes[r] > INT_MAX || offset > INT_MAX)
            return -1;
        (*counts)[r] = (int)bytes[r];
        (*displacements)[r] = (int)offset;
        offset += bytes[r];
    }
    return 0;
}

static int mpi_gatherv(void *context, const void *in, size_t in_bytes, void *out,
                       const size_t *out_bytes, uint32_t root)
{
    MPI_Comm comm = comm_of(context);
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int *counts = NULL, *displacements = NULL;
    /* all ranks learn whether the root can take part, before the gatherv */
    int ok = in_bytes <= INT_MAX;
    if (rank == (int)root)
        ok = ok && to_counts(out_bytes, size, &counts, &displacements) == 0;
    int all_ok = 0;
    int rc = -1;
    if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm) == MPI_SUCCESS && all_ok &&
        PMPI_Gatherv(in, (int)in_bytes, MPI_BYTE, out, counts, displacements, MPI_BYTE, (int)root, comm) ==
            MPI_SUCCESS)
        rc = 0;
    free(counts);
    free(displacements);
    return rc;
}

static int mpi_scatterv(void *context, const void *in, const size_t *in_bytes, void *out,
                        size_t out_bytes, uint32_t root)
{
    MPI_Comm comm = comm_of(context);
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int *counts = NULL, *displacements = NULL;
    int ok = out_bytes <= INT_MAX;
    if (rank == (int)root)
        ok = ok && to_counts(in_bytes, size, &counts, &displacements) == 0;
    int all_ok = 0;
    int rc = -1;
    if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm) == MPI_SUCCESS && all_ok &&
        PMPI_Scatterv(in, counts, displacements, MPI_BYTE, out, (int)out_bytes, MPI_BYTE, (int)root, comm) ==
            MPI_SUCCESS)
        rc = 0;
    free(counts);
    free(displacements);
    return rc;
}

static int mpi_allreduce(void *context, uint64_t *value, MPI_Op op)
{
    uint64_t result;
    if (PMPI_Allreduce(value, &result, 1, MPI_UINT64_T, op, comm_of(context)) != MPI_SUCCESS)
        return -1;
    *value = result;
    return 0;
}

static int mpi_allreduce_max(void *context, uint64_t *value)
{
    return mpi_allreduce(context, value, MPI_MAX);
}

static int mpi_allreduce_min(void *context, uint64_t *value)
{
    return mpi_allreduce(context, value, MPI_MIN);
}

/* Point-to-point messages on the private communicator; larger than an int
 * can count, they travel in pieces (in order, one tag). */
#define P2P_TAG 1
#define P2P_PIECE ((size_t)1 << 30)

static int mpi_send(void *context, const void *data, size_t bytes, uint32_t to)
{
    const char *at = data;
    do {
        size_t piece = bytes < P2P_PIECE ? bytes : P2P_PIECE;
        if (PMPI_Send(at, (int)piece, MPI_BYTE, (int)to, P2P_TAG, comm_of(context)) != MPI_SUCCESS)
            return -1;
        at += piece;
        bytes -= piece;
    } while (bytes > 0);
    return 0;
}

static int mpi_recv(void *context, void *data, size_t bytes, uint32_t from)
{
    char *at = data;
    do {
        size_t piece = bytes < P2P_PIECE ? bytes : P2P_PIECE;
        MPI_Status status;
        int received = 0;
        if (PMPI_Recv(at, (int)piece, MPI_BYTE, (int)from, P2P_TAG, comm_of(context), &status) != MPI_SUCCESS ||
            PMPI_Get_count(&status, MPI_BYTE, &received) != MPI_SUCCESS || (size_t)received != piece)
            return -1;
        at += piece;
        bytes -= piece;
    } while (bytes > 0);
    return 0;
}

int adt_collectives_mpi_create(adt_collectives *out, const void *world)
{
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return -1;
    mpi_context *context = malloc(sizeof *context);
    if (!context)
        return -1;
    int rank, size;
    if (PMPI_Comm_dup(*(const MPI_Comm *)world, &context->comm) != MPI_SUCCESS) {
        free(context);
        return -1;
    }
    PMPI_Comm_rank(context->comm, &rank);
    PMPI_Comm_size(context->comm, &size);
    *out = (adt_collectives){
        .context = context,
        .rank = (uint32_t)rank,
        .size = (uint32_t)size,
        .barrier = mpi_barrier,
        .bcast = mpi_bcast,
        .gatherv = mpi_gatherv,
        .scatterv = mpi_scatterv,
        .allreduce_max_u64 = mpi_allreduce_max,
        .allreduce_min_u64 = mpi_allreduce_min,
        .send = mpi_send,
        .recv = mpi_recv,
    };
    return 0;
}

void adt_collectives_mpi_destroy(adt_collectives *c)
{
    if (!c || !c->context)
        return;
    mpi_context *context = c->context;
    PMPI_Comm_free(&context->comm);
    free(context);
    c->context = NULL;
}
