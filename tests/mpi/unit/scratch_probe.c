/* The wrapper's request copy (scratch.h, a C header) seen from the C++
 * test scratch_test.cpp: one call's copy made and released, with what it
 * got and what the count of unrecorded completions did meanwhile. */
#include "scratch.h"
#include "scratch_probe.h"

scratch_outcome scratch_probe(int requests)
{
    uint64_t before = adt_mpi_completions_unrecorded();
    adt_mpi_scratch scratch;
    adt_mpi_scratch_init(&scratch, requests);
    scratch_outcome outcome = { .has_copy = scratch.requests != NULL,
                                .completions_unrecorded = adt_mpi_completions_unrecorded() - before };
    adt_mpi_scratch_release(&scratch);
    return outcome;
}

int scratch_inline_requests(void)
{
    return ADT_MPI_SCRATCH_INLINE;
}
