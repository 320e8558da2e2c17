/*
 * scratch.c: the pre-call copy of a call's request handles (and room for
 * its own statuses), which the completion records need after the call has
 * overwritten the application's array. Hot path of the wrappers: no lock,
 * no stdio; malloc only for an array longer than ADT_MPI_SCRATCH_INLINE.
 */
#ifndef ADAPTRACE_MPI_SCRATCH_H
#define ADAPTRACE_MPI_SCRATCH_H

#include <stdint.h>

#include <mpi.h>

#include "call.h"

#define ADT_MPI_SCRATCH_INLINE 32

/* Lives on the wrapper's stack; arrays longer than the inline part go to
 * the heap. Without memory the pointers are NULL and the completions of
 * that call are not recorded, each request counted in
 * adt_mpi_completions_unrecorded. */
typedef struct adt_mpi_scratch {
    MPI_Request *requests;
    MPI_Status *statuses;
    MPI_Fint *fortran_statuses;
    void *heap;
    int count;
    MPI_Request requests_inline[ADT_MPI_SCRATCH_INLINE];
    MPI_Status statuses_inline[ADT_MPI_SCRATCH_INLINE];
    MPI_Fint fortran_statuses_inline[ADT_MPI_SCRATCH_INLINE * ADT_MPI_FORTRAN_STATUS_SIZE];
} adt_mpi_scratch;

void adt_mpi_scratch_init(adt_mpi_scratch *scratch, int count);
/* Requests whose completion was not recorded: no memory for their copy. */
uint64_t adt_mpi_completions_unrecorded(void);
void adt_mpi_scratch_release(adt_mpi_scratch *scratch);
void adt_mpi_scratch_save_requests(adt_mpi_scratch *scratch, const MPI_Request *requests, int count);
void adt_mpi_scratch_save_fortran_requests(adt_mpi_scratch *scratch, const MPI_Fint *requests, int count);
void adt_mpi_scratch_convert_statuses(adt_mpi_scratch *scratch, const MPI_Fint *statuses, int count);

#endif
