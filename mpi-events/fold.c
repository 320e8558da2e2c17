/*
 * The key of each outermost MPI call, folded into the thread's skeleton
 * as it returns (fold.h says what the key holds). Hot path: no malloc, no
 * lock, no stdio. The thread's state lives in its skeleton's slab (the
 * encoder's room, reserved at start-up); the thread-local pointer to it is
 * initial-exec TLS, one load per call. Never runs in a signal handler: the
 * sampler does not call it, so the state is touched by its thread only.
 *
 * Except at the end: adt_mpi_fold_close (an ending without MPI_Finalize:
 * normal code, or the ending signal's handler; see there) stops every
 * thread's folding and waits for the folds under way, so that the
 * skeletons are encoded, or their share's image taken, whole.
 */
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fold.h"
#include "format/format.h"
#include "runtime/runtime.h"
#include "skeleton/skeleton.h"

bool adt_mpi_folding;

/* Symbolic request ids in use at once on a thread; the slots of the maps
 * (twice that, so that they stay at most half full). */
#define REQUEST_SYMBOLS 2048u
#define MAP_SLOTS 4096u
/* Symbolic ids freed at the end of one call (a Waitall of this many
 * requests; more make the call not encodable). */
#define COMPLETED_MAX 512u

/* Objects numbered by first use on the thread, one counter each. */
typedef enum object_kind {
    OBJECT_CONTEXT,
    OBJECT_COMM,
    OBJECT_WINDOW,
    OBJECT_GROUP,
    OBJECT_IO_HANDLE,
    OBJECT_IO_FILE,
    OBJECT_KINDS
} object_kind;

/* Linear probing, u64 key (0: empty) -> u32 value; deletion by backward
 * shift, so no tombstones. */
typedef struct map_slot {
    uint64_t key;
    uint32_t value;
    uint32_t unused;
} map_slot;

/* A request completed in the call being encoded, and the slot of the
 * requests map it had then (release_completed's hint). */
typedef struct completion {
    uint64_t raw;
    uint32_t slot;
    uint32_t unused;
} completion;

typedef struct fold_thread {
    adt_skeleton *skeleton;
    _Atomic bool folding;    /* in adt_skeleton_fold / _stop_with (adt_mpi_fold_close waits) */
    bool open;               /* an outermost call is being encoded */
    bool events_folded;      /* the buffer counts this thread's events as folded
                                (adt_mpi_fold_take_over) */
    bool not_encodable;      /* that call's key or tables overflowed */
    uint32_t length;
    uint32_t completed_count;
    uint64_t enter;          /* the open call's Enter time */
    uint32_t map_used[2];
    /* While events_folded: the location's folded count at the last
     * outermost Leave and at the current outermost Enter. */
    uint64_t folded_at_leave;
    uint64_t folded_at_enter;
    uint32_t next_object[OBJECT_KINDS];
    uint32_t recent_key[OBJECT_KINDS];   /* the kind's last object looked up, id + 1 (0: none) */
    uint32_t recent_index[OBJECT_KINDS]; /* and its first-use index */
    uint64_t symbols_in_use[REQUEST_SYMBOLS / 64];
    completion completed[COMPLETED_MAX]; /* requests completed in this call */
    map_slot requests[MAP_SLOTS];   /* raw request / matching id -> symbol */
    map_slot objects[MAP_SLOTS];    /* kind << 32 | local id, + 1 -> first-use index */
    uint8_t key[ADT_SKELETON_KEY_MAX];
} fold_thread;

_Static_assert(sizeof(fold_thread) <= ADT_SKELETON_ENCODER_BYTES, "the encoder's state fits its room in the slab");

/* Set once by adt_mpi_fold_close: no thread folds a call from then on. */
static _Atomic bool folds_closed;
/* Whether this process registered for expedited membarriers. */
static bool barrier_ready;

/* NULL before the thread's first call; NO_SKELETON when it has none. */
static __thread fold_thread *thread_state __attribute__((tls_model("initial-exec")));
static fold_thread no_skeleton_marker;
#define NO_SKELETON (&no_skeleton_marker)

/* ---- maps --------------------------------------------------------------- */

static inline uint32_t map_home(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 52) & (MAP_SLOTS - 1);
}

static inline map_slot *map_find(map_slot *slots, uint64_t key)
{
    for (uint32_t i = map_home(key);; i = (i + 1) & (MAP_SLOTS - 1))
        if (slots[i].key == key || slots[i].key == 0)
            return &slots[i];
}

static void map_remove(map_slot *slots, map_slot *slot)
{
    uint32_t hole = (uint32_t)(slot - slots);
    slots[hole].key = 0;
    for (uint32_t next = (hole + 1) & (MAP_SLOTS - 1); slots[next].key != 0; next = (next + 1) & (MAP_SLOTS - 1)) {
        uint32_t home = map_home(slots[next].key);
        bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
        if (stays)
            continue;
        slots[hole] = slots[next];
        slots[next].key = 0;
        hole = next;
    }
}

/* ---- the key ------------------------------------------------------------ */

/* The most varints one step below puts (an RMA record: its kind and
 * eight fields), each at most 10 bytes. */
#define STEP_VARINTS 10u

/* Room in the key for one step's varints (the enter, a record, a nested
 * call), checked once for the step rather than per varint; false, and
 * the call marked not encodable, when the key has none. */
static inline bool room(fold_thread *t)
{
    if (__builtin_expect(ADT_SKELETON_KEY_MAX - t->length < STEP_VARINTS * 10u, 0)) {
        t->not_encodable = true;
        return false;
    }
    return true;
}

/* Only after room(): at most STEP_VARINTS of them per step. */
static inline void put(fold_thread *t, uint64_t value)
{
    while (value >= 0x80) {
        t->key[t->length++] = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    t->key[t->length++] = (uint8_t)value;
}

static inline void put_signed(fold_thread *t, int64_t value)
{
    put(t, ((uint64_t)value << 1) ^ (uint64_t)(value >> 63));
}

/* put_object's lookup in the map, for an object other than the kind's
 * last one (not inlined: the common cases below stay small). */
static __attribute__((noinline)) void put_object_looked_up(fold_thread *t, object_kind kind, uint32_t id)
{
    uint64_t key = ((uint64_t)kind << 32 | id) + 1;
    map_slot *slot = map_find(t->objects, key);
    if (slot->key == 0) {
        if (t->map_used[1] >= MAP_SLOTS / 2) {
            t->not_encodable = true;
            return;
        }
        *slot = (map_slot){ key, t->next_object[kind]++, 0 };
        t->map_used[1]++;
    }
    t->recent_key[kind] = id + 1;
    t->recent_index[kind] = slot->value;
    put(t, slot->value + 1);
}

/* An object's first-use index on the thread, + 1; 0 for none. */
static inline void put_object(fold_thread *t, object_kind kind, uint32_t id)
{
    if (id == ADT_UNDEFINED_ID)
        put(t, 0);
    /* Most records of a thread name the communicator the one before did. */
    else if (t->recent_key[kind] == id + 1)
        put(t, t->recent_index[kind] + 1);
    else
        put_object_looked_up(t, kind, id);
}

/* A request's (or matching id's) symbol, + 1; 0 for none. completes: the
 * record ends it, so its symbol is free again after this call (not
 * before: RMA's remote completion follows the blocking one in the same
 * call, with the same id). */
static void put_request(fold_thread *t, uint64_t raw, bool completes)
{
    if (raw == 0) {
        put(t, 0);
        return;
    }
    map_slot *slot = map_find(t->requests, raw);
    if (slot->key == 0) {
        uint32_t symbol = REQUEST_SYMBOLS;
        for (uint32_t word = 0; word < REQUEST_SYMBOLS / 64; ++word) {
            if (~t->symbols_in_use[word]) {
                symbol = word * 64 + (uint32_t)__builtin_ctzll(~t->symbols_in_use[word]);
                break;
            }
        }
        if (symbol == REQUEST_SYMBOLS || t->map_used[0] >= MAP_SLOTS / 2) {
            t->not_encodable = true;
            return;
        }
        t->symbols_in_use[symbol / 64] |= 1ull << (symbol % 64);
        *slot = (map_slot){ raw, symbol, 0 };
        t->map_used[0]++;
    }
    put(t, slot->value + 1);
    if (completes) {
        if (t->completed_count == COMPLETED_MAX) {
            t->not_encodable = true;
            return;
        }
        t->completed[t->completed_count++] = (completion){ raw, (uint32_t)(slot - t->requests), 0 };
    }
}

/* ---- the calls ---------------------------------------------------------- */

/* The thread's first call: a skeleton of its own, if the share has one. */
static __attribute__((cold, noinline)) fold_thread *claim(void)
{
    adt_location *location = adt_runtime_location();
    adt_skeleton *skeleton = location ? adt_skeleton_claim(adt_location_id(location)) : NULL;
    if (!skeleton || !skeleton->encoder_memory)
        return NO_SKELETON;
    fold_thread *t = skeleton->encoder_memory;
    memset(t, 0, sizeof *t);
    t->skeleton = skeleton;
    return t;
}

bool adt_mpi_fold_take_over(adt_location *location, void *arg)
{
    (void)location;
    (void)arg;
    fold_thread *t = thread_state;
    if (t == NULL || t == NO_SKELETON || t->skeleton->stop != ADT_SKELETON_RUNNING)
        return false;
    t->events_folded = true;
    return true;
}

/* While the thread's events are folded: what the buffer counted as folded
 * since the last outermost call's Leave was made outside MPI calls (a
 * user region, say), which the skeleton does not hold. */
static __attribute__((cold, noinline)) void unfold_outside_calls(fold_thread *t, adt_location *location)
{
    uint64_t folded = adt_location_events_folded(location);
    if (folded > t->folded_at_leave)
        adt_buffer_unfold_events(location, folded - t->folded_at_leave, false);
    t->folded_at_enter = t->folded_at_leave;
}

/* An outermost call's key begins: its function and calling context. */
static inline void open_call(fold_thread *t, uint32_t function, uint32_t context, uint64_t time)
{
    t->open = true;
    t->enter = time;
    t->not_encodable = false;
    t->length = 0;
    t->completed_count = 0;
    /* An empty key has room for a step. */
    put(t, function);
    put_object(t, OBJECT_CONTEXT, context);
}

/* The rare ways into adt_mpi_fold_enter, each a function of its own that
 * the common path reaches by a tail call: so that path calls nothing and
 * saves no registers. */
static __attribute__((cold, noinline)) void open_call_unfolding(fold_thread *t, adt_location *location,
                                                                uint32_t function, uint32_t context, uint64_t time)
{
    unfold_outside_calls(t, location);
    open_call(t, function, context, time);
}

static __attribute__((cold, noinline)) void enter_first(adt_location *location, uint32_t function, uint32_t context,
                                                        bool outermost, uint64_t time)
{
    thread_state = claim();
    adt_mpi_fold_enter(location, function, context, outermost, time);
}

void adt_mpi_fold_enter(adt_location *location, uint32_t function, uint32_t context, bool outermost,
                        uint64_t time)
{
    fold_thread *t = thread_state;
    if (__builtin_expect(t == NULL, 0)) {
        enter_first(location, function, context, outermost, time);
        return;
    }
    if (t == NO_SKELETON)
        return;
    if (!outermost) {
        if (t->open && room(t)) {
            put(t, ADT_REC_ENTER);
            put(t, function);
        }
        return;
    }
    if (__builtin_expect(t->events_folded, 0)) {
        open_call_unfolding(t, location, function, context, time);
        return;
    }
    open_call(t, function, context, time);
}

void adt_mpi_fold_record(uint16_t kind, const void *payload, int32_t own_rank)
{
    fold_thread *t = thread_state;
    if (t == NULL || t == NO_SKELETON || !t->open || !room(t))
        return;
    put(t, kind);
    switch (kind) {
    case ADT_REC_MPI_SEND:
    case ADT_REC_MPI_RECV:
    case ADT_REC_MPI_ISEND:
    case ADT_REC_MPI_IRECV: {
        const adt_rec_p2p *p2p = payload;
        put(t, p2p->bytes);
        put_request(t, p2p->request, kind == ADT_REC_MPI_IRECV);
        put_object(t, OBJECT_COMM, p2p->comm);
        put_signed(t, (int64_t)(int32_t)p2p->peer - own_rank);
        put_signed(t, (int32_t)p2p->tag);
        break;
    }
    case ADT_REC_MPI_ISEND_COMPLETE:
    case ADT_REC_MPI_IRECV_REQUEST:
    case ADT_REC_MPI_REQUEST_TEST:
    case ADT_REC_MPI_REQUEST_CANCELLED:
    case ADT_REC_NB_COLLECTIVE_REQUEST:
        put_request(t, ((const adt_rec_request *)payload)->request,
                    kind == ADT_REC_MPI_ISEND_COMPLETE || kind == ADT_REC_MPI_REQUEST_CANCELLED);
        break;
    case ADT_REC_MPI_COLLECTIVE_END:
    case ADT_REC_NB_COLLECTIVE_COMPLETE: {
        const adt_rec_collective *collective = payload;
        put(t, collective->sent);
        put(t, collective->received);
        put_request(t, collective->request, kind == ADT_REC_NB_COLLECTIVE_COMPLETE);
        put(t, collective->op);
        put_object(t, OBJECT_COMM, collective->comm);
        put(t, collective->root);
        break;
    }
    ADT_REC_RMA_CASES: {
        const adt_rec_rma *rma = payload;
        put(t, rma->bytes_sent);
        put(t, rma->bytes_received);
        put_request(t, rma->matching_id,
                    kind == ADT_REC_RMA_OP_COMPLETE_BLOCKING || kind == ADT_REC_RMA_OP_COMPLETE_NONBLOCKING ||
                        kind == ADT_REC_RMA_OP_COMPLETE_REMOTE);
        put_object(t, OBJECT_WINDOW, rma->win);
        put(t, rma->target);
        if (kind == ADT_REC_RMA_GROUP_SYNC)
            put_object(t, OBJECT_GROUP, rma->group);
        put(t, rma->detail);
        put(t, rma->sync_level);
        break;
    }
    ADT_REC_IO_CASES: {
        const adt_rec_io *io = payload;
        put(t, io->bytes);
        put_request(t, io->matching_id,
                    kind == ADT_REC_IO_OPERATION_COMPLETE || kind == ADT_REC_IO_OPERATION_CANCELLED);
        put_signed(t, io->offset);
        put_object(t, kind == ADT_REC_IO_DELETE_FILE ? OBJECT_IO_FILE : OBJECT_IO_HANDLE, io->handle);
        put(t, io->mode);
        put(t, io->flags);
        put(t, io->status_flags);
        break;
    }
    default:
        break;
    }
}

/* While the thread's events are folded, after the outermost call's Leave
 * was counted: a skeleton that stopped in this call holds neither it nor
 * what follows. */
static __attribute__((cold, noinline)) void account_folded_call(fold_thread *t, adt_location *location)
{
    uint64_t folded = adt_location_events_folded(location);
    if (t->skeleton->stop == ADT_SKELETON_RUNNING) {
        t->folded_at_leave = folded;
        return;
    }
    adt_buffer_unfold_events(location, folded - t->folded_at_enter, true);
    t->events_folded = false;
}

/* Requests completed in the call are forgotten and their symbols free
 * from the next call on. Not inlined: the calls that complete none (a
 * send, most calls) save no registers for its loop. */
static __attribute__((noinline)) void release_completed(fold_thread *t)
{
    for (uint32_t i = 0; i < t->completed_count; ++i) {
        const completion *done = &t->completed[i];
        /* Mostly still in its slot (a key is in one slot at most): no hash
         * and no probe. An earlier removal in this call may have shifted
         * it back, or removed it (the same request completed twice). */
        map_slot *slot = &t->requests[done->slot];
        if (slot->key != done->raw)
            slot = map_find(t->requests, done->raw);
        if (slot->key == 0)
            continue;
        t->symbols_in_use[slot->value / 64] &= ~(1ull << (slot->value % 64));
        map_remove(t->requests, slot);
        t->map_used[0]--;
    }
}

void adt_mpi_fold_leave(adt_location *location, uint32_t function, bool outermost, uint64_t time)
{
    fold_thread *t = thread_state;
    if (t == NULL || t == NO_SKELETON || !t->open)
        return;
    if (!outermost) {
        if (!room(t))
            return;
        put(t, ADT_REC_LEAVE);
        put(t, function);
        return;
    }
    t->open = false;
    /* The ending's side of this (adt_mpi_fold_close) is a store of
     * folds_closed, a process-wide barrier, then a wait for folding to
     * drop: either it sees folding set, or this load sees the close. The
     * barrier (membarrier) stands in for a fence here, which the hot path
     * would pay on every call. */
    atomic_store_explicit(&t->folding, true, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&folds_closed, memory_order_relaxed)) {
        atomic_store_explicit(&t->folding, false, memory_order_relaxed);
        return;
    }
    if (t->completed_count != 0)
        release_completed(t);
    if (t->not_encodable)
        adt_skeleton_stop_with(t->skeleton, ADT_SKELETON_STOP_NOT_ENCODABLE);
    else
        adt_skeleton_fold(t->skeleton, t->key, t->length, t->enter, time);
    atomic_store_explicit(&t->folding, false, memory_order_release);
    if (__builtin_expect(t->events_folded, 0))
        account_folded_call(t, location);
}

/* ---- the end without MPI_Finalize (normal code, or the ending signal's
 * handler: async-signal-safe, atomics, membarrier and nanosleep only) --- */

void adt_mpi_fold_init_close(void)
{
    barrier_ready = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

#define FOLD_WAIT_STEPS 1000 /* × 1 ms: a fold takes microseconds */

adt_skeleton_saved adt_mpi_fold_close(void)
{
    atomic_store(&folds_closed, true);
    /* A signal handler's save that interrupted its own thread in the
     * middle of a fold: that fold ends only after the handler, which
     * would wait for it forever, and its thread's tables are half
     * changed. (Its flag is set a little before the tables change and
     * dropped after: a thread stopped just outside the change counts as
     * in it, never the other way round.) Normal code is never in a fold
     * here. */
    const fold_thread *own = thread_state;
    if (own != NULL && own != NO_SKELETON && atomic_load_explicit(&own->folding, memory_order_relaxed))
        return ADT_SKELETON_NOT_SAVED_INTERRUPTED_FOLD;
    /* Every other running thread passes a full barrier: a fold that
     * began before it has its folding flag seen below, one after it sees
     * folds_closed (adt_mpi_fold_leave). */
    if (!barrier_ready || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        return ADT_SKELETON_NOT_SAVED_NO_BARRIER;
    for (size_t i = 0; i < adt_skeleton_count(); i++) {
        const fold_thread *t = adt_skeleton_at(i)->encoder_memory;
        if (t == NULL)
            continue; /* a skeleton that never had a slab: stopped, never folds */
        for (unsigned step = 0; atomic_load_explicit(&t->folding, memory_order_acquire); step++) {
            /* A thread descheduled in the middle of a fold: its skeleton
             * would be encoded half-way. */
            if (step == FOLD_WAIT_STEPS)
                return ADT_SKELETON_NOT_SAVED_STILL_FOLDING;
            struct timespec pause = { .tv_sec = 0, .tv_nsec = 1000000 };
            nanosleep(&pause, NULL);
        }
    }
    return ADT_SKELETON_SAVED;
}
