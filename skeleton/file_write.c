/*
 * file_write.c: a rank's skeletons as bytes, and skeleton.adts written
 * from the ranks' parts (end of run: malloc and stdio are fine here). The
 * format is docs/folding.md's "skeleton.adts"; file_read.c reads it. A
 * rank's part is its structure (compared byte for byte to find classes)
 * followed by its timing (merged over the ranks of a class).
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

uint64_t adt_skeleton_checksum(const uint8_t *data, size_t size)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < size; ++i)
        h = (h ^ data[i]) * 1099511628211ull;
    return h;
}

/* A rank's part split: its structure and its timing's bytes. */
typedef struct rank_part {
    const uint8_t *structure;
    size_t structure_bytes;
    const uint8_t *timing;
    const uint8_t *end;
    uint32_t thread_count;
} rank_part;

static bool split_part(const uint8_t *part, size_t bytes, rank_part *out)
{
    if (bytes < 12)
        return false;
    uint64_t structure_bytes = 0;
    for (int i = 7; i >= 0; --i)
        structure_bytes = structure_bytes << 8 | part[i];
    if (structure_bytes < 4 || structure_bytes > bytes - 8)
        return false;
    out->structure = part + 8;
    out->structure_bytes = (size_t)structure_bytes;
    out->timing = out->structure + out->structure_bytes;
    out->end = part + bytes;
    out->thread_count = (uint32_t)out->structure[0] | (uint32_t)out->structure[1] << 8 |
                        (uint32_t)out->structure[2] << 16 | (uint32_t)out->structure[3] << 24;
    /* A part from a rescue file (adaptrace-recover) may be damaged: every
     * thread takes at least a byte of the structure, so a larger count
     * is refused before the timing's tables are sized by it. */
    return out->thread_count <= structure_bytes - 4;
}

/* The class of each rank: structures equal byte for byte share one,
 * numbered in order of their first rank. Returns the number of classes;
 * first[c] is class c's first rank. */
static uint32_t classify(const rank_part *parts, uint32_t rank_count, uint32_t *class_of, uint32_t *first,
                         uint64_t *hashes)
{
    uint32_t classes = 0;
    for (uint32_t r = 0; r < rank_count; ++r) {
        const rank_part *p = &parts[r];
        uint64_t hash = adt_skeleton_checksum(p->structure, p->structure_bytes);
        uint32_t c = 0;
        while (c < classes && !(hashes[c] == hash && parts[first[c]].structure_bytes == p->structure_bytes &&
                                memcmp(parts[first[c]].structure, p->structure, p->structure_bytes) == 0))
            c++;
        if (c == classes) {
            hashes[classes] = hash;
            first[classes++] = r;
        }
        class_of[r] = c;
    }
    return classes;
}

/* Each class's ranks as strided ranges, greedily: a range grows while
 * the next rank of its class is one stride further. */
static void put_ranges(bytes_out *out, const uint32_t *class_of, uint32_t rank_count, uint32_t classes)
{
    bytes_out ranges = { 0 };
    uint32_t range_count = 0;
    for (uint32_t c = 0; c < classes; ++c) {
        uint32_t start = UINT32_MAX, count = 0, stride = 1, last = 0;
        for (uint32_t r = 0; r <= rank_count; ++r) {
            if (r < rank_count && class_of[r] != c)
                continue;
            bool extends = r < rank_count && count > 0 && (count == 1 ? true : r - last == stride);
            if (extends) {
                if (count == 1)
                    stride = r - last;
                count++;
                last = r;
                continue;
            }
            if (count > 0) {
                put_u32(&ranges, start);
                put_u32(&ranges, count);
                put_u32(&ranges, stride);
                put_u32(&ranges, c);
                range_count++;
            }
            start = last = r;
            count = 1;
            stride = 1;
        }
    }
    put_u32(out, range_count);
    if (ranges.failed)
        out->failed = true;
    else if (ranges.size > 0)
        put(out, ranges.data, ranges.size);
    free(ranges.data);
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

int adt_skeleton_file_write(const char *path, const char *const *function_names, uint32_t function_count,
                            const uint8_t *const *part_data, const size_t *part_bytes, uint32_t rank_count,
                            uint64_t ticks_per_second)
{
    bytes_out out = { 0 };
    uint32_t *class_of = malloc(sizeof(uint32_t) * 2 * ((size_t)rank_count + 1));
    uint64_t *hashes = malloc(sizeof(uint64_t) * ((size_t)rank_count + 1));
    rank_part *parts = malloc(sizeof *parts * ((size_t)rank_count + 1));
    if (!class_of || !hashes || !parts) {
        free(class_of);
        free(hashes);
        free(parts);
        errno = ENOMEM;
        return -1;
    }
    for (uint32_t r = 0; r < rank_count; ++r) {
        if (!split_part(part_data[r], part_bytes[r], &parts[r])) {
            free(class_of);
            free(hashes);
            free(parts);
            errno = EINVAL;
            return -1;
        }
    }
    uint32_t *first = class_of + rank_count + 1;
    uint32_t classes = classify(parts, rank_count, class_of, first, hashes);
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
    bool timed = true;
    for (uint32_t c = 0; c < classes; ++c) {
        const rank_part *p = &parts[first[c]];
        put_u64(&out, p->structure_bytes);
        put(&out, p->structure, p->structure_bytes);
        timed = timed && put_class_timing(&out, parts, class_of, rank_count, first[c]);
    }
    put_u32(&out, rank_count);
    put_ranges(&out, class_of, rank_count, classes);
    free(class_of);
    free(hashes);
    free(parts);
    if (out.failed || !timed) {
        free(out.data);
        errno = out.failed ? ENOMEM : EINVAL;
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
