/*
 * setup.c: the regions of the MPI functions and the Enter / Leave of every
 * wrapped call (hot path: no lock, no malloc, no stdio), MPI_Init* and
 * MPI_Finalize (slow path). Uses the records (records.h, io.h, rma.h)
 * and the communicators (comms.h); none of them uses it.
 */
#ifndef ADAPTRACE_MPI_SETUP_H
#define ADAPTRACE_MPI_SETUP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "call.h"
#include "core/core.h"
#include "format/format.h"
#include "mpi_functions.h"
#include "runtime/runtime.h"
#include "sampler/sampler.h"

/* ---- regions, Enter/Leave (hot path) ------------------------------------ */

extern atomic_bool adt_mpi_ready;
extern uint32_t adt_mpi_region_ids[ADT_MPI_FN_COUNT];
extern bool adt_mpi_sampling;

/* Registers the regions once (slow path of adt_mpi_location). */
adt_location *adt_mpi_prepare(adt_location *location);

/* The calling thread's location, NULL while adaptrace is inert (then the
 * wrapper only calls PMPI). */
static inline adt_location *adt_mpi_location(void)
{
    adt_location *location = adt_runtime_location();
    if (__builtin_expect(location != NULL && !atomic_load_explicit(&adt_mpi_ready, memory_order_acquire), 0))
        return adt_mpi_prepare(location);
    return location;
}

/* Always inlined: adt_sampler_region_context leaves out exactly one caller
 * frame, which must be the wrapper itself. */
static inline __attribute__((always_inline)) adt_mpi_call adt_mpi_enter(adt_location *location,
                                                                        adt_mpi_function function)
{
    adt_rec_region record = { adt_mpi_region_ids[function], ADT_UNDEFINED_ID };
    adt_mpi_call call = { location, 0, ADT_UNDEFINED_ID, ADT_UNDEFINED_ID };
    if (adt_mpi_sampling) {
        record.calling_context = adt_sampler_region_context(location, record.region);
        call.context = record.calling_context;
        call.previous = adt_sampler_enter_region(location, record.calling_context);
    }
    call.time = adt_clock_now();
    adt_buffer_append_event(location, ADT_REC_ENTER, call.time, &record, sizeof record);
    return call;
}

/* After the PMPI call returned, before the records of its outcome. */
static inline void adt_mpi_returned(adt_mpi_call *call)
{
    call->time = adt_clock_now();
}

static inline void adt_mpi_leave(const adt_mpi_call *call, adt_mpi_function function)
{
    adt_rec_region record = { adt_mpi_region_ids[function], call->context };
    adt_buffer_append_event(call->location, ADT_REC_LEAVE, call->time, &record, sizeof record);
    if (adt_mpi_sampling)
        adt_sampler_leave_region(call->location, call->previous);
}

/* ---- Init / Finalize (slow path) ---------------------------------------- */

void adt_mpi_init_begin(void);
void adt_mpi_init_end(adt_location *location);
/* Measures the end clock offset, records the Leave of Finalize, writes the
 * trace (adt_runtime_finish) and releases adaptrace's MPI resources; the
 * wrapper calls PMPI_Finalize afterwards. */
void adt_mpi_finalize_measurement(adt_mpi_call *call, adt_mpi_function function);
/* After a successful MPI_Comm_spawn(_multiple) with root root of comm. */
void adt_mpi_spawned(adt_mpi_function function, int root, MPI_Comm comm);

#endif
