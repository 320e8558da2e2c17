/*
 * file_write.c: a rank's skeletons as bytes, and skeleton.adts written
 * from the ranks' parts (end of run: malloc and stdio are fine here). The
 * format is docs/folding.md's "skeleton.adts"; file_read.c reads it.
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

uint8_t *adt_skeleton_rank_encode(size_t *bytes)
{
    bytes_out out = { 0 };
    size_t count = adt_skeleton_count();
    put_u32(&out, (uint32_t)count);
    for (size_t i = 0; i < count; ++i)
        put_thread(&out, adt_skeleton_at(i));
    if (out.failed) {
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

/* The class of each rank: parts equal byte for byte share one, numbered
 * in order of their first rank. Returns the number of classes; first[c]
 * is class c's first rank. */
static uint32_t classify(const uint8_t *const *parts, const size_t *part_bytes, uint32_t rank_count,
                         uint32_t *class_of, uint32_t *first, uint64_t *hashes)
{
    uint32_t classes = 0;
    for (uint32_t r = 0; r < rank_count; ++r) {
        uint64_t hash = adt_skeleton_checksum(parts[r], part_bytes[r]);
        uint32_t c = 0;
        while (c < classes && !(hashes[c] == hash && part_bytes[first[c]] == part_bytes[r] &&
                                memcmp(parts[first[c]], parts[r], part_bytes[r]) == 0))
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

int adt_skeleton_file_write(const char *path, const char *const *function_names, uint32_t function_count,
                            const uint8_t *const *parts, const size_t *part_bytes, uint32_t rank_count)
{
    bytes_out out = { 0 };
    uint32_t *class_of = malloc(sizeof(uint32_t) * 2 * ((size_t)rank_count + 1));
    uint64_t *hashes = malloc(sizeof(uint64_t) * ((size_t)rank_count + 1));
    if (!class_of || !hashes) {
        free(class_of);
        free(hashes);
        errno = ENOMEM;
        return -1;
    }
    uint32_t *first = class_of + rank_count + 1;
    uint32_t classes = classify(parts, part_bytes, rank_count, class_of, first, hashes);
    put(&out, ADT_SKELETON_MAGIC, sizeof ADT_SKELETON_MAGIC);
    put_u32(&out, ADT_SKELETON_VERSION);
    put_u32(&out, function_count);
    for (uint32_t f = 0; f < function_count; ++f) {
        uint32_t length = (uint32_t)strlen(function_names[f]);
        put_u32(&out, length);
        put(&out, function_names[f], length);
    }
    put_u32(&out, classes);
    for (uint32_t c = 0; c < classes; ++c) {
        put_u64(&out, part_bytes[first[c]]);
        put(&out, parts[first[c]], part_bytes[first[c]]);
    }
    put_u32(&out, rank_count);
    put_ranges(&out, class_of, rank_count, classes);
    free(class_of);
    free(hashes);
    if (out.failed) {
        free(out.data);
        errno = ENOMEM;
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
