/*
 * thread.c: the process's share of memory for skeletons (start-up: mmap;
 * end: munmap) and each thread's skeleton in it (hot path: a slab is
 * claimed with one atomic add, a call folded with no malloc, lock or
 * stdio; the owning thread only).
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "layout_internal.h"
#include "timing_internal.h"

#define STOP_WORDS(cause, key, words) words,
#define STOP_KEYS(cause, key, words) key,
const char *const adt_skeleton_stop_keys[ADT_SKELETON_STOP_CAUSES] = { ADT_SKELETON_STOPS(STOP_KEYS) };
const char *const adt_skeleton_stop_words[ADT_SKELETON_STOP_CAUSES] = { ADT_SKELETON_STOPS(STOP_WORDS) };

/* The layout of one slab: header, encoder room, signature table, grammar,
 * timing. 1 MiB holds 2,048 distinct calls (96 KiB of keys), a grammar of
 * up to 16,384 digrams (half its table) in 24,576 symbols and 8,192
 * rules, and the histograms of 512 (previous, this) signature pairs. */
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
    atomic_store(&slabless_claimed, 0);
    if (slab_count == 0) {
        share = NULL;
        created = true;
        return 0;
    }
    /* Touched now (MAP_POPULATE), so that a thread's first call pays no
     * page faults and the budget is really held. */
    void *memory = mmap(NULL, share_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (memory == MAP_FAILED)
        return -1;
    share = memory;
    created = true;
    return 0;
}

void adt_skeleton_share_destroy(void)
{
    if (share)
        munmap(share, share_bytes);
    share = NULL;
    created = false;
    share_bytes = 0;
    slab_count = 0;
    atomic_store(&slabs_claimed, 0);
    atomic_store(&slabless_claimed, 0);
}

uint64_t adt_skeleton_share_bytes(void)
{
    return share_bytes;
}

adt_skeleton *adt_skeleton_claim(uint64_t thread_index)
{
    if (!created)
        return NULL;
    uint32_t slab = atomic_fetch_add_explicit(&slabs_claimed, 1, memory_order_relaxed);
    if (slab >= slab_count) {
        uint32_t index = atomic_fetch_add_explicit(&slabless_claimed, 1, memory_order_relaxed);
        if (index >= SLABLESS_MAX)
            return NULL;
        adt_skeleton *skeleton = &slabless[index];
        *skeleton = (adt_skeleton){ .thread_index = thread_index, .stop = ADT_SKELETON_STOP_NO_SLAB };
        return skeleton;
    }
    uint8_t *at = share + (size_t)slab * ADT_SKELETON_SLAB_BYTES;
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
    return skeleton;
}

void adt_skeleton_stop_with(adt_skeleton *skeleton, adt_skeleton_stop cause)
{
    if (skeleton->stop == ADT_SKELETON_RUNNING)
        skeleton->stop = cause;
}

void adt_skeleton_fold(adt_skeleton *skeleton, const uint8_t *key, uint32_t length, uint64_t enter,
                       uint64_t leave)
{
    if (skeleton->stop != ADT_SKELETON_RUNNING)
        return;
    /* Inside a loop the call is most often the one the loop expects:
     * one comparison instead of a hash and a probe. */
    uint32_t terminal = adt_skeleton_grammar_expected(skeleton->grammar);
    if (terminal == UINT32_MAX || !adt_skeleton_signatures_is(skeleton->signatures, terminal, key, length))
        terminal = adt_skeleton_signatures_intern(skeleton->signatures, key, length);
    if (terminal == UINT32_MAX) {
        skeleton->stop = ADT_SKELETON_STOP_SIGNATURES_FULL;
        return;
    }
    if (!adt_skeleton_grammar_append(skeleton->grammar, terminal)) {
        skeleton->stop = ADT_SKELETON_STOP_GRAMMAR_FULL;
        return;
    }
    /* The thread's first call has no computation before it on record. */
    if (skeleton->calls++ == 0) {
        skeleton->first_leave = leave;
        skeleton->previous_leave = enter;
    }
    uint64_t compute = enter > skeleton->previous_leave ? enter - skeleton->previous_leave : 0;
    uint64_t duration = leave > enter ? leave - enter : 0;
    if (!adt_skeleton_timing_note(skeleton->timing, skeleton->previous, terminal, compute, duration))
        skeleton->untimed++;
    skeleton->previous = terminal;
    skeleton->previous_leave = leave;
    skeleton->last_enter = enter;
}

/* The slabs claimed first, then the slabless skeletons: in each, claimed
 * ones are whole by the end of the run (their threads' calls are over). */
size_t adt_skeleton_count(void)
{
    uint32_t slabs = atomic_load(&slabs_claimed);
    uint32_t slabless_count = atomic_load(&slabless_claimed);
    return (slabs < slab_count ? slabs : slab_count) +
           (slabless_count < SLABLESS_MAX ? slabless_count : SLABLESS_MAX);
}

adt_skeleton *adt_skeleton_at(size_t index)
{
    uint32_t slabs = atomic_load(&slabs_claimed);
    if (slabs > slab_count)
        slabs = slab_count;
    if (index < slabs)
        return (adt_skeleton *)(share + index * ADT_SKELETON_SLAB_BYTES);
    return &slabless[index - slabs];
}
