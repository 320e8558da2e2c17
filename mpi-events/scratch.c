/*
 * The pre-call copy of a call's request handles (scratch.h). Hot path of
 * the wrappers: the copy lives on the wrapper's stack; only an array
 * longer than its inline part takes malloc, once per such call, and when
 * that fails the call's completions go unrecorded and are counted
 * (adt_mpi_completions_unrecorded, relaxed atomic: a count, read at
 * MPI_Finalize).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"

static atomic_uint_fast64_t completions_unrecorded;

uint64_t adt_mpi_completions_unrecorded(void)
{
    return atomic_load_explicit(&completions_unrecorded, memory_order_relaxed);
}

void adt_mpi_scratch_init(adt_mpi_scratch *scratch, int count)
{
    scratch->count = count > 0 ? count : 0;
    scratch->heap = NULL;
    if (scratch->count <= ADT_MPI_SCRATCH_INLINE) {
        scratch->requests = scratch->requests_inline;
        scratch->statuses = scratch->statuses_inline;
        scratch->fortran_statuses = scratch->fortran_statuses_inline;
        return;
    }
    size_t n = (size_t)scratch->count;
    scratch->heap = malloc(n * (sizeof(MPI_Request) + sizeof(MPI_Status) +
                                ADT_MPI_FORTRAN_STATUS_SIZE * sizeof(MPI_Fint)));
    if (!scratch->heap) {
        /* Nothing recorded for this call; the application's call goes on. */
        atomic_fetch_add_explicit(&completions_unrecorded, n, memory_order_relaxed);
        scratch->requests = NULL;
        scratch->statuses = MPI_STATUSES_IGNORE;
        scratch->fortran_statuses = MPI_F_STATUSES_IGNORE;
        return;
    }
    scratch->statuses = scratch->heap;
    scratch->requests = (MPI_Request *)(scratch->statuses + n);
    scratch->fortran_statuses = (MPI_Fint *)(scratch->requests + n);
}

void adt_mpi_scratch_release(adt_mpi_scratch *scratch)
{
    free(scratch->heap);
}

void adt_mpi_scratch_save_requests(adt_mpi_scratch *scratch, const MPI_Request *saved, int count)
{
    if (scratch->requests && count > 0)
        memcpy(scratch->requests, saved, (size_t)count * sizeof *saved);
}

void adt_mpi_scratch_save_fortran_requests(adt_mpi_scratch *scratch, const MPI_Fint *saved, int count)
{
    if (!scratch->requests)
        return;
    for (int i = 0; i < count; ++i)
        scratch->requests[i] = PMPI_Request_f2c(saved[i]);
}

void adt_mpi_scratch_convert_statuses(adt_mpi_scratch *scratch, const MPI_Fint *statuses, int count)
{
    if (!scratch->requests)
        return;
    for (int i = 0; i < count; ++i)
        PMPI_Status_f2c(statuses + (size_t)i * ADT_MPI_FORTRAN_STATUS_SIZE, &scratch->statuses[i]);
}
