/*
 * What the generated wrappers (wrappers_c.c, wrappers_fortran.c) call:
 * next.h (where each passes its call on), setup.h (regions, Enter / Leave,
 * the re-entry guard, Init / Finalize), records.h, io.h,
 * rma.h, comms.h and scratch.h (the copy of a call's requests). Only the wrappers include it; the files behind it
 * include the headers they use, which call one way:
 * setup -> io, rma -> records -> comms.
 *
 * Hot path: adt_mpi_location, adt_mpi_reentered, adt_mpi_enter, ADT_MPI_NEXT,
 * adt_mpi_leave and the record helpers of point-to-point calls and
 * completions run in every wrapped call. They take no lock, call no malloc (the scratch area spills to the
 * heap only for request arrays longer than ADT_MPI_SCRATCH_INLINE) and no
 * stdio. Communicator construction, Init and Finalize are the slow path.
 */
#ifndef ADAPTRACE_MPI_WRAP_SUPPORT_H
#define ADAPTRACE_MPI_WRAP_SUPPORT_H

#include <otf2/OTF2_Events.h>

#include "comms.h"
#include "io.h"
#include "next.h"
#include "records.h"
#include "rma.h"
#include "scratch.h"
#include "setup.h"

#endif
