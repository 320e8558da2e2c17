/*
 * skeleton: a thread's MPI calls folded into loops as they happen, after
 * ScalaTrace and Pilgrim (issue #25; docs/folding.md).
 *
 * Two parts, both in the process's share of the budget (reserved at
 * start-up), none of it taken by malloc later:
 * - the call signature table: each distinct byte string (a call's
 *   function, calling context and parameters, encoded by mpi-events so
 *   that they repeat) gets a terminal id, in order of first sight;
 * - the grammar: the sequence of terminal ids compressed online by
 *   Sequitur (digram uniqueness, rule utility) with run-length exponents
 *   (Pilgrim's twins rule: x^i x^j -> x^(i+j)), so that a loop of n
 *   iterations is one symbol with exponent n. Amortised constant work per
 *   call; no window.
 * When a part runs out of room, the thread claims a further stretch of the
 * share and the part grows into it (a copy, off the common path); only
 * when the share has none left does the thread's skeleton stop where it
 * is: it still expands exactly to the calls appended before, and says so.
 *
 * The file (skeleton.adts) holds one skeleton per measured thread of each
 * rank; its format is in docs/folding.md and read back by
 * adt_skeleton_file_read.
 *
 * Each call's timing goes to delta histograms keyed by (previous
 * signature, this signature): the computation before the call (the
 * previous outermost call's Leave to this call's Enter) and the call's own
 * duration (timing.c, histogram.c), in the same share.
 *
 * Hot path (no malloc, no lock, no stdio): adt_skeleton_fold. The owning
 * thread only; never from a signal handler.
 */
#ifndef ADAPTRACE_SKELETON_H
#define ADAPTRACE_SKELETON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the grammar (grammar.c) ------------------------------------------- */

/* A symbol's value: a terminal id below ADT_SKELETON_RULE_BIT, else
 * ADT_SKELETON_RULE_BIT | rule index (rule 0 is the whole sequence). */
#define ADT_SKELETON_RULE_BIT 0x80000000u

typedef struct adt_skeleton_grammar adt_skeleton_grammar;

/* The bytes a grammar with these capacities takes (struct included). */
size_t adt_skeleton_grammar_bytes(uint32_t symbols, uint32_t rules, uint32_t digram_slots_log2);
/* Lays a grammar out in memory (of adt_skeleton_grammar_bytes, 8-byte
 * aligned). */
adt_skeleton_grammar *adt_skeleton_grammar_init(void *memory, uint32_t symbols, uint32_t rules,
                                                uint32_t digram_slots_log2);
/* Appends terminal (below ADT_SKELETON_RULE_BIT); false, and nothing
 * changed, when the grammar has no more room (then it stays as it is). */
bool adt_skeleton_grammar_append(adt_skeleton_grammar *grammar, uint32_t terminal);
/* Puts the terminals the fast path holds back (grammar.c) into the rules:
 * before the counts below are read for an export. */
void adt_skeleton_grammar_settle(adt_skeleton_grammar *grammar);
/* Terminals appended so far. */
uint64_t adt_skeleton_grammar_length(const adt_skeleton_grammar *grammar);
/* Symbols and rules now in use (the measure of its size; settled first). */
uint32_t adt_skeleton_grammar_symbols(const adt_skeleton_grammar *grammar);
uint32_t adt_skeleton_grammar_rules(const adt_skeleton_grammar *grammar);
/* Digram table probes done so far (the amortised-work check of the tests). */
uint64_t adt_skeleton_grammar_probes(const adt_skeleton_grammar *grammar);

/* Growth, for each table below as for the grammar (the owning thread,
 * when the table has refused; no malloc, no lock, no stdio):
 * _scaled_bytes: the bytes of the table with every capacity times
 * eighths / 8 (SIZE_MAX past its limits); _grow: the table moved into
 * memory of `bytes` (8-byte aligned, not overlapping it) at the largest
 * capacities that fit, at least 9 eighths, with everything it holds
 * (ids and indices kept); NULL, and nothing done, when not even 9 eighths
 * fit. The old table's memory is no longer used. */
size_t adt_skeleton_grammar_scaled_bytes(const adt_skeleton_grammar *grammar, uint32_t eighths);
adt_skeleton_grammar *adt_skeleton_grammar_grow(const adt_skeleton_grammar *grammar, void *memory, size_t bytes);

/* The grammar read out with rules numbered densely from 0 (the sequence)
 * in order of first reference: rule r's body is symbols
 * [starts[r], starts[r + 1]) of values/exponents. Filled by
 * adt_skeleton_grammar_export into arrays of at least the sizes
 * adt_skeleton_grammar_symbols / _rules (+ 1 for starts) give. */
typedef struct adt_skeleton_rules {
    uint32_t rule_count;
    uint32_t *starts;
    uint32_t *values;
    uint32_t *exponents;
} adt_skeleton_rules;
/* The rules a grammar can hold (the size of export's scratch). */
uint32_t adt_skeleton_grammar_rule_capacity(const adt_skeleton_grammar *grammar);
/* scratch: adt_skeleton_grammar_rule_capacity() uint32_t's (old rule ->
 * new). */
void adt_skeleton_grammar_export(adt_skeleton_grammar *grammar, adt_skeleton_rules *out, uint32_t *scratch);

/* Calls visit(terminal, arg) for every terminal the rules expand to, in
 * order; stops early (returns false) when visit does. Recursion depth is
 * the nesting of the rules. */
typedef bool (*adt_skeleton_visit)(uint32_t terminal, void *arg);
bool adt_skeleton_rules_expand(const adt_skeleton_rules *rules, adt_skeleton_visit visit, void *arg);

/* ---- the call signature table (signatures.c) --------------------------- */

typedef struct adt_skeleton_signatures adt_skeleton_signatures;

size_t adt_skeleton_signatures_bytes(uint32_t entries, uint32_t byte_capacity);
adt_skeleton_signatures *adt_skeleton_signatures_init(void *memory, uint32_t entries, uint32_t byte_capacity);
/* The terminal id of key (a new one for a key not seen before), or
 * UINT32_MAX when the table has no room for a new key. */
uint32_t adt_skeleton_signatures_intern(adt_skeleton_signatures *table, const uint8_t *key, uint32_t length);
uint32_t adt_skeleton_signatures_count(const adt_skeleton_signatures *table);
const uint8_t *adt_skeleton_signatures_key(const adt_skeleton_signatures *table, uint32_t terminal,
                                           uint32_t *length);
/* Growth: as for the grammar (entries and key bytes scaled alike). */
size_t adt_skeleton_signatures_scaled_bytes(const adt_skeleton_signatures *table, uint32_t eighths);
adt_skeleton_signatures *adt_skeleton_signatures_grow(const adt_skeleton_signatures *table, void *memory,
                                                      size_t bytes);

/* ---- delta histograms (histogram.c: any context; timing.c: hot path) --- */

/* Bins of a histogram. Values are placed on a log-linear scale of
 * "positions", four per power of two (a position's width is at most 25 %
 * of its values); bin b holds positions [low + b * 2^width_log2,
 * low + (b + 1) * 2^width_log2), low a multiple of 2^width_log2. The
 * first value centres the bins on it at the finest width; a value outside
 * them widens the bins (each old bin goes into one new one) to the
 * narrowest width that holds it and the values so far: the bins
 * rebalance, their number stays fixed. */
#define ADT_SKELETON_BINS 8u
#define ADT_SKELETON_POSITIONS 256u

/* One histogram of nanosecond deltas, as stored and merged: count, min and
 * max with the ranks that had them, mean and the sum of squared deviations
 * from it (m2: variance = m2 / (count - 1)), and the bins. */
typedef struct adt_skeleton_histogram {
    uint64_t count;
    uint64_t min;
    uint64_t max;
    uint32_t min_rank;
    uint32_t max_rank;
    double mean;
    double m2;
    uint32_t low;        /* the first bin's first position (a multiple of 2^width_log2) */
    uint32_t width_log2; /* positions per bin, log 2 */
    uint64_t bins[ADT_SKELETON_BINS];
} adt_skeleton_histogram;

/* A value's position on the log-linear scale (monotone; 0..251): 0..3
 * are the values 0..3; from 4 on, position 4 (l - 1) + m holds
 * [(4 + m) 2^(l-2), (5 + m) 2^(l-2)) where l = floor(log2 value) and m
 * its next two bits. Inline: the hot path places two values per call.
 * value >> (l - 2) is 4 + m (its top three bits), so the position is
 * 4 (l - 2) + (value >> (l - 2)): no mask, one subtraction fewer
 * (SkeletonHistogram.PositionIsTheLogLinearOneAtEveryBitLength). */
static inline uint32_t adt_skeleton_position(uint64_t value)
{
    /* value | 4 has the same top bit as value from 4 on, and bit 2 below
     * 4, where the shift is then 0 and the position value itself: no
     * branch, no clz of 0. */
    uint32_t below_top_three = 61u - (uint32_t)__builtin_clzll(value | 4);
    return 4u * below_top_three + (uint32_t)(value >> below_top_three);
}
/* The smallest value at a position (position 252 and beyond: UINT64_MAX). */
uint64_t adt_skeleton_position_floor(uint32_t position);
/* Widens the bins until the position is in them, with the values they
 * hold (the hot path's rebalancing when a value falls outside). */
void adt_skeleton_histogram_rebalance(adt_skeleton_histogram *histogram, uint32_t position);
/* Bin b's values: [*floor, *ceiling), clamped to the histogram's min and
 * max + 1. */
void adt_skeleton_histogram_bin_range(const adt_skeleton_histogram *histogram, uint32_t bin, uint64_t *floor,
                                      uint64_t *ceiling);
/* into += from: counts and bins added, min / max with their ranks kept,
 * means and m2 combined (Chan et al.), the bins widened to cover both. */
void adt_skeleton_histogram_merge(adt_skeleton_histogram *into, const adt_skeleton_histogram *from);
/* Variance (m2 / (count - 1)), 0 below two values. */
double adt_skeleton_histogram_variance(const adt_skeleton_histogram *histogram);
/* A value drawn from the bins: uniform01 in [0, 1) picks the bin by its
 * count, uniform01_within the value within it. */
uint64_t adt_skeleton_histogram_draw(const adt_skeleton_histogram *histogram, double uniform01,
                                     double uniform01_within);

/* The timing of one (previous signature, signature) pair. */
#define ADT_SKELETON_NO_PREVIOUS UINT32_MAX /* the thread's first call */
typedef struct adt_skeleton_pair {
    uint32_t previous;                /* a terminal, or ADT_SKELETON_NO_PREVIOUS */
    uint32_t signature;
    adt_skeleton_histogram compute;   /* the previous call's Leave to this call's Enter */
    adt_skeleton_histogram duration;  /* this call's Enter to its Leave */
} adt_skeleton_pair;

/* A thread's table of pairs, in its slab (timing.c). */
typedef struct adt_skeleton_timing adt_skeleton_timing;
size_t adt_skeleton_timing_bytes(uint32_t pairs);
adt_skeleton_timing *adt_skeleton_timing_init(void *memory, uint32_t pairs);
/* Hot path: one call's deltas under (previous, signature); false, and
 * nothing kept, when the table has no room for a new pair. */
bool adt_skeleton_timing_add(adt_skeleton_timing *timing, uint32_t previous, uint32_t signature, uint64_t compute,
                             uint64_t duration);
/* End of run: the pairs as histograms, sorted by (previous, signature),
 * min and max ranks set to rank; out has adt_skeleton_timing_count slots. */
uint32_t adt_skeleton_timing_count(const adt_skeleton_timing *timing);
/* Growth: as for the grammar. */
size_t adt_skeleton_timing_scaled_bytes(const adt_skeleton_timing *timing, uint32_t eighths);
adt_skeleton_timing *adt_skeleton_timing_grow(const adt_skeleton_timing *timing, void *memory, size_t bytes);
/* The same where the table is: its memory, from the table on, extended
 * to `bytes` (the entries stay in place, the hash table moves after
 * them). NULL, and nothing done, when not even 9 eighths fit. */
adt_skeleton_timing *adt_skeleton_timing_grow_in_place(adt_skeleton_timing *timing, size_t bytes);
void adt_skeleton_timing_export(const adt_skeleton_timing *timing, uint32_t rank, adt_skeleton_pair *out);

/* ---- one thread's skeleton and the process's share (thread.c) --------- */

/* Why a thread's skeleton stopped (summary.json "skeleton_stopped"). */
#define ADT_SKELETON_STOPS(X)                                                         \
    /* the share had no slab left for this thread */                                 \
    X(NO_SLAB, "no_slab", "threads found no room left in the skeleton's share")      \
    /* its grammar ran out of symbols, rules or digram slots, and the share had no  \
     * room left to grow it */                                                        \
    X(GRAMMAR_FULL, "grammar_full", "threads' grammars were full")                     \
    /* its signature table ran out of entries or bytes, and the share had no room   \
     * left to grow it */                                                             \
    X(SIGNATURES_FULL, "signatures_full", "threads' call signature tables were full") \
    /* a call's encoding was longer than a signature may be, or the thread's tables  \
     * of requests, communicators or contexts were full (mpi-events) */               \
    X(NOT_ENCODABLE, "call_not_encodable", "threads met a call they could not encode")

#define ADT_SKELETON_STOP_ENUM(cause, key, words) ADT_SKELETON_STOP_##cause,
typedef enum adt_skeleton_stop {
    ADT_SKELETON_RUNNING = -1,
    ADT_SKELETON_STOPS(ADT_SKELETON_STOP_ENUM) ADT_SKELETON_STOP_CAUSES
} adt_skeleton_stop;
#undef ADT_SKELETON_STOP_ENUM

extern const char *const adt_skeleton_stop_keys[ADT_SKELETON_STOP_CAUSES];
extern const char *const adt_skeleton_stop_words[ADT_SKELETON_STOP_CAUSES];

/* The longest encoded call (signature key). */
#define ADT_SKELETON_KEY_MAX 1024u

/* A thread's skeleton: its signature table and grammar, plus room the
 * encoder (mpi-events) lays out for its own per-thread tables. */
typedef struct adt_skeleton {
    adt_skeleton_signatures *signatures;
    adt_skeleton_grammar *grammar;
    void *encoder_memory;          /* ADT_SKELETON_ENCODER_BYTES */
    uint64_t thread_index;         /* the location's thread index */
    uint64_t calls;                /* calls folded */
    adt_skeleton_stop stop;        /* ADT_SKELETON_RUNNING while folding */
    adt_skeleton_timing *timing;
    uint64_t untimed;              /* calls folded whose pair found no room in the timing table
                                    * (nor in the share to grow it) */
    uint32_t previous;             /* the last call's terminal (ADT_SKELETON_NO_PREVIOUS: none yet) */
    uint64_t previous_leave;       /* its Leave time */
    uint64_t first_leave;          /* the first call's Leave time */
    uint64_t last_enter;           /* the last call's Enter time */
} adt_skeleton;

#define ADT_SKELETON_ENCODER_BYTES (160u * 1024u)

/* The share of the process's budget: slabs of ADT_SKELETON_SLAB_BYTES,
 * handed out lock-free: one to each thread at its first MPI call, and
 * further ones to a thread whose signature table, grammar or timing table
 * is full, for a larger copy of that table (twice its size, or what is
 * left). */
#define ADT_SKELETON_SLAB_BYTES (1024u * 1024u)

/* Start-up: reserves (mmap, touched) share_bytes rounded down to whole
 * slabs, and a table of the skeletons claimed (malloc); 0 slabs is
 * allowed (every thread then stops at once). Returns 0, or -1 with errno
 * set. */
int adt_skeleton_share_create(uint64_t share_bytes);
void adt_skeleton_share_destroy(void);
uint64_t adt_skeleton_share_bytes(void);
/* The bytes of it claimed so far (whole slabs: threads' first slabs and
 * their tables' growth). */
uint64_t adt_skeleton_share_claimed_bytes(void);

/* Hot path, the thread's first outermost MPI call: a skeleton of its own
 * in the next free slab; NULL when the share was never created. A share
 * without a slab left gives a skeleton already stopped (NO_SLAB), kept in
 * a small reserve table, so that the cause is counted. */
adt_skeleton *adt_skeleton_claim(uint64_t thread_index);

/* Hot path: one call, as its encoded key, with its Enter and Leave times
 * (adt_clock_now ticks: no conversion on the call's path; the file says
 * the clock's rate). A full table grows into further slabs of the share;
 * stops the skeleton (cause set) when the signatures or the grammar are
 * full and the share has no room left for them; does nothing once
 * stopped. A full timing table that cannot grow only counts the call as
 * untimed. */
void adt_skeleton_fold(adt_skeleton *skeleton, const uint8_t *key, uint32_t length, uint64_t enter,
                       uint64_t leave);
void adt_skeleton_stop_with(adt_skeleton *skeleton, adt_skeleton_stop cause);

/* End of run, after the threads' calls are over: the skeletons claimed. */
size_t adt_skeleton_count(void);
adt_skeleton *adt_skeleton_at(size_t index);

/* ---- an image of the share (image_save.c, image_read.c) --------------- */

/* What a save in a signal handler can keep of the skeletons: the
 * encoder allocates, a handler may not, so the handler writes the share's
 * memory as it is (its claimed slabs, where every table lives) and each
 * skeleton's header, and adaptrace-recover encodes the rank's part from
 * that image later, with the same encoder (adt_skeleton_image_encode).
 *
 * The image: a head (magic "ADTSKIM", version, the skeletons' count and
 * header size, the share's address in the saving process and the bytes
 * of it claimed), then each skeleton's header (adt_skeleton, by value, in
 * the order adt_skeleton_at gives), then the claimed slabs, then the
 * FNV-1a 64 hash of all that (u64). Host byte order, for the same
 * adaptrace build. The tables' pointers are the
 * saving process's: the reader lays every table out again from its
 * capacities at its place in the slabs.
 *
 * Whole only when no thread folds while it is taken: the caller first
 * stops every thread's folding and waits for the folds under way
 * (mpi-events, adt_mpi_fold_close). */
typedef struct adt_skeleton_image_cursor {
    uint64_t offset;          /* bytes of the image given so far */
    uint64_t total_bytes;     /* the image's bytes */
    uint64_t share_address;
    uint64_t region_bytes;    /* the slabs claimed when it began */
    uint32_t skeleton_count;
    uint64_t hash;            /* of the bytes given so far */
} adt_skeleton_image_cursor;

/* Signal handler (async-signal-safe: atomic loads, memcpy, no call that
 * could take a lock): begins an image of the share as it is now. */
void adt_skeleton_image_begin(adt_skeleton_image_cursor *cursor);
/* Signal handler: the next bytes of the image into block (at most
 * block_bytes); 0 at its end. Copied out block by block, so that the
 * caller hashes exactly the bytes it writes. */
size_t adt_skeleton_image_next(adt_skeleton_image_cursor *cursor, void *block, size_t block_bytes);

/* Normal context (adaptrace-recover): the part adt_skeleton_rank_encode
 * would have made of the skeletons the image holds (malloc'd, *bytes
 * set), or NULL with one line in error: not an image of this build, its
 * lengths do not add up, its hash does not match, a table that does not
 * fit its slabs, out of memory. Behind the hash, the tables' places and
 * counts are checked, not the grammar's inner links (symbol and rule
 * indices): they are what a damaged image that its hash missed could
 * still break. */
uint8_t *adt_skeleton_image_encode(const uint8_t *image, size_t image_bytes, uint32_t rank, size_t *bytes,
                                   char *error, size_t error_size);

/* ---- the file (file_write.c, file_read.c) ------------------------------ */

#define ADT_SKELETON_FILE_NAME "skeleton.adts"
#define ADT_SKELETON_MAGIC "ADTSKEL"
/* A file with every rank's skeleton is version 6; one that names ranks
 * whose skeleton is missing is version 7 (docs/folding.md). The reader
 * reads both. (4 and 5 were the same before a receive's key held the
 * source and tag it asked for: refused.) */
#define ADT_SKELETON_VERSION 6u
#define ADT_SKELETON_VERSION_PARTIAL 7u
/* The longest cause of a missing rank the writer keeps, its NUL included. */
#define ADT_SKELETON_CAUSE_MAX 32u
/* The most ranks a file may name (a bound for the reader's tables). */
#define ADT_SKELETON_RANKS_MAX (1u << 26)

/* This process's part of the file: the skeletons of its threads, as
 * bytes (malloc'd; *bytes set): u64 structure bytes, the structure, the
 * timing (rank: the min and max ranks of its histograms). Returns NULL
 * when out of memory. */
uint8_t *adt_skeleton_rank_encode(uint32_t rank, size_t *bytes);
/* Writes the file from the ranks' parts (parts[r] is rank r's; merged one
 * rank after another, as adt_skeleton_merge_add does), the
 * names of the functions the first field of every key indexes and the
 * rate of the clock the timing was taken with (ticks per second, the
 * same on every rank: adt_clock_resolution). Ranks whose structures
 * differ at most in their calls' parameters (the same threads, grammars,
 * functions and calling contexts; the fields after those two of a key)
 * are one class, stored once with its ranks as strided ranges: the
 * structure of its first rank, each parameter that differs as its values
 * with their ranks, and its ranks' timing merged. A rank whose part is
 * NULL has no skeleton: the file (then version 7) names it missing, with
 * missing_causes[r] (a word, as summary.json's ranks_by_cause; NULL
 * missing_causes or "": unknown). 0, or -1 with errno set (EINVAL: a part
 * that does not parse, or no rank with a part). */
int adt_skeleton_file_write(const char *path, const char *const *function_names, uint32_t function_count,
                            const uint8_t *const *parts, const size_t *part_bytes, uint32_t rank_count,
                            uint64_t ticks_per_second, const char *const *missing_causes);

/* Ranks' skeletons merged (end of run), pairwise along a tree of the
 * ranks or one rank after another: classes of ranks as
 * adt_skeleton_file_write makes them. Merging subtrees in rank order (a
 * rank's own part, then its children's subtrees in increasing order, as
 * the binomial tree of the end of the run has them) gives the same
 * classes, parameters and timing as merging every rank at once. */
typedef struct adt_skeleton_merge adt_skeleton_merge;
/* One rank's part (adt_skeleton_rank_encode) as a merge; NULL when it
 * does not parse or memory runs out. */
adt_skeleton_merge *adt_skeleton_merge_of_part(const uint8_t *part, size_t bytes, uint32_t rank);
/* Ranks first .. first + count - 1 without a skeleton, as a merge: the
 * file names them missing, for cause (cut to ADT_SKELETON_CAUSE_MAX - 1
 * bytes; "": unknown). NULL when out of memory. */
adt_skeleton_merge *adt_skeleton_merge_of_missing(uint32_t first, uint32_t count, const char *cause);
/* How many ranks a merge names missing. */
uint32_t adt_skeleton_merge_missing_count(const adt_skeleton_merge *merge);
/* into += from, from's ranks all above into's; from is freed. false (into
 * then unusable: free it) when they are not so or memory runs out. */
bool adt_skeleton_merge_add(adt_skeleton_merge *into, adt_skeleton_merge *from);
/* A merge as bytes for another rank (malloc'd; *bytes set), and back;
 * NULL when out of memory or for bytes that do not parse. */
uint8_t *adt_skeleton_merge_encode(const adt_skeleton_merge *merge, size_t *bytes);
adt_skeleton_merge *adt_skeleton_merge_decode(const uint8_t *bytes, size_t size);
/* Writes skeleton.adts from a merge of ranks 0 .. rank_count - 1, each
 * either in a class or missing, one class at least (the rest as
 * adt_skeleton_file_write). 0, or -1 with errno set. */
int adt_skeleton_merge_write(const adt_skeleton_merge *merge, const char *path, const char *const *function_names,
                             uint32_t function_count, uint32_t rank_count, uint64_t ticks_per_second);
void adt_skeleton_merge_free(adt_skeleton_merge *merge);

/* The file read back. Everything points into one allocation. */
typedef struct adt_skeleton_thread_view {
    uint64_t thread_index;
    uint64_t calls;
    int32_t stop;                   /* adt_skeleton_stop */
    uint32_t signature_count;
    const uint8_t *const *keys;     /* signature_count keys */
    const uint32_t *key_lengths;
    adt_skeleton_rules rules;
    /* Timing, merged over the class's ranks. */
    uint64_t untimed;               /* calls without a pair (a full table) */
    uint64_t span;                  /* the longest first call's Leave to last call's Enter, ticks */
    uint32_t span_rank;             /* the rank that had it */
    uint32_t pair_count;
    const adt_skeleton_pair *pairs; /* sorted by (previous, signature) */
} adt_skeleton_thread_view;

/* A strided range of ranks: first, first + stride, ... (count of them);
 * class_index: the class they are in. */
typedef struct adt_skeleton_rank_range {
    uint32_t first;
    uint32_t count;
    uint32_t stride;
    uint32_t class_index;
} adt_skeleton_rank_range;

/* One value of a parameter that differs by rank, and the ranks with it. */
typedef struct adt_skeleton_parameter_value {
    uint64_t value;
    uint32_t range_count;
    const adt_skeleton_rank_range *ranges;
} adt_skeleton_parameter_value;

/* A field of a class's key that differs by rank: field `field` (the
 * varint index; 2 and beyond: never the function or the calling context)
 * of signature `signature` of the class's thread `thread`. */
typedef struct adt_skeleton_parameter {
    uint32_t thread;
    uint32_t signature;
    uint32_t field;
    uint32_t value_count;  /* 2 or more, in order of their first rank */
    const adt_skeleton_parameter_value *values;
} adt_skeleton_parameter;

/* Ranks whose skeletons differ at most in their parameters share one
 * class. Its threads' keys are its first rank's; each rank's own keys are
 * in its rank view. */
typedef struct adt_skeleton_class_view {
    uint32_t thread_count;
    adt_skeleton_thread_view *threads;
    uint32_t rank_count;            /* ranks that have it */
    uint32_t parameter_count;       /* sorted by (thread, signature, field) */
    const adt_skeleton_parameter *parameters;
    uint32_t variant_count;         /* distinct combinations of the parameters' values its ranks have */
} adt_skeleton_class_view;

/* The class_index of a rank whose skeleton the file does not hold. */
#define ADT_SKELETON_NO_CLASS UINT32_MAX

typedef struct adt_skeleton_rank_view {
    uint32_t rank;
    uint32_t class_index;           /* ADT_SKELETON_NO_CLASS: missing */
    uint32_t thread_count;          /* 0 when missing */
    /* Its class's threads with this rank's own keys (its parameters'
     * values in place); the rules and timing are the class's. */
    const adt_skeleton_thread_view *threads;
    const char *missing_cause;      /* why it is missing ("" unknown); NULL when it is not */
} adt_skeleton_rank_view;

/* Ranks whose skeleton is missing (version 7): first, first + stride, ...
 * (count of them), all for one cause. */
typedef struct adt_skeleton_missing_range {
    uint32_t first;
    uint32_t count;
    uint32_t stride;
    const char *cause;              /* a word, as summary.json's ranks_by_cause; "" unknown */
} adt_skeleton_missing_range;

typedef struct adt_skeleton_file {
    uint32_t version;
    uint64_t ticks_per_second;      /* the clock of every span and histogram value */
    uint32_t function_count;
    const char *const *function_names;
    uint32_t class_count;
    adt_skeleton_class_view *classes;
    uint32_t range_count;
    adt_skeleton_rank_range *ranges;
    uint32_t rank_count;
    adt_skeleton_rank_view *ranks;  /* in rank order, the missing ones included */
    uint32_t missing_count;         /* ranks without a skeleton (0 in version 6) */
    uint32_t missing_range_count;
    const adt_skeleton_missing_range *missing_ranges;
    void *storage;
} adt_skeleton_file;

/* Reads and checks the whole file (framing, bounds, checksum, that every
 * rule is referenced acyclically and every terminal has a key, that
 * expansion gives `calls` terminals, and that each parameter names a field
 * of a key and gives every rank of its class one value; that the classes
 * and the missing ranks name every rank once). NULL with one line in
 * error: not a skeleton file, another version, cut short, corrupt. */
adt_skeleton_file *adt_skeleton_file_read(const char *path, char *error, size_t error_size);
/* The same from bytes in memory (tests). */
adt_skeleton_file *adt_skeleton_file_parse(const uint8_t *bytes, size_t size, char *error, size_t error_size);
void adt_skeleton_file_free(adt_skeleton_file *file);

/* The pair (previous, signature) of a thread, or NULL. */
const adt_skeleton_pair *adt_skeleton_thread_pair(const adt_skeleton_thread_view *thread, uint32_t previous,
                                                  uint32_t signature);

/* The key's fields: the encoded keys are LEB128 varints (signed ones
 * zigzag); reads one at *offset, false at the end or on a bad varint. */
bool adt_skeleton_key_next(const uint8_t *key, uint32_t length, uint32_t *offset, uint64_t *value);

#ifdef __cplusplus
}
#endif

#endif
