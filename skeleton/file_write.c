/*
 * file_write.c: a rank's skeletons as bytes, and skeleton.adts written
 * from the ranks' parts (end of run: malloc and stdio are fine here). The
 * format is docs/folding.md's "skeleton.adts"; file_read.c reads it. A
 * rank's part is its structure followed by its timing. Ranks whose
 * structures differ at most in the parameters of their calls (the same
 * threads, grammars, functions and calling contexts) are one class: the
 * structure of its first rank, each parameter that differs by rank as its
 * values with their ranks, and the timing merged over its ranks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

uint8_t *adt_skeleton_rank_encode(uint32_t rank, size_t *bytes)
{
    bytes_out structure = { 0 }, out = { 0 };
    size_t count = adt_skeleton_count();
    put_u32(&structure, (uint32_t)count);
    for (size_t i = 0; i < count; ++i)
        put_thread(&structure, adt_skeleton_at(i));
    put_u64(&out, structure.size);
    if (!structure.failed)
        put(&out, structure.data, structure.size);
    free(structure.data);
    for (size_t i = 0; i < count; ++i)
        put_thread_timing(&out, adt_skeleton_at(i), rank);
    if (structure.failed || out.failed) {
        free(out.data);
        return NULL;
    }
    *bytes = out.size;
    return out.data;
}

static uint64_t fnv_more(uint64_t hash, const void *data, size_t size)
{
    const uint8_t *bytes = data;
    for (size_t i = 0; i < size; ++i)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
}

uint64_t adt_skeleton_checksum(const uint8_t *data, size_t size)
{
    return fnv_more(14695981039346656037ull, data, size);
}

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A key in a rank's structure, and how many varint fields it reads as
 * (KEY_OPAQUE: it does not read as varints; it then matches only a key
 * equal to it byte for byte). */
#define KEY_OPAQUE UINT32_MAX
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

/* A rank's part split: its structure located thread by thread, and its
 * timing's bytes. */
typedef struct rank_part {
    const uint8_t *structure;
    size_t structure_bytes;
    const uint8_t *timing;
    const uint8_t *end;
    uint32_t thread_count;
    thread_shape *threads; /* malloc'd */
    key_ref *keys;         /* malloc'd */
    uint64_t shape_hash;   /* of what ranks of one class share (mergeable) */
} rank_part;

static uint32_t key_fields(const uint8_t *key, uint32_t length)
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
        return fnv_more(hash, key->bytes, key->length);
    uint64_t common[3] = { key->fields, key_field(key, 0), key_field(key, 1) };
    return fnv_more(hash, common, sizeof common);
}

static bool keys_mergeable(const key_ref *a, const key_ref *b)
{
    if (a->length == b->length && memcmp(a->bytes, b->bytes, a->length) == 0)
        return true;
    return a->fields == b->fields && a->fields != KEY_OPAQUE && a->fields >= 2 &&
           key_field(a, 0) == key_field(b, 0) && key_field(a, 1) == key_field(b, 1);
}

/* Locates the threads of a part's structure (docs/folding.md): 0, EINVAL
 * when it does not parse, ENOMEM. */
static int split_part(const uint8_t *part, size_t bytes, rank_part *out)
{
    memset(out, 0, sizeof *out);
    if (bytes < 12)
        return EINVAL;
    uint64_t structure_bytes = 0;
    for (int i = 7; i >= 0; --i)
        structure_bytes = structure_bytes << 8 | part[i];
    if (structure_bytes < 4 || structure_bytes > bytes - 8)
        return EINVAL;
    out->structure = part + 8;
    out->structure_bytes = (size_t)structure_bytes;
    out->timing = out->structure + out->structure_bytes;
    out->end = part + bytes;
    out->thread_count = le32(out->structure);
    const uint8_t *at = out->structure + 4, *end = out->timing;
    if (out->thread_count > (size_t)(end - at) / 32)
        return EINVAL;
    /* Every key takes at least its 4-byte length. */
    out->threads = malloc(sizeof *out->threads * ((size_t)out->thread_count + 1));
    out->keys = malloc(sizeof *out->keys * ((size_t)(end - at) / 4 + 1));
    if (!out->threads || !out->keys)
        return ENOMEM;
    uint32_t keys = 0;
    uint64_t hash = fnv_more(14695981039346656037ull, out->structure, 4);
    for (uint32_t t = 0; t < out->thread_count; ++t) {
        thread_shape *thread = &out->threads[t];
        if (end - at < 24)
            return EINVAL;
        thread->header = at;
        thread->signature_count = le32(at + 20);
        thread->first_key = keys;
        hash = fnv_more(hash, at, 24);
        at += 24;
        for (uint32_t s = 0; s < thread->signature_count; ++s) {
            if (end - at < 4 || le32(at) > (size_t)(end - at) - 4)
                return EINVAL;
            key_ref *key = &out->keys[keys++];
            key->length = le32(at);
            key->bytes = at + 4;
            key->fields = key_fields(key->bytes, key->length);
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
        hash = fnv_more(hash, at, thread->grammar_bytes);
        at += grammar_bytes;
    }
    out->shape_hash = hash;
    return at == end ? 0 : EINVAL;
}

/* Whether two ranks can be one class: the same threads with the same
 * grammars and keys that differ at most in their parameters. */
static bool parts_mergeable(const rank_part *a, const rank_part *b)
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

/* The class of each rank, numbered in order of their first rank: a rank
 * joins the first class whose first rank it can merge with. Returns the
 * number of classes; first[c] is class c's first rank. */
static uint32_t classify(const rank_part *parts, uint32_t rank_count, uint32_t *class_of, uint32_t *first)
{
    uint32_t classes = 0;
    for (uint32_t r = 0; r < rank_count; ++r) {
        uint32_t c = 0;
        while (c < classes && !parts_mergeable(&parts[first[c]], &parts[r]))
            c++;
        if (c == classes)
            first[classes++] = r;
        class_of[r] = c;
    }
    return classes;
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

/* Each class's ranks as strided ranges, class by class. members holds
 * room for rank_count ranks. */
static void put_ranges(bytes_out *out, const uint32_t *class_of, uint32_t rank_count, uint32_t classes,
                       uint32_t *members)
{
    bytes_out ranges = { 0 };
    uint32_t range_count = 0;
    for (uint32_t c = 0; c < classes; ++c) {
        uint32_t count = 0;
        for (uint32_t r = 0; r < rank_count; ++r)
            if (class_of[r] == c)
                members[count++] = r;
        for (uint32_t at = 0, stride; at < count; at += strided_run(members, count, at, &stride)) {
            put_u32(&ranges, members[at]);
            put_u32(&ranges, strided_run(members, count, at, &stride));
            put_u32(&ranges, stride);
            put_u32(&ranges, c);
            range_count++;
        }
    }
    put_u32(out, range_count);
    if (ranges.failed)
        out->failed = true;
    else if (ranges.size > 0)
        put(out, ranges.data, ranges.size);
    free(ranges.data);
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
        uint32_t range_count = 0;
        for (uint32_t at = 0, stride; at < taking; at += strided_run(ranks, taking, at, &stride))
            range_count++;
        put_varint(out, sorted[groups[g].start].value);
        put_varint(out, range_count);
        for (uint32_t at = 0, stride, run; at < taking; at += run) {
            run = strided_run(ranks, taking, at, &stride);
            put_varint(out, ranks[at]);
            put_varint(out, run);
            put_varint(out, stride);
        }
    }
}

/* The parameters in which the ranks of class c differ from its first
 * rank's structure, thread by thread, signature by signature, field by
 * field. False when out of memory. */
static bool put_class_parameters(bytes_out *out, const rank_part *parts, const uint32_t *class_of,
                                 uint32_t rank_count, uint32_t c, uint32_t first)
{
    uint32_t count = 0;
    for (uint32_t r = first; r < rank_count; ++r)
        count += class_of[r] == c;
    uint32_t *members = malloc(sizeof(uint32_t) * 2 * (size_t)count);
    member_value *values = malloc(sizeof *values * (size_t)count);
    value_group *groups = malloc(sizeof *groups * (size_t)count);
    bytes_out parameters = { 0 };
    uint32_t parameter_count = 0;
    bool ok = members && values && groups;
    count = 0;
    for (uint32_t r = first; ok && r < rank_count; ++r)
        if (class_of[r] == c)
            members[count++] = r;
    const rank_part *model = &parts[first];
    for (uint32_t t = 0; ok && t < model->thread_count; ++t) {
        for (uint32_t s = 0; s < model->threads[t].signature_count; ++s) {
            const key_ref *key = &model->keys[model->threads[t].first_key + s];
            bool differs = false;
            for (uint32_t m = 1; m < count && !differs; ++m) {
                const rank_part *part = &parts[members[m]];
                const key_ref *other = &part->keys[part->threads[t].first_key + s];
                differs = other->length != key->length || memcmp(other->bytes, key->bytes, key->length) != 0;
            }
            if (!differs)
                continue;
            /* Every member's fields, read once: row m is member m's. */
            uint64_t *fields = malloc(sizeof(uint64_t) * (size_t)count * key->fields);
            if (!fields) {
                ok = false;
                break;
            }
            for (uint32_t m = 0; m < count; ++m) {
                const rank_part *part = &parts[members[m]];
                const key_ref *other = &part->keys[part->threads[t].first_key + s];
                uint32_t offset = 0;
                for (uint32_t f = 0; f < key->fields; ++f)
                    adt_skeleton_key_next(other->bytes, other->length, &offset, &fields[(size_t)m * key->fields + f]);
            }
            /* The function and the calling context are the same on every
             * rank of a class (keys_mergeable). */
            for (uint32_t f = 2; f < key->fields; ++f) {
                bool varies = false;
                for (uint32_t m = 0; m < count; ++m) {
                    values[m] = (member_value){ fields[(size_t)m * key->fields + f], m };
                    varies = varies || values[m].value != values[0].value;
                }
                if (varies) {
                    put_parameter(&parameters, t, s, f, members, values, count, groups, members + count);
                    parameter_count++;
                }
            }
            free(fields);
        }
    }
    put_varint(out, parameter_count);
    if (parameters.size > 0)
        put(out, parameters.data, parameters.size);
    ok = ok && !parameters.failed;
    free(parameters.data);
    free(members);
    free(values);
    free(groups);
    return ok;
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

/* Class c's timing: its ranks' merged, thread by thread. */
static bool put_class_timing(bytes_out *out, const rank_part *parts, const uint32_t *class_of, uint32_t rank_count,
                             uint32_t first)
{
    uint32_t threads = parts[first].thread_count;
    adt_skeleton_timing_part *merged = calloc(threads ? threads : 1, sizeof *merged);
    adt_skeleton_timing_part *one = calloc(threads ? threads : 1, sizeof *one);
    char error[160];
    bool ok = merged && one;
    const uint8_t *at = parts[first].timing;
    ok = ok && adt_skeleton_timing_decode(&at, parts[first].end, threads, merged, error, sizeof error) &&
         at == parts[first].end;
    for (uint32_t r = first + 1; ok && r < rank_count; ++r) {
        if (class_of[r] != class_of[first])
            continue;
        at = parts[r].timing;
        ok = adt_skeleton_timing_decode(&at, parts[r].end, threads, one, error, sizeof error) && at == parts[r].end;
        for (uint32_t t = 0; ok && t < threads; ++t)
            ok = merge_thread_timing(&merged[t], &one[t]);
        if (one)
            adt_skeleton_timing_parts_free(one, threads);
    }
    for (uint32_t t = 0; ok && t < threads; ++t)
        put_timing_part(out, &merged[t]);
    if (merged)
        adt_skeleton_timing_parts_free(merged, threads);
    free(merged);
    free(one);
    return ok;
}

static void parts_free(rank_part *parts, uint32_t count)
{
    for (uint32_t r = 0; r < count; ++r) {
        free(parts[r].threads);
        free(parts[r].keys);
    }
    free(parts);
}

int adt_skeleton_file_write(const char *path, const char *const *function_names, uint32_t function_count,
                            const uint8_t *const *part_data, const size_t *part_bytes, uint32_t rank_count,
                            uint64_t ticks_per_second)
{
    bytes_out out = { 0 };
    uint32_t *class_of = malloc(sizeof(uint32_t) * 3 * ((size_t)rank_count + 1));
    rank_part *parts = calloc((size_t)rank_count + 1, sizeof *parts);
    if (!class_of || !parts) {
        free(class_of);
        free(parts);
        errno = ENOMEM;
        return -1;
    }
    for (uint32_t r = 0; r < rank_count; ++r) {
        int failed = split_part(part_data[r], part_bytes[r], &parts[r]);
        if (failed) {
            free(class_of);
            parts_free(parts, r + 1);
            errno = failed;
            return -1;
        }
    }
    uint32_t *first = class_of + rank_count + 1;
    uint32_t classes = classify(parts, rank_count, class_of, first);
    put(&out, ADT_SKELETON_MAGIC, sizeof ADT_SKELETON_MAGIC);
    put_u32(&out, ADT_SKELETON_VERSION);
    put_u64(&out, ticks_per_second);
    put_u32(&out, function_count);
    for (uint32_t f = 0; f < function_count; ++f) {
        uint32_t length = (uint32_t)strlen(function_names[f]);
        put_u32(&out, length);
        put(&out, function_names[f], length);
    }
    put_u32(&out, classes);
    bool timed = true, parameters = true;
    for (uint32_t c = 0; c < classes; ++c) {
        const rank_part *p = &parts[first[c]];
        put_u64(&out, p->structure_bytes);
        put(&out, p->structure, p->structure_bytes);
        timed = timed && put_class_timing(&out, parts, class_of, rank_count, first[c]);
        parameters = parameters && put_class_parameters(&out, parts, class_of, rank_count, c, first[c]);
    }
    put_u32(&out, rank_count);
    put_ranges(&out, class_of, rank_count, classes, first + rank_count + 1);
    free(class_of);
    parts_free(parts, rank_count);
    if (out.failed || !timed || !parameters) {
        free(out.data);
        errno = out.failed || !parameters ? ENOMEM : EINVAL;
        return -1;
    }
    put_u64(&out, adt_skeleton_checksum(out.data, out.size));
    FILE *file = fopen(path, "wb");
    int result = -1;
    if (file) {
        size_t written = out.failed ? 0 : fwrite(out.data, 1, out.size, file);
        int closed = fclose(file);
        result = (!out.failed && written == out.size && closed == 0) ? 0 : -1;
    }
    free(out.data);
    return result;
}
