/*
 * One wrapped MPI call as the parts of mpi-events/ hand it on: what the
 * Enter (setup.h) gives the records (records.h, io.h, rma.h) and the
 * Leave, and the conventions of their arguments. Types only, so that the
 * records need nothing of the Init / Enter / Leave side.
 */
#ifndef ADAPTRACE_MPI_CALL_H
#define ADAPTRACE_MPI_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "buffer/buffer.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed on as C int arrays");

/* A Fortran status: MPI_STATUS_SIZE INTEGERs. */
#define ADT_MPI_FORTRAN_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* Root argument of collectives that have none. */
#define ADT_MPI_NO_ROOT INT32_MIN

/* One wrapped call in progress: what the Enter hands to the records and
 * the Leave. time is the Enter's timestamp until PMPI returns, then the
 * Leave's: the records written before the PMPI call share the Enter's
 * time, those written after share the Leave's, so a call reads the clock
 * twice however many records it writes. previous: the sampler's region
 * state this call replaced (MPI calls made from inside another wrapped
 * call, e.g. by a library's own wrapper, nest). passing_on_before: the
 * thread's re-entry guard as this call found it (setup.h). The timing of
 * adaptrace's own cost (core.h, "measurement cost"): gap_class of the
 * Enter (ADT_COST_GAP_CLASSES: none kept); for a timed call (timed_entry
 * not 0, or timed_from_enter) the clock at wrapper entry (0 for a call
 * timed from its Enter), at the Enter, before the call passed on and the
 * handler runs so far, which must not change until the exit; cost_kind:
 * the function's kind of record (core.h adt_cost_kind). */
typedef struct adt_mpi_call {
    adt_location *location;
    uint64_t time;
    uint32_t context;
    uint32_t previous;
    uint32_t passing_on_before;
    uint32_t gap_class;
    uint64_t timed_entry;
    uint64_t enter_time;
    uint64_t passed_on;
    uint64_t handler_runs;
    bool timed_from_enter; /* timed for its gap class's sake (core.h ADT_COST_FIRST_TIMED), not from entry */
    uint8_t cost_kind;
    /* The context its Enter and Leave records carry: context where that
     * is the region's own leaf, else ADT_UNDEFINED_ID (the tree was full:
     * adt_sampler_region_leaf). */
    uint32_t recorded_context;
} adt_mpi_call;

#endif
