/*
 * thread.c: the process's share of memory for skeletons (start-up: mmap
 * and the table of skeletons; end: munmap, free) and each thread's
 * skeleton in it (hot path: slabs are claimed with one compare-and-swap,
 * a call folded with no malloc, lock or stdio; the owning thread only).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "grammar_internal.h"
#include "layout_internal.h"
#include "signatures_internal.h"
#include "timing_internal.h"

#define STOP_WORDS(cause, key, words) words,
#define STOP_KEYS(cause, key, words) key,
const char *const adt_skeleton_stop_keys[ADT_SKELETON_STOP_CAUSES] = { ADT_SKELETON_STOPS(STOP_KEYS) };
const char *const adt_skeleton_stop_words[ADT_SKELETON_STOP_CAUSES] = { ADT_SKELETON_STOPS(STOP_WORDS) };

/* The layout of a thread's first slab: header, encoder room, signature
 * table, grammar, timing. 1 MiB holds 2,048 distinct calls (96 KiB of
 * keys), a grammar of up to 16,384 digrams (half its table) in 24,576
 * symbols and 8,192 rules, and the histograms of 512 (previous, this)
 * signature pairs; a table that fills grows into further slabs. */
#define SIGNATURE_ENTRIES 2048u
#define SIGNATURE_BYTES (96u * 1024u)
#define GRAMMAR_SYMBOLS 24576u
#define GRAMMAR_RULES 8192u
#define DIGRAM_SLOTS_LOG2 15u
#define TIMING_PAIRS 512u

/* Threads that found no slab: their skeletons, stopped at once, so that
 * they are counted; beyond this many they are counted only. */
#define SLABLESS_MAX 256u

static bool created;
static uint8_t *share;
static uint64_t share_bytes;
static uint32_t slab_count;
static atomic_uint slabs_claimed;
/* The skeletons in slabs, in order of claim (each has a slab of its own,
 * so there are at most slab_count). A slot is counted before its pointer
 * is stored: an ending's summary, read while threads run, can find it
 * still NULL, and sees the empty skeleton below instead. */
static _Atomic(adt_skeleton *) *claimed;
static atomic_uint claimed_count;
static adt_skeleton being_claimed = { .stop = ADT_SKELETON_RUNNING, .previous = ADT_SKELETON_NO_PREVIOUS };
static adt_skeleton slabless[SLABLESS_MAX];
static atomic_uint slabless_claimed;

static size_t slab_layout_bytes(void)
{
    return adt_skeleton_align8(sizeof(adt_skeleton)) + ADT_SKELETON_ENCODER_BYTES +
           adt_skeleton_signatures_bytes(SIGNATURE_ENTRIES, SIGNATURE_BYTES) +
           adt_skeleton_grammar_bytes(GRAMMAR_SYMBOLS, GRAMMAR_RULES, DIGRAM_SLOTS_LOG2) +
           adt_skeleton_timing_bytes(TIMING_PAIRS);
}

_Static_assert(ADT_SKELETON_ENCODER_BYTES % 8 == 0, "the slab's parts stay 8-byte aligned");

int adt_skeleton_share_create(uint64_t bytes)
{
    if (slab_layout_bytes() > ADT_SKELETON_SLAB_BYTES)
        return -1;
    slab_count = (uint32_t)(bytes / ADT_SKELETON_SLAB_BYTES);
    share_bytes = (uint64_t)slab_count * ADT_SKELETON_SLAB_BYTES;
    atomic_store(&slabs_claimed, 0);
    atomic_store(&claimed_count, 0);
    atomic_store(&slabless_claimed, 0);
    if (slab_count == 0) {
        share = NULL;
        created = true;
        return 0;
    }
    claimed = malloc(slab_count * sizeof *claimed);
    if (!claimed)
        return -1;
    for (uint32_t i = 0; i < slab_count; ++i)
        atomic_init(&claimed[i], NULL);
    /* Touched now (MAP_POPULATE), so that a thread's first call, and a
     * table's growth, pay no page faults and the budget is really held. */
    void *memory = mmap(NULL, share_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (memory == MAP_FAILED) {
        free(claimed);
        claimed = NULL;
        return -1;
    }
    share = memory;
    created = true;
    return 0;
}

void adt_skeleton_share_destroy(void)
{
    if (share)
        munmap(share, share_bytes);
    free(claimed);
    claimed = NULL;
    share = NULL;
    created = false;
    share_bytes = 0;
    slab_count = 0;
    atomic_store(&slabs_claimed, 0);
    atomic_store(&claimed_count, 0);
    atomic_store(&slabless_claimed, 0);
}

uint64_t adt_skeleton_share_bytes(void)
{
    return share_bytes;
}

const uint8_t *adt_skeleton_share_memory(void)
{
    return share;
}

uint64_t adt_skeleton_share_claimed_bytes(void)
{
    uint32_t slabs = atomic_load(&slabs_claimed);
    return (uint64_t)slabs * ADT_SKELETON_SLAB_BYTES;
}

static uint32_t slabs_for(size_t bytes)
{
    size_t slabs = (bytes + ADT_SKELETON_SLAB_BYTES - 1) / ADT_SKELETON_SLAB_BYTES;
    return slabs > UINT32_MAX ? UINT32_MAX : (uint32_t)slabs;
}

/* A claim's first slab may be any. */
#define ANYWHERE UINT32_MAX

/* Slabs following one another, from slab `from` (or ANYWHERE): `wanted`
 * of them, or as many as are left beyond `kept` if at least `least`;
 * NULL when fewer are, or when `from` is no longer the next free one. A
 * compare-and-swap rather than an add, so that a claim that does not fit
 * leaves the slabs there are to other threads: lock-free (a swap fails
 * when another thread's claim succeeded, or spuriously), and memory
 * already touched, so no page faults. The slabs are the claiming
 * thread's alone. */
static uint8_t *claim_slabs(uint32_t from, uint32_t least, uint32_t wanted, uint32_t kept, size_t *bytes)
{
    uint32_t first = atomic_load_explicit(&slabs_claimed, memory_order_relaxed);
    uint32_t taken;
    do {
        if (from != ANYWHERE && first != from)
            return NULL;
        uint32_t left = slab_count - first > kept ? slab_count - first - kept : 0;
        if (left < least)
            return NULL;
        taken = left < wanted ? left : wanted;
    } while (!atomic_compare_exchange_weak_explicit(&slabs_claimed, &first, first + taken, memory_order_relaxed,
                                                    memory_order_relaxed));
    *bytes = (size_t)taken * ADT_SKELETON_SLAB_BYTES;
    return share + (size_t)first * ADT_SKELETON_SLAB_BYTES;
}

/* The slabs for a table's growth: room for twice it, or what is left
 * beyond `kept` if that holds at least 9/8 of it; NULL when the share has
 * no such room. */
static uint8_t *claim_growth(size_t at_least, size_t twice, uint32_t kept, size_t *bytes)
{
    if (at_least == SIZE_MAX)
        return NULL;
    return claim_slabs(ANYWHERE, slabs_for(at_least), slabs_for(twice), kept, bytes);
}

/* The cold paths of adt_skeleton_fold: a full table moved into a larger
 * one in newly claimed slabs (no malloc, no lock, no stdio; the owning
 * thread only). False when the share has no room left for it. */
static bool grow_signatures(adt_skeleton *skeleton)
{
    size_t bytes;
    const adt_skeleton_signatures *table = skeleton->signatures;
    uint8_t *memory = claim_growth(adt_skeleton_signatures_scaled_bytes(table, 9),
                                   adt_skeleton_signatures_scaled_bytes(table, 16), 0, &bytes);
    adt_skeleton_signatures *grown = memory ? adt_skeleton_signatures_grow(table, memory, bytes) : NULL;
    if (grown)
        skeleton->signatures = grown;
    return grown != NULL;
}

static bool grow_grammar(adt_skeleton *skeleton)
{
    size_t bytes;
    const adt_skeleton_grammar *grammar = skeleton->grammar;
    uint8_t *memory = claim_growth(adt_skeleton_grammar_scaled_bytes(grammar, 9),
                                   adt_skeleton_grammar_scaled_bytes(grammar, 16), 0, &bytes);
    adt_skeleton_grammar *grown = memory ? adt_skeleton_grammar_grow(grammar, memory, bytes) : NULL;
    if (grown)
        skeleton->grammar = grown;
    return grown != NULL;
}

/* The slabs a table that begins at byte `start` of the share needs to
 * reach `bytes`, beyond slab `end`: at least one. */
static uint32_t slabs_beyond(size_t start, size_t bytes, uint32_t end)
{
    uint32_t reach = slabs_for(start + bytes);
    return reach > end + 1 ? reach - end : 1;
}

/* The timing grows with the structure: only while, after its claim, the
 * share keeps free room for its thread's structure (the bytes its
 * signature table and grammar take now) to double into. A pair
 * takes 280 bytes, and a code whose calls follow one another
 * irregularly would otherwise spend the share on histograms and leave
 * none to the structure: a call without its timing is counted
 * (untimed), a call without its structure would stop the skeleton. A
 * small structure leaves the timing most of the share, a large one keeps
 * it back, and as the structure grows, the room kept for it does too.
 * Where the table ends at the slabs claimed so far (its thread made the
 * last claim: always so with one thread until another table grows), it
 * extends into the next ones and leaves no copy behind; else it moves. */
static bool grow_timing(adt_skeleton *skeleton)
{
    size_t bytes;
    adt_skeleton_timing *timing = skeleton->timing;
    size_t at_least = adt_skeleton_timing_scaled_bytes(timing, 9), twice = adt_skeleton_timing_scaled_bytes(timing, 16);
    if (at_least == SIZE_MAX)
        return false;
    uint32_t kept = slabs_for(adt_skeleton_signatures_scaled_bytes(skeleton->signatures, 16) +
                              adt_skeleton_grammar_scaled_bytes(skeleton->grammar, 16));
    size_t start = (size_t)((uint8_t *)timing - share);
    uint32_t end = slabs_for(start + adt_skeleton_timing_scaled_bytes(timing, 8));
    adt_skeleton_timing *grown = NULL;
    if (claim_slabs(end, slabs_beyond(start, at_least, end), slabs_beyond(start, twice, end), kept, &bytes)) {
        grown = adt_skeleton_timing_grow_in_place(timing, (size_t)end * ADT_SKELETON_SLAB_BYTES + bytes - start);
    } else {
        uint8_t *memory = claim_growth(at_least, twice, kept, &bytes);
        grown = memory ? adt_skeleton_timing_grow(timing, memory, bytes) : NULL;
    }
    if (grown)
        skeleton->timing = grown;
    return grown != NULL;
}

/* The refused steps of adt_skeleton_fold, taken again after their table
 * grew (a grown table has room for at least an eighth more), until the
 * share has no room: then the skeleton stops under the table's cause,
 * or, for the timing, the call is counted untimed. Cold, not inlined. */
__attribute__((cold, noinline)) static uint32_t intern_growing(adt_skeleton *skeleton, const uint8_t *key,
                                                               uint32_t length)
{
    uint32_t terminal;
    do {
        if (!grow_signatures(skeleton)) {
            skeleton->stop = ADT_SKELETON_STOP_SIGNATURES_FULL;
            return UINT32_MAX;
        }
        terminal = adt_skeleton_signatures_intern(skeleton->signatures, key, length);
    } while (terminal == UINT32_MAX);
    return terminal;
}

__attribute__((cold, noinline)) static bool append_growing(adt_skeleton *skeleton, uint32_t terminal)
{
    do {
        if (!grow_grammar(skeleton)) {
            skeleton->stop = ADT_SKELETON_STOP_GRAMMAR_FULL;
            return false;
        }
    } while (!adt_skeleton_grammar_append(skeleton->grammar, terminal));
    return true;
}

__attribute__((cold, noinline)) static void time_growing(adt_skeleton *skeleton, uint32_t previous, uint32_t terminal,
                                                         uint64_t compute, uint64_t duration)
{
    if (!grow_timing(skeleton) || !adt_skeleton_timing_add(skeleton->timing, previous, terminal, compute, duration))
        skeleton->untimed++;
}

/* adt_skeleton_fold's step for a call that is not the one its loop
 * expects (fold_other_call): the key hashed, the terminal appended the
 * ordinary way; the terminal, or UINT32_MAX when the skeleton stopped. A
 * full table grows and the step is taken again, in functions of their
 * own: a call that needs no room runs the same code as before growth
 * existed. */
static uint32_t intern_and_append(adt_skeleton *skeleton, const uint8_t *key,
                                                            uint32_t length)
{
    uint32_t terminal = adt_skeleton_signatures_intern(skeleton->signatures, key, length);
    if (__builtin_expect(terminal == UINT32_MAX, 0) &&
        (terminal = intern_growing(skeleton, key, length)) == UINT32_MAX)
        return UINT32_MAX;
    if (__builtin_expect(!adt_skeleton_grammar_append(skeleton->grammar, terminal), 0) &&
        !append_growing(skeleton, terminal))
        return UINT32_MAX;
    return terminal;
}

adt_skeleton *adt_skeleton_claim(uint64_t thread_index)
{
    if (!created)
        return NULL;
    size_t bytes;
    uint8_t *at = claim_slabs(ANYWHERE, 1, 1, 0, &bytes);
    if (!at) {
        uint32_t index = atomic_fetch_add_explicit(&slabless_claimed, 1, memory_order_relaxed);
        if (index >= SLABLESS_MAX)
            return NULL;
        adt_skeleton *skeleton = &slabless[index];
        *skeleton = (adt_skeleton){ .thread_index = thread_index, .stop = ADT_SKELETON_STOP_NO_SLAB };
        return skeleton;
    }
    adt_skeleton *skeleton = (adt_skeleton *)at;
    at += adt_skeleton_align8(sizeof *skeleton);
    *skeleton = (adt_skeleton){ .thread_index = thread_index, .stop = ADT_SKELETON_RUNNING,
                                .previous = ADT_SKELETON_NO_PREVIOUS };
    skeleton->encoder_memory = at;
    at += ADT_SKELETON_ENCODER_BYTES;
    skeleton->signatures = adt_skeleton_signatures_init(at, SIGNATURE_ENTRIES, SIGNATURE_BYTES);
    at += adt_skeleton_signatures_bytes(SIGNATURE_ENTRIES, SIGNATURE_BYTES);
    skeleton->grammar = adt_skeleton_grammar_init(at, GRAMMAR_SYMBOLS, GRAMMAR_RULES, DIGRAM_SLOTS_LOG2);
    at += adt_skeleton_grammar_bytes(GRAMMAR_SYMBOLS, GRAMMAR_RULES, DIGRAM_SLOTS_LOG2);
    skeleton->timing = adt_skeleton_timing_init(at, TIMING_PAIRS);
    atomic_store_explicit(&claimed[atomic_fetch_add_explicit(&claimed_count, 1, memory_order_relaxed)], skeleton,
                          memory_order_release);
    return skeleton;
}

void adt_skeleton_stop_with(adt_skeleton *skeleton, adt_skeleton_stop cause)
{
    if (skeleton->stop == ADT_SKELETON_RUNNING)
        skeleton->stop = cause;
}

/* The timing of a call whose pair is not the one that followed the last
 * call's last time: a hash lookup, a new pair, or the table grown. */
static __attribute__((noinline)) void time_other_pair(adt_skeleton *skeleton, uint32_t previous, uint32_t terminal,
                                                      uint64_t compute, uint64_t duration)
{
    if (!adt_skeleton_timing_note_found(skeleton->timing, previous, terminal, compute, duration))
        time_growing(skeleton, previous, terminal, compute, duration);
}

/* The call's timing, once its terminal is in the grammar. The rare step
 * (time_other_pair) is its last, a tail call: adt_skeleton_fold's common
 * path calls nothing and so saves no registers. */
static inline void time_call(adt_skeleton *skeleton, uint32_t terminal, uint64_t enter, uint64_t leave)
{
    skeleton->calls++;
    uint64_t compute = enter > skeleton->previous_leave ? enter - skeleton->previous_leave : 0;
    uint64_t duration = leave > enter ? leave - enter : 0;
    uint32_t previous = skeleton->previous;
    skeleton->previous = terminal;
    skeleton->previous_leave = leave;
    skeleton->last_enter = enter;
    if (__builtin_expect(!adt_skeleton_timing_take_expected(skeleton->timing, previous, terminal, compute, duration),
                         0))
        time_other_pair(skeleton, previous, terminal, compute, duration);
}

/* adt_skeleton_fold's rare steps, each reached by a tail call: a call
 * other than the one its loop expects, and the loop's iterations to be
 * put into its exponent (once per 2^31). */
static __attribute__((noinline)) void fold_other_call(adt_skeleton *skeleton, const uint8_t *key, uint32_t length,
                                                      uint64_t enter, uint64_t leave)
{
    uint32_t terminal = intern_and_append(skeleton, key, length);
    if (terminal == UINT32_MAX)
        return;
    /* The thread's first call has no computation before it on record. It
     * comes this way: an empty grammar follows no loop, so its first
     * call is never the one a loop expects (adt_skeleton_fold's common
     * path therefore does not ask). */
    if (skeleton->calls == 0) {
        skeleton->first_leave = leave;
        skeleton->previous_leave = enter;
    }
    time_call(skeleton, terminal, enter, leave);
}

static __attribute__((cold, noinline)) void fold_refollowing(adt_skeleton *skeleton, uint32_t terminal,
                                                             uint64_t enter, uint64_t leave)
{
    adt_skeleton_grammar_refollow(skeleton->grammar);
    time_call(skeleton, terminal, enter, leave);
}

/* The call is the one the loop expects: counted, and timed. */
static inline void fold_expected(adt_skeleton *skeleton, uint32_t terminal, uint64_t enter, uint64_t leave)
{
    if (__builtin_expect(adt_skeleton_grammar_take_expected_until_refollow(skeleton->grammar), 0)) {
        fold_refollowing(skeleton, terminal, enter, leave);
        return;
    }
    time_call(skeleton, terminal, enter, leave);
}

/* adt_skeleton_fold for a key of more than 16 bytes, reached by a tail
 * call: the comparison's loop and its registers stay out of the common
 * path, whose keys (a message call's) are shorter. */
static __attribute__((noinline)) void fold_long_key(adt_skeleton *skeleton, uint32_t terminal, const uint8_t *key,
                                                    uint32_t length, uint64_t enter, uint64_t leave)
{
    if (!adt_skeleton_signatures_is(skeleton->signatures, terminal, key, length)) {
        fold_other_call(skeleton, key, length, enter, leave);
        return;
    }
    fold_expected(skeleton, terminal, enter, leave);
}

void adt_skeleton_fold(adt_skeleton *skeleton, const uint8_t *key, uint32_t length, uint64_t enter,
                       uint64_t leave)
{
    if (skeleton->stop != ADT_SKELETON_RUNNING)
        return;
    /* Inside a loop the call is most often the one the loop expects:
     * one comparison instead of a hash and a probe, and the grammar's
     * fast path inline (it needs no room). */
    const adt_skeleton_grammar *grammar = skeleton->grammar;
    if (__builtin_expect(!adt_skeleton_grammar_follows(grammar), 0)) {
        fold_other_call(skeleton, key, length, enter, leave);
        return;
    }
    uint32_t terminal = adt_skeleton_grammar_followed_next(grammar);
    if (__builtin_expect(length > 16, 0)) {
        fold_long_key(skeleton, terminal, key, length, enter, leave);
        return;
    }
    if (__builtin_expect(!adt_skeleton_signatures_is(skeleton->signatures, terminal, key, length), 0)) {
        fold_other_call(skeleton, key, length, enter, leave);
        return;
    }
    fold_expected(skeleton, terminal, enter, leave);
}

/* The skeletons in slabs first, then the slabless ones: in each, claimed
 * ones are whole by the end of the run (their threads' calls are over). */
size_t adt_skeleton_count(void)
{
    uint32_t slabless_count = atomic_load(&slabless_claimed);
    return atomic_load(&claimed_count) + (slabless_count < SLABLESS_MAX ? slabless_count : SLABLESS_MAX);
}

adt_skeleton *adt_skeleton_at(size_t index)
{
    uint32_t in_slabs = atomic_load(&claimed_count);
    if (index >= in_slabs)
        return &slabless[index - in_slabs];
    adt_skeleton *skeleton = atomic_load_explicit(&claimed[index], memory_order_acquire);
    return skeleton ? skeleton : &being_claimed;
}
