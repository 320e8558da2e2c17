/*
 * fold.c: each outermost MPI call, with the records it wrote, encoded as
 * a key that repeats when the call repeats, and folded into the thread's
 * skeleton (skeleton/) as the call returns (issue #25, docs/folding.md).
 * Hot path: no malloc, no lock, no stdio; the calling thread only (its
 * state is thread-local).
 *
 * The key: LEB128 varints (signed fields zigzag): the function's index
 * (mpi_functions.h), the calling context by first use on the thread (0:
 * none, sampling off), then per record the call wrote, in order, its kind
 * and its fields: peers relative to the own rank in the communicator, a
 * receive's MPI_ANY_SOURCE as -2^31 and MPI_ANY_TAG as the tag -1 (a
 * receive's key holds the source and tag it asked for, not those that
 * matched, so that a wildcard receive repeats whoever its partner was);
 * communicators, windows, I/O handles and files, RMA groups and calling
 * contexts by their order of first use on the thread; requests and
 * RMA / I/O matching ids as the lowest symbolic id free when first seen,
 * freed at the end of the call that completes them; counts, tags, roots,
 * operations as recorded. A call nested in it (a tool's wrapper calling
 * MPI) adds its Enter and Leave kind with its function's index.
 */
#ifndef ADAPTRACE_MPI_FOLD_H
#define ADAPTRACE_MPI_FOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "call.h"
#include "runtime/runtime.h"

/* Set at start-up when the skeleton's share exists (ADAPTRACE_SKELETON);
 * read on every call. */
extern bool adt_mpi_folding;

/* A record's fields whose peer is a rank in a communicator: own_rank is
 * this process's rank there; others pass ADT_MPI_FOLD_NO_RANK. */
#define ADT_MPI_FOLD_NO_RANK 0
/* The peer and tag of a receive's record as its key encodes it (records.h,
 * adt_mpi_append_record's key_payload) when the receive asked for
 * MPI_ANY_SOURCE or MPI_ANY_TAG, whatever the MPI library's constants are:
 * the peer whose offset from the own rank is -2^31, which no rank's is
 * (ranks are below 2^31), and the tag -1, which no tag is. They encode as
 * any peer and tag do, so the fold tests nothing for them, and read back
 * as wildcards: zigzag 2^32 - 1 and 1. */
#define ADT_MPI_FOLD_ANY_SOURCE(own_rank) ((uint32_t)(own_rank) + 0x80000000u)
#define ADT_MPI_FOLD_ANY_TAG UINT32_MAX

/* time: the call's Enter / Leave event time (ns); the outermost call's
 * are its timing in the skeleton's delta histograms. */
void adt_mpi_fold_enter(adt_location *location, uint32_t function, uint32_t context, bool outermost,
                        uint64_t time);
void adt_mpi_fold_record(uint16_t kind, const void *payload, int32_t own_rank);
void adt_mpi_fold_leave(uint32_t function, bool outermost, uint64_t time);

/* ADAPTRACE_ON_FULL=fold (flush.h, adt_fold_hook): on the thread whose
 * events filled the buffer, true when its skeleton is still folding; the
 * thread then counts which of the events the buffer counts as folded its
 * skeleton does not hold (made outside MPI calls, or from the call in
 * which the skeleton stops on: adt_buffer_unfold_events). */
bool adt_mpi_fold_take_over(adt_location *location, void *arg);

/* MPI_Init when folding (normal code): registers the process for the
 * barrier adt_mpi_fold_close needs (membarrier). */
void adt_mpi_fold_init_close(void);
/* An ending without MPI_Finalize (normal code, or the ending signal's
 * handler: async-signal-safe; after the measurement ended, on the ending
 * thread): no thread folds a call from now on (its calls still under way
 * end outside the skeleton), and the folds under way have ended, so that
 * the skeletons can be encoded, or their share's image taken, whole.
 * ADT_SKELETON_SAVED when they can; else why not: a thread still in the
 * middle of a fold after a second, no barrier (membarrier refused), or
 * the handler's own thread interrupted in the middle of a fold. */
adt_skeleton_saved adt_mpi_fold_close(void);

/* MPI_Init when folding (normal code): the runtime gets the encoder of
 * this rank's skeletons for an ending's rescue file
 * (adt_runtime_set_skeleton_encoder; fold_write.c). */
void adt_mpi_fold_offer_rescue(void);

/* MPI_Finalize, after the archive was written (written: 0 on every
 * rank): rank 0 gathers every rank's skeletons and writes
 * <archive>/skeleton.adts. Collective over MPI_COMM_WORLD. */
void adt_mpi_fold_write(int written);

#endif
