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

/* The state of a thread without a skeleton: before its first call, and
 * when the share had none for it. No thread ever writes it (its open flag
 * stays false), so a record or a Leave needs that one test only, and
 * adt_mpi_fold_enter one comparison for both cases. */
static fold_thread no_skeleton_marker;
#define NO_SKELETON (&no_skeleton_marker)
static __thread fold_thread *thread_state __attribute__((tls_model("initial-exec"))) = NO_SKELETON;
/* Whether the thread has asked the share for a skeleton (its first call). */
static __thread bool thread_asked __attribute__((tls_model("initial-exec")));

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
        /* It stays when its home lies in (hole, next], cyclically: when
         * it is fewer probes from its home than the hole is. */
        uint32_t home = map_home(slots[next].key);
        if (((next - home) & (MAP_SLOTS - 1)) < ((next - hole) & (MAP_SLOTS - 1)))
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

/* Only after room(): at most STEP_VARINTS of them per step. A step
 * writes the key through a cursor, `at`, and stores the key's length
 * once at its end: with the length in the state, each varint stored it
 * again, since a byte store may alias any field of the state. */
static inline uint8_t *put(uint8_t *at, uint64_t value)
{
    while (value >= 0x80) {
        *at++ = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    *at++ = (uint8_t)value;
    return at;
}

static inline uint8_t *put_signed(uint8_t *at, int64_t value)
{
    return put(at, ((uint64_t)value << 1) ^ (uint64_t)(value >> 63));
}

/* The end of a step: the key holds what the cursor wrote. */
static inline void step_end(fold_thread *t, const uint8_t *at)
{
    t->length = (uint32_t)(at - t->key);
}

/* put_object's lookup in the map, for an object other than the kind's
 * last one (not inlined: the common cases below stay small). */
static __attribute__((noinline)) uint8_t *put_object_looked_up(fold_thread *t, uint8_t *at, object_kind kind,
                                                               uint32_t id)
{
    uint64_t key = ((uint64_t)kind << 32 | id) + 1;
    map_slot *slot = map_find(t->objects, key);
    if (slot->key == 0) {
        if (t->map_used[1] >= MAP_SLOTS / 2) {
            t->not_encodable = true;
            return at;
        }
        *slot = (map_slot){ key, t->next_object[kind]++, 0 };
        t->map_used[1]++;
    }
    t->recent_key[kind] = id + 1;
    t->recent_index[kind] = slot->value;
    return put(at, slot->value + 1);
}

/* Whether a step may call a lookup: the map's, for an object other than
 * the kind's last one, and a new request's symbol. The common path of a
 * record does not (WITHOUT_LOOKUPS): where it would need one, it gives up
 * (NULL), and the record is encoded again from its start with them
 * (record_looked_up). What it changed by then encodes the same the second
 * time: bytes of the key after its length, written again, and a new
 * request's symbol (inline when one of the first 64 is free), which the
 * second encoding finds in the map; a completion is noted only once
 * nothing can give up. So that path calls nothing and saves no registers
 * for calls. */
typedef enum lookups { WITHOUT_LOOKUPS, WITH_LOOKUPS } lookups;

/* An object's first-use index on the thread, + 1; 0 for none. */
static inline uint8_t *put_object(fold_thread *t, uint8_t *at, object_kind kind, uint32_t id, lookups may)
{
    if (id == ADT_UNDEFINED_ID)
        return put(at, 0);
    /* Most records of a thread name the communicator the one before did. */
    if (t->recent_key[kind] == id + 1)
        return put(at, t->recent_index[kind] + 1);
    if (may == WITHOUT_LOOKUPS)
        return NULL;
    return put_object_looked_up(t, at, kind, id);
}

/* A request's first record: symbol in the map slot its lookup found
 * empty. */
static inline map_slot *request_insert(fold_thread *t, map_slot *slot, uint64_t raw, uint32_t symbol)
{
    t->symbols_in_use[symbol / 64] |= 1ull << (symbol % 64);
    *slot = (map_slot){ raw, symbol, 0 };
    t->map_used[0]++;
    return slot;
}

/* The lowest symbol free, beyond the first 64 too; NULL, and the call
 * not encodable, when none is (or the map is half full). */
static __attribute__((noinline)) map_slot *put_request_new(fold_thread *t, map_slot *slot, uint64_t raw)
{
    if (t->map_used[0] < MAP_SLOTS / 2)
        for (uint32_t word = 0; word < REQUEST_SYMBOLS / 64; ++word)
            if (~t->symbols_in_use[word])
                return request_insert(t, slot, raw, word * 64 + (uint32_t)__builtin_ctzll(~t->symbols_in_use[word]));
    t->not_encodable = true;
    return NULL;
}

/* A request's (or matching id's) symbol, + 1; 0 for none. *slot: its
 * slot in the map, for complete_request (NULL: none, or not encodable).
 * A new request takes the lowest symbol free: inline when one of the
 * first 64 is (a program with fewer requests in flight at once). */
static inline uint8_t *put_request(fold_thread *t, uint8_t *at, uint64_t raw, map_slot **slot, lookups may)
{
    *slot = NULL;
    if (raw == 0)
        return put(at, 0);
    map_slot *found = map_find(t->requests, raw);
    if (found->key == 0) {
        if (~t->symbols_in_use[0] && t->map_used[0] < MAP_SLOTS / 2)
            found = request_insert(t, found, raw, (uint32_t)__builtin_ctzll(~t->symbols_in_use[0]));
        else if (may == WITHOUT_LOOKUPS)
            return NULL;
        else if ((found = put_request_new(t, found, raw)) == NULL)
            return at;
    }
    *slot = found;
    return put(at, found->value + 1);
}

/* The record ends the request put_request found in slot, so its symbol
 * is free again after this call (not before: RMA's remote completion
 * follows the blocking one in the same call, with the same id). */
static inline void complete_request(fold_thread *t, uint64_t raw, const map_slot *slot)
{
    if (slot == NULL)
        return;
    if (t->completed_count == COMPLETED_MAX) {
        t->not_encodable = true;
        return;
    }
    completion *done = &t->completed[t->completed_count++];
    done->raw = raw;
    done->slot = (uint32_t)(slot - t->requests);
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
    if (t == NO_SKELETON || t->skeleton->stop != ADT_SKELETON_RUNNING)
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

/* open_call's end for a calling context other than the last one: its
 * lookup, reached by a tail call. */
static __attribute__((noinline)) void open_call_looked_up(fold_thread *t, uint8_t *at, uint32_t context)
{
    step_end(t, put_object_looked_up(t, at, OBJECT_CONTEXT, context));
}

/* An outermost call's key begins: its function and calling context. */
static inline void open_call(fold_thread *t, uint32_t function, uint32_t context, uint64_t time)
{
    t->open = true;
    t->enter = time;
    t->not_encodable = false;
    t->completed_count = 0;
    /* An empty key has room for a step. */
    uint8_t *at = put(t->key, function);
    uint8_t *end = put_object(t, at, OBJECT_CONTEXT, context, WITHOUT_LOOKUPS);
    if (__builtin_expect(end == NULL, 0)) {
        open_call_looked_up(t, at, context);
        return;
    }
    step_end(t, end);
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

/* A thread without a skeleton: its first call asks the share for one. */
static __attribute__((cold, noinline)) void enter_without_skeleton(adt_location *location, uint32_t function,
                                                                   uint32_t context, bool outermost, uint64_t time)
{
    if (thread_asked)
        return;
    thread_asked = true;
    thread_state = claim();
    if (thread_state != NO_SKELETON)
        adt_mpi_fold_enter(location, function, context, outermost, time);
}

void adt_mpi_fold_enter(adt_location *location, uint32_t function, uint32_t context, bool outermost,
                        uint64_t time)
{
    fold_thread *t = thread_state;
    if (__builtin_expect(t == NO_SKELETON, 0)) {
        enter_without_skeleton(location, function, context, outermost, time);
        return;
    }
    if (!outermost) {
        if (t->open && room(t))
            step_end(t, put(put(t->key + t->length, ADT_REC_ENTER), function));
        return;
    }
    if (__builtin_expect(t->events_folded, 0)) {
        open_call_unfolding(t, location, function, context, time);
        return;
    }
    open_call(t, function, context, time);
}

#define P2P_KINDS                                                                                              \
    (1u << ADT_REC_MPI_SEND | 1u << ADT_REC_MPI_RECV | 1u << ADT_REC_MPI_ISEND | 1u << ADT_REC_MPI_IRECV)
#define REQUEST_KINDS                                                                                          \
    (1u << ADT_REC_MPI_ISEND_COMPLETE | 1u << ADT_REC_MPI_IRECV_REQUEST | 1u << ADT_REC_MPI_REQUEST_TEST |          \
     1u << ADT_REC_MPI_REQUEST_CANCELLED | 1u << ADT_REC_NB_COLLECTIVE_REQUEST)
_Static_assert(ADT_REC_MPI_SEND < 32 && ADT_REC_MPI_RECV < 32 && ADT_REC_MPI_ISEND < 32 && ADT_REC_MPI_IRECV < 32 &&
                   ADT_REC_MPI_ISEND_COMPLETE < 32 && ADT_REC_MPI_IRECV_REQUEST < 32 &&
                   ADT_REC_MPI_REQUEST_TEST < 32 && ADT_REC_MPI_REQUEST_CANCELLED < 32 &&
                   ADT_REC_NB_COLLECTIVE_REQUEST < 32,
               "the point-to-point and request kinds are bits of P2P_KINDS and REQUEST_KINDS");

/* The fields of a point-to-point or request record (kinds in P2P_KINDS |
 * REQUEST_KINDS), after its kind; NULL when it needs a lookup that `may`
 * forbids. The completion is noted last, once nothing can give up. */
static inline uint8_t *put_p2p_or_request(fold_thread *t, uint8_t *at, uint16_t kind, const void *payload,
                                          int32_t own_rank, lookups may)
{
    map_slot *slot;
    if (!(P2P_KINDS >> kind & 1)) {
        uint64_t raw = ((const adt_rec_request *)payload)->request;
        if ((at = put_request(t, at, raw, &slot, may)) != NULL &&
            (kind == ADT_REC_MPI_ISEND_COMPLETE || kind == ADT_REC_MPI_REQUEST_CANCELLED))
            complete_request(t, raw, slot);
        return at;
    }
    const adt_rec_p2p *p2p = payload;
    at = put(at, p2p->bytes);
    if ((at = put_request(t, at, p2p->request, &slot, may)) == NULL ||
        (at = put_object(t, at, OBJECT_COMM, p2p->comm, may)) == NULL)
        return NULL;
    /* A receive's wildcards need no test: MPI_ANY_SOURCE's peer is
     * -2^31 from the own rank, MPI_ANY_TAG is -1 (fold.h). */
    at = put_signed(at, (int64_t)(int32_t)p2p->peer - own_rank);
    at = put_signed(at, (int32_t)p2p->tag);
    if (kind == ADT_REC_MPI_IRECV)
        complete_request(t, p2p->request, slot);
    return at;
}

/* A point-to-point or request record that needs a lookup, encoded again
 * from its kind on. */
static __attribute__((noinline)) void record_looked_up(fold_thread *t, uint16_t kind, const void *payload,
                                                       int32_t own_rank)
{
    step_end(t, put_p2p_or_request(t, put(t->key + t->length, kind), kind, payload, own_rank, WITH_LOOKUPS));
}

/* Collective, RMA and I/O records (after room()). */
static __attribute__((noinline)) void record_other(fold_thread *t, uint16_t kind, const void *payload)
{
    uint8_t *at = put(t->key + t->length, kind);
    map_slot *slot;
    switch (kind) {
    case ADT_REC_MPI_COLLECTIVE_END:
    case ADT_REC_NB_COLLECTIVE_COMPLETE: {
        const adt_rec_collective *collective = payload;
        at = put(at, collective->sent);
        at = put(at, collective->received);
        at = put_request(t, at, collective->request, &slot, WITH_LOOKUPS);
        if (kind == ADT_REC_NB_COLLECTIVE_COMPLETE)
            complete_request(t, collective->request, slot);
        at = put(at, collective->op);
        at = put_object(t, at, OBJECT_COMM, collective->comm, WITH_LOOKUPS);
        at = put(at, collective->root);
        break;
    }
    ADT_REC_RMA_CASES: {
        const adt_rec_rma *rma = payload;
        at = put(at, rma->bytes_sent);
        at = put(at, rma->bytes_received);
        at = put_request(t, at, rma->matching_id, &slot, WITH_LOOKUPS);
        if (kind == ADT_REC_RMA_OP_COMPLETE_BLOCKING || kind == ADT_REC_RMA_OP_COMPLETE_NONBLOCKING ||
            kind == ADT_REC_RMA_OP_COMPLETE_REMOTE)
            complete_request(t, rma->matching_id, slot);
        at = put_object(t, at, OBJECT_WINDOW, rma->win, WITH_LOOKUPS);
        at = put(at, rma->target);
        if (kind == ADT_REC_RMA_GROUP_SYNC)
            at = put_object(t, at, OBJECT_GROUP, rma->group, WITH_LOOKUPS);
        at = put(at, rma->detail);
        at = put(at, rma->sync_level);
        break;
    }
    ADT_REC_IO_CASES: {
        const adt_rec_io *io = payload;
        at = put(at, io->bytes);
        at = put_request(t, at, io->matching_id, &slot, WITH_LOOKUPS);
        if (kind == ADT_REC_IO_OPERATION_COMPLETE || kind == ADT_REC_IO_OPERATION_CANCELLED)
            complete_request(t, io->matching_id, slot);
        at = put_signed(at, io->offset);
        at = put_object(t, at, kind == ADT_REC_IO_DELETE_FILE ? OBJECT_IO_FILE : OBJECT_IO_HANDLE, io->handle,
                        WITH_LOOKUPS);
        at = put(at, io->mode);
        at = put(at, io->flags);
        at = put(at, io->status_flags);
        break;
    }
    default:
        break;
    }
    step_end(t, at);
}

void adt_mpi_fold_record(uint16_t kind, const void *payload, int32_t own_rank)
{
    fold_thread *t = thread_state;
    if (!t->open || !room(t))
        return;
    /* Point-to-point and request records, the most frequent, are told by
     * one bit test; the others are encoded out of line. */
    if (__builtin_expect(kind >= 32 || !((P2P_KINDS | REQUEST_KINDS) >> kind & 1), 0)) {
        record_other(t, kind, payload);
        return;
    }
    uint8_t *at = put_p2p_or_request(t, put(t->key + t->length, kind), kind, payload, own_rank, WITHOUT_LOOKUPS);
    if (__builtin_expect(at == NULL, 0)) {
        record_looked_up(t, kind, payload, own_rank);
        return;
    }
    step_end(t, at);
}

/* While the thread's events are folded, after the outermost call's Leave
 * was counted: a skeleton that stopped in this call holds neither it nor
 * what follows. The thread's location is looked up here, in this rare
 * case, rather than passed to every adt_mpi_fold_leave and kept across
 * its fold (a register saved on every call): the wrapper's is the same,
 * adt_runtime_location() of this thread. */
static __attribute__((cold, noinline)) void account_folded_call(fold_thread *t)
{
    adt_location *location = adt_runtime_location();
    uint64_t folded = adt_location_events_folded(location);
    if (t->skeleton->stop == ADT_SKELETON_RUNNING) {
        t->folded_at_leave = folded;
        return;
    }
    adt_buffer_unfold_events(location, folded - t->folded_at_enter, true);
    t->events_folded = false;
}

/* Requests completed in the call are forgotten and their symbols free
 * from the next call on. */
static inline void release_completed(fold_thread *t)
{
    for (uint32_t i = 0; i < t->completed_count; ++i) {
        const completion *done = &t->completed[i];
        /* Mostly still in its slot (a key is in one slot at most): no hash
         * and no probe. An earlier removal in this call may have shifted
         * it back, or removed it (the same request completed twice). */
        map_slot *slot = &t->requests[done->slot];
        if (slot->key != done->raw && (slot = map_find(t->requests, done->raw))->key == 0)
            continue;
        t->symbols_in_use[slot->value / 64] &= ~(1ull << (slot->value % 64));
        map_remove(t->requests, slot);
        t->map_used[0]--;
    }
}

/* The fold of a call that completed requests, or whose key or tables
 * overflowed. Not inlined: the calls that do neither (a send, most calls)
 * save no registers for its loop. */
static __attribute__((noinline)) void fold_completing(fold_thread *t, uint64_t time)
{
    if (t->completed_count != 0)
        release_completed(t);
    if (t->not_encodable)
        adt_skeleton_stop_with(t->skeleton, ADT_SKELETON_STOP_NOT_ENCODABLE);
    else
        adt_skeleton_fold(t->skeleton, t->key, t->length, t->enter, time);
}

void adt_mpi_fold_leave(uint32_t function, bool outermost, uint64_t time)
{
    fold_thread *t = thread_state;
    if (!t->open)
        return;
    if (!outermost) {
        if (room(t))
            step_end(t, put(put(t->key + t->length, ADT_REC_LEAVE), function));
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
    if (__builtin_expect(t->completed_count != 0 || t->not_encodable, 0))
        fold_completing(t, time);
    else
        adt_skeleton_fold(t->skeleton, t->key, t->length, t->enter, time);
    atomic_store_explicit(&t->folding, false, memory_order_release);
    if (__builtin_expect(t->events_folded, 0))
        account_folded_call(t);
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
    if (own != NO_SKELETON && atomic_load_explicit(&own->folding, memory_order_relaxed))
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
