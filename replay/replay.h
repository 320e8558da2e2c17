/*
 * replay: a run's skeleton.adts replayed under mpirun (issue #25,
 * adaptrace-replay, docs/folding.md "Replay"). Each rank expands its
 * skeleton into a plan (plan.c, no MPI: every call decoded and checked
 * before any communication), then issues the plan's calls with the
 * recorded parameters and spends the recorded computation between them
 * (run.c). Tools only; nothing here runs inside a traced application.
 */
#ifndef ADAPTRACE_REPLAY_H
#define ADAPTRACE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skeleton/skeleton.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A message of a point-to-point call: bytes, peer relative to the own
 * rank, tag, and the request's symbol + 1 (0: none). A receive that asked
 * for MPI_ANY_SOURCE or MPI_ANY_TAG has any_source or any_tag (its peer
 * or tag then 0): replayed as that wildcard. */
typedef struct adt_replay_message {
    uint64_t bytes;
    int64_t peer;
    int64_t tag;
    uint32_t request;
    bool any_source, any_tag;
} adt_replay_message;

/* The collectives replay issues (their nonblocking forms too, but the v-collectives'). */
typedef enum adt_replay_collective {
    ADT_REPLAY_NO_COLLECTIVE,
    ADT_REPLAY_BARRIER,
    ADT_REPLAY_BCAST,
    ADT_REPLAY_REDUCE,
    ADT_REPLAY_ALLREDUCE,
    ADT_REPLAY_GATHER,
    ADT_REPLAY_SCATTER,
    ADT_REPLAY_ALLGATHER,
    ADT_REPLAY_ALLTOALL,
    ADT_REPLAY_REDUCE_SCATTER_BLOCK,
    ADT_REPLAY_SCAN,
    ADT_REPLAY_EXSCAN,
    /* The v-collectives, blocking only: their per-peer counts are learned
     * at replay time (below); the part is the own one. */
    ADT_REPLAY_GATHERV,
    ADT_REPLAY_SCATTERV,
    ADT_REPLAY_ALLGATHERV,
    ADT_REPLAY_REDUCE_SCATTER,
    ADT_REPLAY_ALLTOALLV /* the part: the own sent total, split equally among the ranks */
} adt_replay_collective;

/* The function a call completes its requests with: the recorded one
 * (the wait and test family), or MPI_Waitall for any other. */
typedef enum adt_replay_completion {
    ADT_REPLAY_WAITALL,
    ADT_REPLAY_WAIT,
    ADT_REPLAY_WAITANY,
    ADT_REPLAY_WAITSOME,
    ADT_REPLAY_TEST,
    ADT_REPLAY_TESTANY,
    ADT_REPLAY_TESTALL,
    ADT_REPLAY_TESTSOME
} adt_replay_completion;

/* One distinct call (a signature), decoded. A call without traffic (no
 * record: MPI_Comm_rank, MPI_Comm_split, a send to MPI_PROC_NULL) is
 * replayed as its recorded duration. */
typedef struct adt_replay_call {
    const char *function;
    bool has_send, has_recv, synchronous;  /* a blocking send, receive or both (MPI_Sendrecv) */
    adt_replay_message send, recv;
    bool has_isend;
    adt_replay_message isend;
    uint32_t irecv_request;                /* MPI_Irecv's symbol + 1 (0: none); its message comes later */
    uint32_t first_wait, wait_count;       /* requests completed (in plan->requests) */
    adt_replay_completion completion;      /* the function that completed them, issued with exactly them */
    uint32_t first_test, test_count;       /* requests tested, not completed */
    uint32_t first_done, done_count;       /* the receives completed (in plan->done): MPI_Irecv's messages */
    adt_replay_collective collective;      /* blocking, or nonblocking with icollective_request */
    uint64_t collective_bytes;             /* per rank: the count of one rank's part, in bytes (blocking) */
    uint64_t collective_received;          /* the received total recorded: the receive buffer's size */
    uint32_t root;
    uint32_t icollective_request;          /* a nonblocking collective's symbol + 1 (0: none); its part and
                                              root are recorded at its completion, later */
    uint32_t first_collective_done, collective_done_count; /* the nonblocking collectives completed */
    bool traffic;
} adt_replay_call;

/* A nonblocking collective's completion: its totals, request and root. */
typedef struct adt_replay_collective_done {
    uint64_t sent, received;
    uint32_t request;
    uint32_t root;
} adt_replay_collective_done;

typedef struct adt_replay_plan {
    uint32_t rank;
    uint32_t ranks;
    const adt_skeleton_thread_view *thread;
    uint32_t call_kinds;                 /* = the thread's signature count */
    adt_replay_call *calls_by_signature;
    uint32_t *requests;                  /* the wait and test lists */
    adt_replay_message *done;            /* the receives completed */
    adt_replay_collective_done *collectives_done; /* the nonblocking collectives completed */
    uint64_t length;                     /* calls in order, Init and Finalize included */
    bool ends_in_finalize;               /* false: a recovered run's, which ended before MPI_Finalize */
    uint32_t *sequence;                  /* terminals */
    uint32_t *irecv_message;             /* per position of an MPI_Irecv or a nonblocking collective:
                                            index into irecvs */
    adt_replay_message *irecvs;          /* their messages; a collective's: its part's bytes, peer = root */
    uint64_t largest_message;            /* bytes of the largest send, receive or collective part */
    uint64_t largest_receive;            /* bytes of the largest message received (blocking or not) */
    uint64_t *request_bytes;             /* per symbol: the largest receive into it (a collective's: all parts) */
    uint32_t request_symbols;
    char untrafficked[512];              /* the functions replayed as their duration, listed */
    bool splits_equally;                 /* an MPI_Alltoallv is replayed with its sent total split equally */
} adt_replay_plan;

/* The count a receive is posted with: its recorded bytes, or for a
 * wildcard receive the largest message the rank received, since in the
 * replay it may match another of the messages than in the original. */
static inline uint64_t adt_replay_receive_bytes(const adt_replay_plan *plan, const adt_replay_message *m)
{
    return m->any_source || m->any_tag ? plan->largest_receive : m->bytes;
}

/* The plan of rank (of ranks in this run) from file: NULL with one line in
 * error when the file lacks some ranks' skeletons (version 5), the file's
 * rank count differs, the rank has other than one
 * thread, its skeleton stopped early, or a call cannot be replayed (the
 * line names it). */
adt_replay_plan *adt_replay_plan_build(const adt_skeleton_file *file, uint32_t rank, uint32_t ranks, char *error,
                                       size_t error_size);
void adt_replay_plan_free(adt_replay_plan *plan);

/* How computation is spent: the mean of each (previous, call) pair's
 * histogram, or a value drawn from its bins. */
typedef struct adt_replay_options {
    bool draw_from_bins;
    uint64_t seed;
    double ns_per_tick; /* the skeleton's times are in the run's trace clock ticks (the TSC's, where used) */
} adt_replay_options;

/* The buffers and request slots of a plan, taken before any
 * communication (after MPI_Init); NULL when out of memory. */
typedef struct adt_replay_state adt_replay_state;
adt_replay_state *adt_replay_prepare(const adt_replay_plan *plan);
void adt_replay_state_free(adt_replay_state *state);

/* Issues the plan between MPI_Init and MPI_Finalize (both the caller's);
 * returns the span: after the first call to before the last (MPI_Finalize,
 * or, for a run that ended without it, to after the last), ns. */
uint64_t adt_replay_run(adt_replay_state *state, const adt_replay_options *options);

#ifdef __cplusplus
}
#endif

#endif
