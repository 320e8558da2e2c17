/*
 * file_write.c: a rank's skeletons as bytes, and skeleton.adts written
 * from the ranks' parts (end of run: malloc and stdio are fine here). The
 * format is docs/folding.md's "skeleton.adts"; file_read.c reads it. A
 * rank's part is its structure followed by its timing. Ranks whose
 * structures differ at most in the parameters of their calls (the same
 * threads, grammars, functions and calling contexts) are one class: the
 * structure of its first rank, each parameter that differs by rank as its
 * values with their ranks, and the timing merged over its ranks. The
 * classes are built by merges (adt_skeleton_merge_add): of every rank
 * one after another (adt_skeleton_file_write), or pairwise up the tree of
 * the ranks, their merges passed between ranks as bytes
 * (mpi-events/fold_write.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"
#include "skeleton.h"
#include "skeleton_file.h"

/* A growing byte string; on allocation failure it says so once. */
typedef struct bytes_out {
    uint8_t *data;
    size_t size;
    size_t capacity;
    bool failed;
} bytes_out;

static void put(bytes_out *out, const void *data, size_t size)
{
    if (out->failed)
        return;
    if (out->size + size > out->capacity) {
        size_t capacity = out->capacity ? out->capacity : 4096;
        while (capacity < out->size + size)
            capacity *= 2;
        uint8_t *grown = realloc(out->data, capacity);
        if (!grown) {
            out->failed = true;
            return;
        }
        out->data = grown;
        out->capacity = capacity;
    }
    memcpy(out->data + out->size, data, size);
    out->size += size;
}

static void put_u32(bytes_out *out, uint32_t value)
{
    uint8_t le[4] = { (uint8_t)value, (uint8_t)(value >> 8), (uint8_t)(value >> 16), (uint8_t)(value >> 24) };
    put(out, le, sizeof le);
}

static void put_u64(bytes_out *out, uint64_t value)
{
    put_u32(out, (uint32_t)value);
    put_u32(out, (uint32_t)(value >> 32));
}

static void put_double(bytes_out *out, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    put_u64(out, bits);
}

/* A LEB128 varint, as the keys' fields (adt_skeleton_key_next reads it). */
static void put_varint(bytes_out *out, uint64_t value)
{
    uint8_t bytes[10];
    size_t n = 0;
    for (; value >= 0x80; value >>= 7)
        bytes[n++] = (uint8_t)(value | 0x80);
    bytes[n++] = (uint8_t)value;
    put(out, bytes, n);
}

/* Counts, times and ranks as varints (most are small), the mean and m2
 * as f64, and only the bins that hold values, after a mask of them:
 * ~30 bytes where the fixed layout took 120. */
static void put_histogram(bytes_out *out, const adt_skeleton_histogram *h)
{
    put_varint(out, h->count);
    put_varint(out, h->min);
    put_varint(out, h->max - h->min);
    put_varint(out, h->min_rank);
    put_varint(out, h->max_rank);
    put_double(out, h->mean);
    put_double(out, h->m2);
    put_varint(out, h->low);
    put_varint(out, h->width_log2);
    uint8_t held = 0;
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b)
        held |= (uint8_t)((h->bins[b] != 0) << b);
    put(out, &held, 1);
    for (uint32_t b = 0; b < ADT_SKELETON_BINS; ++b)
        if (h->bins[b] != 0)
            put_varint(out, h->bins[b]);
}

static void put_timing_part(bytes_out *out, const adt_skeleton_timing_part *part)
{
    put_varint(out, part->untimed);
    put_varint(out, part->span);
    put_varint(out, part->span_rank);
    put_varint(out, part->pair_count);
    for (uint32_t p = 0; p < part->pair_count; ++p) {
        /* The first call's pair has no previous (2^32 - 1): 0 here. */
        put_varint(out, (uint32_t)(part->pairs[p].previous + 1u));
        put_varint(out, part->pairs[p].signature);
        put_histogram(out, &part->pairs[p].compute);
        put_histogram(out, &part->pairs[p].duration);
    }
}

/* A thread's timing: its pairs, the calls without one, and its span (the
 * first call's Leave to the last call's Enter). */
static void put_thread_timing(bytes_out *out, const adt_skeleton *skeleton, uint32_t rank)
{
    adt_skeleton_timing_part part = { skeleton->untimed, 0, rank, 0, NULL };
    if (skeleton->calls >= 2 && skeleton->last_enter > skeleton->first_leave)
        part.span = skeleton->last_enter - skeleton->first_leave;
    if (skeleton->timing) {
        part.pair_count = adt_skeleton_timing_count(skeleton->timing);
        part.pairs = malloc(sizeof *part.pairs * (part.pair_count ? part.pair_count : 1));
        if (!part.pairs) {
            out->failed = true;
            return;
        }
        adt_skeleton_timing_export(skeleton->timing, rank, part.pairs);
    }
    put_timing_part(out, &part);
    free(part.pairs);
}

static void put_thread(bytes_out *out, const adt_skeleton *skeleton)
{
    put_u64(out, skeleton->thread_index);
    put_u64(out, skeleton->calls);
    put_u32(out, (uint32_t)(int32_t)skeleton->stop);
    if (!skeleton->grammar) {
        put_u32(out, 0);
        put_u32(out, 0);
        put_u32(out, 0);
        return;
    }
    uint32_t signatures = adt_skeleton_signatures_count(skeleton->signatures);
    put_u32(out, signatures);
    for (uint32_t t = 0; t < signatures; ++t) {
        uint32_t length = 0;
        const uint8_t *key = adt_skeleton_signatures_key(skeleton->signatures, t, &length);
        put_u32(out, length);
        put(out, key, length);
    }
    adt_skeleton_grammar_settle(skeleton->grammar);
    uint32_t symbols = adt_skeleton_grammar_symbols(skeleton->grammar);
    uint32_t rules = adt_skeleton_grammar_rules(skeleton->grammar);
    /* The exported arrays and the renumbering scratch. */
    size_t scratch = adt_skeleton_grammar_rule_capacity(skeleton->grammar);
    uint32_t *memory = malloc(sizeof(uint32_t) * ((size_t)rules + 1 + 2 * (size_t)symbols + scratch));
    if (!memory) {
        out->failed = true;
        return;
    }
    adt_skeleton_rules exported = { 0, memory, memory + rules + 1, memory + rules + 1 + symbols };
    adt_skeleton_grammar_export(skeleton->grammar, &exported, memory + rules + 1 + 2 * (size_t)symbols);
    put_u32(out, exported.rule_count);
    put_u32(out, exported.starts[exported.rule_count]);
    for (uint32_t r = 0; r < exported.rule_count; ++r)
        put_u32(out, exported.starts[r + 1] - exported.starts[r]);
    for (uint32_t i = 0; i < exported.starts[exported.rule_count]; ++i) {
        put_u32(out, exported.values[i]);
        put_u32(out, exported.exponents[i]);
    }
    free(memory);
}

uint8_t *adt_skeleton_threads_encode(adt_skeleton *const *threads, size_t count, uint32_t rank, size_t *bytes)
{
    bytes_out structure = { 0 }, out = { 0 };
    put_u32(&structure, (uint32_t)count);
    for (size_t i = 0; i < count; ++i)
        put_thread(&structure, threads[i]);
    put_u64(&out, structure.size);
    if (!structure.failed)
        put(&out, structure.data, structure.size);
    free(structure.data);
    for (size_t i = 0; i < count; ++i)
        put_thread_timing(&out, threads[i], rank);
    if (structure.failed || out.failed) {
        free(out.data);
        return NULL;
    }
    *bytes = out.size;
    return out.data;
}

uint8_t *adt_skeleton_rank_encode(uint32_t rank, size_t *bytes)
{
    size_t count = adt_skeleton_count();
    adt_skeleton **threads = malloc(sizeof *threads * (count ? count : 1));
    if (!threads)
        return NULL;
    for (size_t i = 0; i < count; ++i)
        threads[i] = adt_skeleton_at(i);
    uint8_t *part = adt_skeleton_threads_encode(threads, count, rank, bytes);
    free(threads);
    return part;
}

uint64_t adt_skeleton_checksum(const uint8_t *data, size_t size)
{
    return adt_skeleton_fnv_more(ADT_SKELETON_FNV_START, data, size);
}

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A key in a rank's structure, and how many varint fields it reads as
 * (KEY_OPAQUE: it does not read as varints; it then matches only a key
 * equal to it byte for byte). */
#define KEY_OPAQUE UINT32_MAX /* adt_skeleton_key_fields's "not varints" */
typedef struct key_ref {
    const uint8_t *bytes;
    uint32_t length;
    uint32_t fields;
} key_ref;

/* A thread of a rank's structure: its header (thread index, calls, stop
 * and signature count: 24 bytes), its keys and its grammar's bytes. */
typedef struct thread_shape {
    const uint8_t *header;
    uint32_t signature_count;
    uint32_t first_key; /* in the rank's keys */
    const uint8_t *grammar;
    size_t grammar_bytes;
} thread_shape;

/* A structure (a rank's, or a class's first rank's) located thread by
 * thread. */
typedef struct structure_shape {
    const uint8_t *structure;
    size_t structure_bytes;
    uint32_t thread_count;
    thread_shape *threads; /* malloc'd */
    key_ref *keys;         /* malloc'd */
    uint64_t shape_hash;   /* of what ranks of one class share (mergeable) */
} structure_shape;

uint32_t adt_skeleton_key_fields(const uint8_t *key, uint32_t length)
{
    uint32_t offset = 0, fields = 0;
    uint64_t value;
    while (adt_skeleton_key_next(key, length, &offset, &value))
        fields++;
    return offset == length ? fields : KEY_OPAQUE;
}

/* The varint at field index `field` of a key that reads as varints. */
static uint64_t key_field(const key_ref *key, uint32_t field)
{
    uint32_t offset = 0;
    uint64_t value = 0;
    for (uint32_t f = 0; f <= field; ++f)
        adt_skeleton_key_next(key->bytes, key->length, &offset, &value);
    return value;
}

/* What keys of one class have in common: their number of fields and
 * their first two, the function and the calling context (only the
 * parameters after them may differ by rank), or all their bytes. */
static uint64_t key_shape_hash(uint64_t hash, const key_ref *key)
{
    if (key->fields == KEY_OPAQUE || key->fields < 2)
        return adt_skeleton_fnv_more(hash, key->bytes, key->length);
    uint64_t common[3] = { key->fields, key_field(key, 0), key_field(key, 1) };
    return adt_skeleton_fnv_more(hash, common, sizeof common);
}

static bool keys_mergeable(const key_ref *a, const key_ref *b)
{
    if (a->length == b->length && memcmp(a->bytes, b->bytes, a->length) == 0)
        return true;
    return a->fields == b->fields && a->fields != KEY_OPAQUE && a->fields >= 2 &&
           key_field(a, 0) == key_field(b, 0) && key_field(a, 1) == key_field(b, 1);
}

/* Locates the threads of a structure (docs/folding.md): 0, EINVAL when
 * it does not parse, ENOMEM. */
static int locate_structure(const uint8_t *structure, size_t bytes, structure_shape *out)
{
    memset(out, 0, sizeof *out);
    if (bytes < 4)
        return EINVAL;
    out->structure = structure;
    out->structure_bytes = bytes;
    out->thread_count = le32(structure);
    const uint8_t *at = structure + 4, *end = structure + bytes;
    if (out->thread_count > (size_t)(end - at) / 32)
        return EINVAL;
    /* Every key takes at least its 4-byte length. */
    out->threads = malloc(sizeof *out->threads * ((size_t)out->thread_count + 1));
    out->keys = malloc(sizeof *out->keys * ((size_t)(end - at) / 4 + 1));
    if (!out->threads || !out->keys)
        return ENOMEM;
    uint32_t keys = 0;
    uint64_t hash = adt_skeleton_fnv_more(ADT_SKELETON_FNV_START, structure, 4);
    for (uint32_t t = 0; t < out->thread_count; ++t) {
        thread_shape *thread = &out->threads[t];
        if (end - at < 24)
            return EINVAL;
        thread->header = at;
        thread->signature_count = le32(at + 20);
        thread->first_key = keys;
        hash = adt_skeleton_fnv_more(hash, at, 24);
        at += 24;
        for (uint32_t s = 0; s < thread->signature_count; ++s) {
            if (end - at < 4 || le32(at) > (size_t)(end - at) - 4)
                return EINVAL;
            key_ref *key = &out->keys[keys++];
            key->length = le32(at);
            key->bytes = at + 4;
            key->fields = adt_skeleton_key_fields(key->bytes, key->length);
            hash = key_shape_hash(hash, key);
            at += 4 + key->length;
        }
        if (end - at < 8)
            return EINVAL;
        uint64_t rules = le32(at), symbols = le32(at + 4);
        uint64_t grammar_bytes = 8 + 4 * rules + 8 * symbols;
        if (grammar_bytes > (size_t)(end - at))
            return EINVAL;
        thread->grammar = at;
        thread->grammar_bytes = (size_t)grammar_bytes;
        hash = adt_skeleton_fnv_more(hash, at, thread->grammar_bytes);
        at += grammar_bytes;
    }
    out->shape_hash = hash;
    return at == end ? 0 : EINVAL;
}

/* Whether two structures can be one class: the same threads with the
 * same grammars and keys that differ at most in their parameters. */
static bool shapes_mergeable(const structure_shape *a, const structure_shape *b)
{
    if (a->shape_hash != b->shape_hash || a->thread_count != b->thread_count)
        return false;
    for (uint32_t t = 0; t < a->thread_count; ++t) {
        const thread_shape *x = &a->threads[t], *y = &b->threads[t];
        if (memcmp(x->header, y->header, 24) != 0 || x->grammar_bytes != y->grammar_bytes ||
            memcmp(x->grammar, y->grammar, x->grammar_bytes) != 0)
            return false;
        for (uint32_t s = 0; s < x->signature_count; ++s)
            if (!keys_mergeable(&a->keys[x->first_key + s], &b->keys[y->first_key + s]))
                return false;
    }
    return true;
}

static const key_ref *shape_key(const structure_shape *shape, uint32_t thread, uint32_t signature)
{
    return &shape->keys[shape->threads[thread].first_key + signature];
}

/* The strided range that starts at ranks[at] of a rising list: it takes
 * the next ranks while they are one stride apart (the first two set the
 * stride). Returns how many it takes. */
static uint32_t strided_run(const uint32_t *ranks, uint32_t count, uint32_t at, uint32_t *stride)
{
    *stride = 1;
    if (at + 1 >= count)
        return 1;
    *stride = ranks[at + 1] - ranks[at];
    uint32_t taken = 2;
    while (at + taken < count && ranks[at + taken] - ranks[at + taken - 1] == *stride)
        taken++;
    return taken;
}

/* A class's ranks (or those of one value: a subset of them) as strided
 * ranges of varints. */
static void put_varint_ranges(bytes_out *out, const uint32_t *ranks, uint32_t count)
{
    uint32_t range_count = 0;
    for (uint32_t at = 0, stride; at < count; at += strided_run(ranks, count, at, &stride))
        range_count++;
    put_varint(out, range_count);
    for (uint32_t at = 0, stride, run; at < count; at += run) {
        run = strided_run(ranks, count, at, &stride);
        put_varint(out, ranks[at]);
        put_varint(out, run);
        put_varint(out, stride);
    }
}

/* A member's value, sorted by value and then member (so by rank). */
typedef struct member_value {
    uint64_t value;
    uint32_t member;
} member_value;

static int by_value(const void *a, const void *b)
{
    const member_value *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->member > y->member) - (x->member < y->member);
}

/* A run of equal values in the sorted list, by its first member. */
typedef struct value_group {
    uint32_t first_member;
    uint32_t start;
    uint32_t count;
} value_group;

static int by_first_member(const void *a, const void *b)
{
    const value_group *x = a, *y = b;
    return (x->first_member > y->first_member) - (x->first_member < y->first_member);
}

/* One parameter of a class (thread t, signature s, field f) that differs
 * by rank: its values in order of their first rank, each with its ranks
 * as strided ranges. members: the class's ranks, rising; sorted: each
 * member's value (sorted here); groups and ranks: room for count each.
 * O(count log count). */
static void put_parameter(bytes_out *out, uint32_t t, uint32_t s, uint32_t f, const uint32_t *members,
                          member_value *sorted, uint32_t count, value_group *groups, uint32_t *ranks)
{
    qsort(sorted, count, sizeof *sorted, by_value);
    uint32_t group_count = 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (i == 0 || sorted[i].value != sorted[i - 1].value)
            groups[group_count++] = (value_group){ sorted[i].member, i, 0 };
        groups[group_count - 1].count++;
    }
    qsort(groups, group_count, sizeof *groups, by_first_member);
    put_varint(out, t);
    put_varint(out, s);
    put_varint(out, f);
    put_varint(out, group_count);
    for (uint32_t g = 0; g < group_count; ++g) {
        uint32_t taking = groups[g].count;
        for (uint32_t i = 0; i < taking; ++i)
            ranks[i] = members[sorted[groups[g].start + i].member];
        put_varint(out, sorted[groups[g].start].value);
        put_varint_ranges(out, ranks, taking);
    }
}

/* into's pairs and from's, both sorted by key, merged into one sorted
 * list (histograms of equal keys merged); false when out of memory. */
static bool merge_thread_timing(adt_skeleton_timing_part *into, const adt_skeleton_timing_part *from)
{
    adt_skeleton_pair *merged = malloc(sizeof *merged * ((size_t)into->pair_count + from->pair_count + 1));
    if (!merged)
        return false;
    uint32_t i = 0, j = 0, n = 0;
    while (i < into->pair_count || j < from->pair_count) {
        const adt_skeleton_pair *a = i < into->pair_count ? &into->pairs[i] : NULL;
        const adt_skeleton_pair *b = j < from->pair_count ? &from->pairs[j] : NULL;
        int order = !a ? 1 : !b ? -1 : a->previous != b->previous ? (a->previous < b->previous ? -1 : 1)
                                                                  : (a->signature > b->signature) - (a->signature < b->signature);
        if (order < 0) {
            merged[n++] = *a, i++;
        } else if (order > 0) {
            merged[n++] = *b, j++;
        } else {
            merged[n] = *a;
            adt_skeleton_histogram_merge(&merged[n].compute, &b->compute);
            adt_skeleton_histogram_merge(&merged[n++].duration, &b->duration);
            i++, j++;
        }
    }
    free(into->pairs);
    into->pairs = merged;
    into->pair_count = n;
    into->untimed += from->untimed;
    if (from->span > into->span) {
        into->span = from->span;
        into->span_rank = from->span_rank;
    }
    return true;
}

/* ---- merges of ranks' skeletons ----------------------------------------- */

/* A field of a class's keys that differs by rank: one value per rank of
 * the class, in the order of its ranks. */
typedef struct merge_parameter {
    uint32_t thread;
    uint32_t signature;
    uint32_t field;
    uint64_t *values; /* room for the class's rank_capacity */
} merge_parameter;

/* A class of a merge: the structure of its first (lowest) rank, its
 * ranks rising, its timing merged over them, and its parameters sorted by
 * (thread, signature, field). */
typedef struct merge_class {
    uint8_t *structure; /* malloc'd; shape points into it */
    structure_shape shape;
    adt_skeleton_timing_part *timing; /* shape.thread_count */
    uint32_t rank_count;
    uint32_t rank_capacity;
    uint32_t *ranks;
    uint32_t parameter_count;
    merge_parameter *parameters;
} merge_class;

/* A rank without a skeleton, and why ("" unknown). */
typedef struct missing_rank {
    uint32_t rank;
    char cause[ADT_SKELETON_CAUSE_MAX];
} missing_rank;

struct adt_skeleton_merge {
    uint32_t class_count;
    uint32_t class_capacity;
    merge_class *classes;
    uint32_t missing_count;
    uint32_t missing_capacity;
    missing_rank *missing;
};

static void class_free(merge_class *c)
{
    free(c->structure);
    free(c->shape.threads);
    free(c->shape.keys);
    if (c->timing)
        adt_skeleton_timing_parts_free(c->timing, c->shape.thread_count);
    free(c->timing);
    free(c->ranks);
    for (uint32_t p = 0; p < c->parameter_count; ++p)
        free(c->parameters[p].values);
    free(c->parameters);
}

void adt_skeleton_merge_free(adt_skeleton_merge *merge)
{
    if (!merge)
        return;
    for (uint32_t k = 0; k < merge->class_count; ++k)
        class_free(&merge->classes[k]);
    free(merge->classes);
    free(merge->missing);
    free(merge);
}

/* A class from its structure's bytes (copied) and the timing at *at
 * (advanced); false when it does not parse or memory runs out. */
static bool class_init(merge_class *c, const uint8_t *structure, size_t structure_bytes, const uint8_t **at,
                       const uint8_t *end)
{
    memset(c, 0, sizeof *c);
    c->structure = malloc(structure_bytes ? structure_bytes : 1);
    if (!c->structure)
        return false;
    memcpy(c->structure, structure, structure_bytes);
    if (locate_structure(c->structure, structure_bytes, &c->shape) != 0)
        return false;
    uint32_t threads = c->shape.thread_count;
    c->timing = calloc(threads ? threads : 1, sizeof *c->timing);
    char error[160];
    return c->timing && adt_skeleton_timing_decode(at, end, threads, c->timing, error, sizeof error);
}

/* A table of ranks grown from current entries (4 at first), doubled until
 * it holds needed; 0 beyond ADT_SKELETON_RANKS_MAX. */
static uint32_t ranks_capacity(uint32_t current, uint64_t needed)
{
    if (needed > ADT_SKELETON_RANKS_MAX)
        return 0;
    uint32_t capacity = current ? current : 4;
    while (capacity < needed)
        capacity *= 2;
    return capacity;
}

/* Room for `more` ranks more in the class's ranks and parameters. */
static bool class_reserve(merge_class *c, uint32_t more)
{
    uint64_t needed = (uint64_t)c->rank_count + more;
    if (needed <= c->rank_capacity)
        return true;
    uint32_t capacity = ranks_capacity(c->rank_capacity, needed);
    if (!capacity)
        return false;
    uint32_t *ranks = realloc(c->ranks, sizeof *ranks * capacity);
    if (!ranks)
        return false;
    c->ranks = ranks;
    for (uint32_t p = 0; p < c->parameter_count; ++p) {
        uint64_t *values = realloc(c->parameters[p].values, sizeof *values * capacity);
        if (!values)
            return false;
        c->parameters[p].values = values;
    }
    c->rank_capacity = capacity;
    return true;
}

static merge_class *merge_new_class(adt_skeleton_merge *merge)
{
    if (merge->class_count == merge->class_capacity) {
        uint32_t capacity = merge->class_capacity ? 2 * merge->class_capacity : 4;
        merge_class *grown = realloc(merge->classes, sizeof *grown * capacity);
        if (!grown)
            return NULL;
        merge->classes = grown;
        merge->class_capacity = capacity;
    }
    merge_class *added = &merge->classes[merge->class_count++];
    memset(added, 0, sizeof *added);
    return added;
}

adt_skeleton_merge *adt_skeleton_merge_of_part(const uint8_t *part, size_t bytes, uint32_t rank)
{
    adt_skeleton_merge *merge = calloc(1, sizeof *merge);
    merge_class *c = merge ? merge_new_class(merge) : NULL;
    if (!c) {
        free(merge);
        return NULL;
    }
    uint64_t structure_bytes = 0;
    for (int i = 7; bytes >= 8 && i >= 0; --i)
        structure_bytes = structure_bytes << 8 | part[i];
    const uint8_t *at = part + 8 + structure_bytes, *end = part + bytes;
    bool ok = bytes >= 12 && structure_bytes >= 4 && structure_bytes <= bytes - 8 &&
              class_init(c, part + 8, (size_t)structure_bytes, &at, end) && at == end && class_reserve(c, 1);
    if (!ok) {
        adt_skeleton_merge_free(merge);
        return NULL;
    }
    c->ranks[c->rank_count++] = rank;
    return merge;
}

/* Room for `more` missing ranks more. */
static bool missing_reserve(adt_skeleton_merge *merge, uint32_t more)
{
    uint64_t needed = (uint64_t)merge->missing_count + more;
    if (needed <= merge->missing_capacity)
        return true;
    uint32_t capacity = ranks_capacity(merge->missing_capacity, needed);
    if (!capacity)
        return false;
    missing_rank *grown = realloc(merge->missing, sizeof *grown * capacity);
    if (!grown)
        return false;
    merge->missing = grown;
    merge->missing_capacity = capacity;
    return true;
}

static bool add_missing(adt_skeleton_merge *merge, uint32_t rank, const char *cause)
{
    if (rank >= ADT_SKELETON_RANKS_MAX || !missing_reserve(merge, 1))
        return false;
    missing_rank *added = &merge->missing[merge->missing_count++];
    added->rank = rank;
    snprintf(added->cause, sizeof added->cause, "%s", cause ? cause : "");
    return true;
}

uint32_t adt_skeleton_merge_missing_count(const adt_skeleton_merge *merge)
{
    return merge->missing_count;
}

adt_skeleton_merge *adt_skeleton_merge_of_missing(uint32_t first, uint32_t count, const char *cause)
{
    adt_skeleton_merge *merge = calloc(1, sizeof *merge);
    bool ok = merge && (uint64_t)first + count <= ADT_SKELETON_RANKS_MAX;
    for (uint32_t i = 0; ok && i < count; ++i)
        ok = add_missing(merge, first + i, cause);
    if (!ok) {
        adt_skeleton_merge_free(merge);
        return NULL;
    }
    return merge;
}

/* The index of parameter (t, s, f) of a class, or UINT32_MAX. */
static uint32_t find_parameter(const merge_class *c, uint32_t t, uint32_t s, uint32_t f)
{
    for (uint32_t p = 0; p < c->parameter_count; ++p)
        if (c->parameters[p].thread == t && c->parameters[p].signature == s && c->parameters[p].field == f)
            return p;
    return UINT32_MAX;
}

static int by_field(const void *a, const void *b)
{
    const merge_parameter *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->signature != y->signature)
        return x->signature < y->signature ? -1 : 1;
    return (x->field > y->field) - (x->field < y->field);
}

/* A parameter new to into (a field its ranks agree in so far): its
 * value on into's ranks, from its first rank's key. */
static bool add_parameter(merge_class *into, uint32_t t, uint32_t s, uint32_t f)
{
    merge_parameter *grown = realloc(into->parameters, sizeof *grown * ((size_t)into->parameter_count + 1));
    if (!grown)
        return false;
    into->parameters = grown;
    uint64_t *values = malloc(sizeof *values * (into->rank_capacity ? into->rank_capacity : 1));
    if (!values)
        return false;
    uint64_t value = key_field(shape_key(&into->shape, t, s), f);
    for (uint32_t m = 0; m < into->rank_count; ++m)
        values[m] = value;
    grown[into->parameter_count++] = (merge_parameter){ t, s, f, values };
    return true;
}

/* into += from, two classes that can be one (shapes_mergeable), from's
 * ranks all above into's: ranks appended, timing merged, and every field
 * that differs between them or within either a parameter of into. */
static bool class_merge(merge_class *into, const merge_class *from)
{
    if (into->rank_count > 0 && from->rank_count > 0 && from->ranks[0] <= into->ranks[into->rank_count - 1])
        return false;
    uint32_t known = into->parameter_count;
    /* The parameters new to into: from's, and the fields where the two
     * first ranks' keys differ. */
    for (uint32_t p = 0; p < from->parameter_count; ++p) {
        const merge_parameter *q = &from->parameters[p];
        if (find_parameter(into, q->thread, q->signature, q->field) == UINT32_MAX &&
            !add_parameter(into, q->thread, q->signature, q->field))
            return false;
    }
    for (uint32_t t = 0; t < into->shape.thread_count; ++t) {
        for (uint32_t s = 0; s < into->shape.threads[t].signature_count; ++s) {
            const key_ref *a = shape_key(&into->shape, t, s), *b = shape_key(&from->shape, t, s);
            if (a->length == b->length && memcmp(a->bytes, b->bytes, a->length) == 0)
                continue;
            /* The function and the calling context are the same
             * (keys_mergeable). */
            for (uint32_t f = 2; f < a->fields; ++f) {
                if (key_field(a, f) != key_field(b, f) && find_parameter(into, t, s, f) == UINT32_MAX &&
                    !add_parameter(into, t, s, f))
                    return false;
            }
        }
    }
    if (into->parameter_count != known)
        qsort(into->parameters, into->parameter_count, sizeof *into->parameters, by_field);
    if (!class_reserve(into, from->rank_count))
        return false;
    for (uint32_t p = 0; p < into->parameter_count; ++p) {
        merge_parameter *q = &into->parameters[p];
        uint32_t theirs = find_parameter(from, q->thread, q->signature, q->field);
        uint64_t *values = q->values + into->rank_count;
        if (theirs != UINT32_MAX) {
            memcpy(values, from->parameters[theirs].values, sizeof *values * from->rank_count);
        } else {
            uint64_t value = key_field(shape_key(&from->shape, q->thread, q->signature), q->field);
            for (uint32_t m = 0; m < from->rank_count; ++m)
                values[m] = value;
        }
    }
    memcpy(into->ranks + into->rank_count, from->ranks, sizeof *into->ranks * from->rank_count);
    into->rank_count += from->rank_count;
    for (uint32_t t = 0; t < into->shape.thread_count; ++t)
        if (!merge_thread_timing(&into->timing[t], &from->timing[t]))
            return false;
    return true;
}

bool adt_skeleton_merge_add(adt_skeleton_merge *into, adt_skeleton_merge *from)
{
    bool ok = true;
    for (uint32_t k = 0; ok && k < from->class_count; ++k) {
        merge_class *theirs = &from->classes[k];
        uint32_t c = 0;
        while (c < into->class_count && !shapes_mergeable(&into->classes[c].shape, &theirs->shape))
            c++;
        if (c < into->class_count) {
            ok = class_merge(&into->classes[c], theirs);
            continue;
        }
        /* A class of its own: moved over, in order of first rank (from's
         * ranks are above into's). */
        merge_class *mine = merge_new_class(into);
        if (!mine) {
            ok = false;
            continue;
        }
        *mine = *theirs;
        memset(theirs, 0, sizeof *theirs);
    }
    ok = ok && missing_reserve(into, from->missing_count);
    for (uint32_t m = 0; ok && m < from->missing_count; ++m)
        into->missing[into->missing_count++] = from->missing[m];
    adt_skeleton_merge_free(from);
    return ok;
}

/* A class as the file holds it: its structure, its timing and its
 * parameters. False when out of memory. */
static bool put_class(bytes_out *out, const merge_class *c)
{
    put_u64(out, c->shape.structure_bytes);
    put(out, c->structure, c->shape.structure_bytes);
    for (uint32_t t = 0; t < c->shape.thread_count; ++t)
        put_timing_part(out, &c->timing[t]);
    member_value *sorted = malloc(sizeof *sorted * ((size_t)c->rank_count + 1));
    value_group *groups = malloc(sizeof *groups * ((size_t)c->rank_count + 1));
    uint32_t *ranks = malloc(sizeof *ranks * ((size_t)c->rank_count + 1));
    bool ok = sorted && groups && ranks;
    put_varint(out, c->parameter_count);
    for (uint32_t p = 0; ok && p < c->parameter_count; ++p) {
        const merge_parameter *q = &c->parameters[p];
        for (uint32_t m = 0; m < c->rank_count; ++m)
            sorted[m] = (member_value){ q->values[m], m };
        put_parameter(out, q->thread, q->signature, q->field, c->ranks, sorted, c->rank_count, groups, ranks);
    }
    free(sorted);
    free(groups);
    free(ranks);
    return ok;
}

/* On the wire between two ranks of the tree: u32 class_count, then per
 * class its file encoding (put_class) and its ranks (v range_count
 * {v first, v count, v stride}), then the ranks without a skeleton
 * (v missing_count {v rank, v cause length, cause bytes}). */
uint8_t *adt_skeleton_merge_encode(const adt_skeleton_merge *merge, size_t *bytes)
{
    bytes_out out = { 0 };
    bool ok = true;
    put_u32(&out, merge->class_count);
    for (uint32_t k = 0; k < merge->class_count; ++k) {
        ok = ok && put_class(&out, &merge->classes[k]);
        put_varint_ranges(&out, merge->classes[k].ranks, merge->classes[k].rank_count);
    }
    put_varint(&out, merge->missing_count);
    for (uint32_t m = 0; m < merge->missing_count; ++m) {
        size_t length = strlen(merge->missing[m].cause);
        put_varint(&out, merge->missing[m].rank);
        put_varint(&out, length);
        put(&out, merge->missing[m].cause, length);
    }
    if (!ok || out.failed) {
        free(out.data);
        return NULL;
    }
    *bytes = out.size;
    return out.data;
}

static bool take_varint(const uint8_t **at, const uint8_t *end, uint64_t *value)
{
    uint32_t length = (size_t)(end - *at) > UINT32_MAX ? UINT32_MAX : (uint32_t)(end - *at), offset = 0;
    if (!adt_skeleton_key_next(*at, length, &offset, value))
        return false;
    *at += offset;
    return true;
}

static bool take_varint32(const uint8_t **at, const uint8_t *end, uint32_t *value)
{
    uint64_t wide;
    if (!take_varint(at, end, &wide) || wide > UINT32_MAX)
        return false;
    *value = (uint32_t)wide;
    return true;
}

/* A member's index among a class's rising ranks, or UINT32_MAX. */
static uint32_t member_of(const merge_class *c, uint64_t rank)
{
    uint32_t low = 0, high = c->rank_count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (c->ranks[middle] == rank)
            return middle;
        if (c->ranks[middle] < rank)
            low = middle + 1;
        else
            high = middle;
    }
    return UINT32_MAX;
}

/* ranges strided ranges of varints at *at: each rank passed to visit
 * (false stops, and so does a range that does not parse). */
static bool take_ranges(const uint8_t **at, const uint8_t *end, bool (*visit)(uint64_t rank, void *arg), void *arg)
{
    uint32_t range_count;
    if (!take_varint32(at, end, &range_count))
        return false;
    for (uint32_t g = 0; g < range_count; ++g) {
        uint32_t first, count, stride;
        if (!take_varint32(at, end, &first) || !take_varint32(at, end, &count) || !take_varint32(at, end, &stride) ||
            count == 0 || stride == 0 || count > ADT_SKELETON_RANKS_MAX)
            return false;
        for (uint64_t i = 0; i < count; ++i)
            if (!visit(first + i * stride, arg))
                return false;
    }
    return true;
}

static bool append_rank(uint64_t rank, void *arg)
{
    merge_class *c = arg;
    if (rank >= ADT_SKELETON_RANKS_MAX || (c->rank_count > 0 && rank <= c->ranks[c->rank_count - 1]) ||
        !class_reserve(c, 1))
        return false;
    c->ranks[c->rank_count++] = (uint32_t)rank;
    return true;
}

typedef struct value_setter {
    const merge_class *c;
    uint64_t *values;
    uint8_t *set;
    uint64_t value;
} value_setter;

static bool set_value(uint64_t rank, void *arg)
{
    value_setter *v = arg;
    uint32_t m = member_of(v->c, rank);
    if (m == UINT32_MAX || v->set[m])
        return false;
    v->set[m] = 1;
    v->values[m] = v->value;
    return true;
}

/* A class's parameters on the wire, [at, end) (put_parameter's values
 * and ranges), into values per member: every member once per parameter;
 * its ranks read before them. */
static bool take_parameters(const uint8_t *at, const uint8_t *end, merge_class *c)
{
    uint32_t count;
    if (!take_varint32(&at, end, &count) || count > (size_t)(end - at))
        return false;
    c->parameters = calloc(count ? count : 1, sizeof *c->parameters);
    uint8_t *set = malloc(c->rank_count ? c->rank_count : 1);
    bool ok = c->parameters && set;
    for (uint32_t p = 0; ok && p < count; ++p) {
        merge_parameter *q = &c->parameters[p];
        uint32_t value_count;
        ok = take_varint32(&at, end, &q->thread) && take_varint32(&at, end, &q->signature) &&
             take_varint32(&at, end, &q->field) && take_varint32(&at, end, &value_count) &&
             q->thread < c->shape.thread_count && q->signature < c->shape.threads[q->thread].signature_count &&
             (q->values = malloc(sizeof *q->values * (c->rank_capacity ? c->rank_capacity : 1))) != NULL;
        if (!ok)
            break;
        c->parameter_count = p + 1;
        memset(set, 0, c->rank_count);
        value_setter setter = { c, q->values, set, 0 };
        for (uint32_t v = 0; ok && v < value_count; ++v)
            ok = take_varint(&at, end, &setter.value) && take_ranges(&at, end, set_value, &setter);
        for (uint32_t m = 0; ok && m < c->rank_count; ++m)
            ok = set[m];
    }
    free(set);
    return ok && at == end;
}

adt_skeleton_merge *adt_skeleton_merge_decode(const uint8_t *bytes, size_t size)
{
    adt_skeleton_merge *merge = calloc(1, sizeof *merge);
    const uint8_t *at = bytes, *end = bytes + size;
    bool ok = merge && size >= 4;
    uint32_t classes = ok ? le32(at) : 0;
    at += ok ? 4 : 0;
    for (uint32_t k = 0; ok && k < classes; ++k) {
        merge_class *c = merge_new_class(merge);
        if (!c || end - at < 8) {
            ok = false;
            break;
        }
        uint64_t structure_bytes = (uint64_t)le32(at + 4) << 32 | le32(at);
        at += 8;
        if (structure_bytes > (size_t)(end - at)) {
            ok = false;
            break;
        }
        const uint8_t *structure = at;
        at += structure_bytes;
        ok = class_init(c, structure, (size_t)structure_bytes, &at, end);
        /* The parameters precede the ranks they name: skipped over first. */
        const uint8_t *parameters = at;
        uint32_t count = 0;
        ok = ok && take_varint32(&at, end, &count);
        for (uint32_t p = 0; ok && p < count; ++p) {
            uint64_t ignored;
            uint32_t value_count = 0;
            for (int field = 0; ok && field < 3; ++field)
                ok = take_varint(&at, end, &ignored);
            ok = ok && take_varint32(&at, end, &value_count);
            for (uint32_t v = 0; ok && v < value_count; ++v) {
                uint32_t range_count = 0;
                ok = take_varint(&at, end, &ignored) && take_varint32(&at, end, &range_count);
                for (uint32_t g = 0; ok && g < 3 * range_count; ++g)
                    ok = take_varint(&at, end, &ignored);
            }
        }
        const uint8_t *ranks = at;
        ok = ok && take_ranges(&at, end, append_rank, c) && c->rank_count > 0 && take_parameters(parameters, ranks, c);
    }
    uint32_t missing = 0;
    ok = ok && take_varint32(&at, end, &missing) && missing <= (size_t)(end - at) / 2;
    for (uint32_t m = 0; ok && m < missing; ++m) {
        uint32_t rank, length;
        char cause[ADT_SKELETON_CAUSE_MAX];
        ok = take_varint32(&at, end, &rank) && take_varint32(&at, end, &length) && length < sizeof cause &&
             length <= (size_t)(end - at);
        if (ok) {
            memcpy(cause, at, length);
            cause[length] = '\0';
            at += length;
            ok = add_missing(merge, rank, cause);
        }
    }
    if (!ok || at != end) {
        adt_skeleton_merge_free(merge);
        return NULL;
    }
    return merge;
}

/* The rank table: each class's ranks as strided ranges (u32 first,
 * count, stride, class), class by class. */
static void put_rank_table(bytes_out *out, const adt_skeleton_merge *merge)
{
    uint32_t range_count = 0;
    for (uint32_t k = 0; k < merge->class_count; ++k) {
        const merge_class *c = &merge->classes[k];
        for (uint32_t at = 0, stride; at < c->rank_count; at += strided_run(c->ranks, c->rank_count, at, &stride))
            range_count++;
    }
    put_u32(out, range_count);
    for (uint32_t k = 0; k < merge->class_count; ++k) {
        const merge_class *c = &merge->classes[k];
        for (uint32_t at = 0, stride, run; at < c->rank_count; at += run) {
            run = strided_run(c->ranks, c->rank_count, at, &stride);
            put_u32(out, c->ranks[at]);
            put_u32(out, run);
            put_u32(out, stride);
            put_u32(out, k);
        }
    }
}

static int by_cause_then_rank(const void *a, const void *b)
{
    const missing_rank *x = a, *y = b;
    int order = strcmp(x->cause, y->cause);
    return order != 0 ? order : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Version 5's list of the ranks without a skeleton: the causes, then per
 * cause its ranks as strided ranges (u32 first, count, stride, cause).
 * missing is sorted by cause, then rank; ranks is scratch of its size. */
static void put_missing(bytes_out *out, const missing_rank *missing, uint32_t count, uint32_t *ranks)
{
    uint32_t cause_count = 0, range_count = 0;
    for (uint32_t m = 0; m < count; ++m) {
        ranks[m] = missing[m].rank;
        cause_count += m == 0 || strcmp(missing[m].cause, missing[m - 1].cause) != 0;
    }
    put_u32(out, cause_count);
    for (uint32_t m = 0; m < count; ++m) {
        if (m > 0 && strcmp(missing[m].cause, missing[m - 1].cause) == 0)
            continue;
        uint32_t length = (uint32_t)strlen(missing[m].cause);
        put_u32(out, length);
        put(out, missing[m].cause, length);
    }
    /* Twice over the causes' groups: the ranges counted, then written. */
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1)
            put_u32(out, range_count);
        for (uint32_t group = 0, cause = 0, next; group < count; group = next, ++cause) {
            next = group + 1;
            while (next < count && strcmp(missing[next].cause, missing[group].cause) == 0)
                next++;
            for (uint32_t at = group, stride, run; at < next; at += run) {
                run = strided_run(ranks + group, next - group, at - group, &stride);
                range_count += pass == 0;
                if (pass == 1) {
                    put_u32(out, ranks[at]);
                    put_u32(out, run);
                    put_u32(out, stride);
                    put_u32(out, cause);
                }
            }
        }
    }
}

/* Whether the classes and the missing ranks name every rank below
 * rank_count once. */
static bool names_every_rank_once(const adt_skeleton_merge *merge, uint32_t rank_count)
{
    uint8_t *seen = calloc(rank_count ? rank_count : 1, 1);
    bool ok = seen != NULL;
    uint64_t named = 0;
    for (uint32_t k = 0; ok && k < merge->class_count; ++k) {
        const merge_class *c = &merge->classes[k];
        ok = c->rank_count > 0;
        for (uint32_t i = 0; ok && i < c->rank_count; ++i, ++named) {
            ok = c->ranks[i] < rank_count && !seen[c->ranks[i]];
            if (ok)
                seen[c->ranks[i]] = 1;
        }
    }
    for (uint32_t m = 0; ok && m < merge->missing_count; ++m, ++named) {
        ok = merge->missing[m].rank < rank_count && !seen[merge->missing[m].rank];
        if (ok)
            seen[merge->missing[m].rank] = 1;
    }
    free(seen);
    return ok && named == rank_count;
}

int adt_skeleton_merge_write(const adt_skeleton_merge *merge, const char *path, const char *const *function_names,
                             uint32_t function_count, uint32_t rank_count, uint64_t ticks_per_second)
{
    if (merge->class_count == 0 || !names_every_rank_once(merge, rank_count)) {
        errno = EINVAL;
        return -1;
    }
    uint32_t missing_count = merge->missing_count;
    missing_rank *missing = malloc(sizeof *missing * (missing_count ? missing_count : 1));
    uint32_t *scratch = malloc(sizeof *scratch * (missing_count ? missing_count : 1));
    if (!missing || !scratch) {
        free(missing);
        free(scratch);
        errno = ENOMEM;
        return -1;
    }
    if (missing_count > 0) {
        memcpy(missing, merge->missing, sizeof *missing * missing_count);
        qsort(missing, missing_count, sizeof *missing, by_cause_then_rank);
    }
    bytes_out out = { 0 };
    put(&out, ADT_SKELETON_MAGIC, sizeof ADT_SKELETON_MAGIC);
    /* A file of every rank has no list of missing ranks (version 6). */
    put_u32(&out, missing_count > 0 ? ADT_SKELETON_VERSION_PARTIAL : ADT_SKELETON_VERSION);
    put_u64(&out, ticks_per_second);
    put_u32(&out, function_count);
    for (uint32_t f = 0; f < function_count; ++f) {
        uint32_t length = (uint32_t)strlen(function_names[f]);
        put_u32(&out, length);
        put(&out, function_names[f], length);
    }
    put_u32(&out, merge->class_count);
    bool ok = true;
    for (uint32_t k = 0; k < merge->class_count; ++k)
        ok = put_class(&out, &merge->classes[k]) && ok;
    put_u32(&out, rank_count);
    put_rank_table(&out, merge);
    if (missing_count > 0)
        put_missing(&out, missing, missing_count, scratch);
    free(missing);
    free(scratch);
    if (out.failed || !ok) {
        free(out.data);
        errno = ENOMEM;
        return -1;
    }
    put_u64(&out, adt_skeleton_checksum(out.data, out.size));
    FILE *file = fopen(path, "wb");
    int result = -1;
    if (file) {
        size_t written = fwrite(out.data, 1, out.size, file);
        int closed = fclose(file);
        result = (written == out.size && closed == 0) ? 0 : -1;
    }
    free(out.data);
    return result;
}

int adt_skeleton_file_write(const char *path, const char *const *function_names, uint32_t function_count,
                            const uint8_t *const *part_data, const size_t *part_bytes, uint32_t rank_count,
                            uint64_t ticks_per_second, const char *const *missing_causes)
{
    adt_skeleton_merge *merge = NULL;
    bool ok = true;
    for (uint32_t r = 0; ok && r < rank_count; ++r) {
        adt_skeleton_merge *one = part_data[r] != NULL
                                      ? adt_skeleton_merge_of_part(part_data[r], part_bytes[r], r)
                                      : adt_skeleton_merge_of_missing(r, 1, missing_causes ? missing_causes[r] : "");
        if (!one)
            ok = false;
        else if (!merge)
            merge = one;
        else
            ok = adt_skeleton_merge_add(merge, one);
    }
    if (!ok || !merge) {
        adt_skeleton_merge_free(merge);
        errno = EINVAL;
        return -1;
    }
    int result = adt_skeleton_merge_write(merge, path, function_names, function_count, rank_count, ticks_per_second);
    adt_skeleton_merge_free(merge);
    return result;
}
