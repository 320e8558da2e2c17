/*
 * file_timing.c: the timing sections of skeleton.adts read back and
 * checked (tools, and rank 0 at the end of the run when it merges the
 * ranks of a class: malloc and stdio are fine here).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skeleton_file.h"

static uint64_t le(const uint8_t *b, int bytes)
{
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i)
        value = value << 8 | b[i];
    return value;
}

static void say(char *error, size_t error_size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
}

/* The bytes left to read, as a key's length (adt_skeleton_key_next). */
typedef struct cursor {
    const uint8_t *at;
    const uint8_t *end;
} cursor;

static bool take_varint(cursor *c, uint64_t *value)
{
    uint32_t length = (size_t)(c->end - c->at) > UINT32_MAX ? UINT32_MAX : (uint32_t)(c->end - c->at);
    uint32_t offset = 0;
    if (!adt_skeleton_key_next(c->at, length, &offset, value))
        return false;
    c->at += offset;
    return true;
}

static bool take_varint32(cursor *c, uint32_t *value)
{
    uint64_t wide;
    if (!take_varint(c, &wide) || wide > UINT32_MAX)
        return false;
    *value = (uint32_t)wide;
    return true;
}

static bool take_double(cursor *c, double *value)
{
    if (c->end - c->at < 8)
        return false;
    uint64_t bits = le(c->at, 8);
    memcpy(value, &bits, sizeof *value);
    c->at += 8;
    return true;
}

/* One histogram (docs/folding.md, "skeleton.adts"); false when it is cut
 * short or does not hold together. */
static bool histogram_read(cursor *c, adt_skeleton_histogram *h)
{
    uint64_t spread;
    if (!take_varint(c, &h->count) || !take_varint(c, &h->min) || !take_varint(c, &spread) ||
        spread > UINT64_MAX - h->min || !take_varint32(c, &h->min_rank) || !take_varint32(c, &h->max_rank) ||
        !take_double(c, &h->mean) || !take_double(c, &h->m2) || !take_varint32(c, &h->low) ||
        !take_varint32(c, &h->width_log2) || c->at == c->end)
        return false;
    h->max = h->min + spread;
    uint8_t held = *c->at++;
    uint64_t binned = 0;
    for (uint32_t i = 0; i < ADT_SKELETON_BINS; ++i) {
        h->bins[i] = 0;
        if (held & (1u << i)) {
            if (!take_varint(c, &h->bins[i]) || h->bins[i] == 0 || h->bins[i] > UINT64_MAX - binned)
                return false;
            binned += h->bins[i];
        }
    }
    /* Bins of width 2^5 cover every position; a mean may differ from min
     * or max by rounding only. */
    double slack = 1e-6 * (double)h->max + 1;
    return h->count > 0 && binned == h->count && h->width_log2 <= 5 && h->low < ADT_SKELETON_POSITIONS &&
           h->low % (1u << h->width_log2) == 0 && isfinite(h->mean) && isfinite(h->m2) && h->m2 >= 0 &&
           h->mean >= (double)h->min - slack && h->mean <= (double)h->max + slack;
}

void adt_skeleton_timing_parts_free(adt_skeleton_timing_part *parts, uint32_t count)
{
    for (uint32_t t = 0; t < count; ++t) {
        free(parts[t].pairs);
        parts[t].pairs = NULL;
    }
}

bool adt_skeleton_timing_decode(const uint8_t **at, const uint8_t *end, uint32_t thread_count,
                                adt_skeleton_timing_part *out, char *error, size_t error_size)
{
    cursor c = { *at, end };
    for (uint32_t t = 0; t < thread_count; ++t)
        out[t].pairs = NULL;
    for (uint32_t t = 0; t < thread_count; ++t) {
        adt_skeleton_timing_part *part = &out[t];
        if (!take_varint(&c, &part->untimed) || !take_varint(&c, &part->span) ||
            !take_varint32(&c, &part->span_rank) || !take_varint32(&c, &part->pair_count)) {
            say(error, error_size, "cut short in thread %u's timing", t);
            goto failed;
        }
        if (part->pair_count > (size_t)(c.end - c.at) / ADT_SKELETON_PAIR_MIN_BYTES) {
            say(error, error_size, "cut short: thread %u's timing claims %u pairs", t, part->pair_count);
            goto failed;
        }
        part->pairs = malloc(sizeof *part->pairs * (part->pair_count ? part->pair_count : 1));
        if (!part->pairs) {
            say(error, error_size, "out of memory reading thread %u's timing", t);
            goto failed;
        }
        for (uint32_t p = 0; p < part->pair_count; ++p) {
            adt_skeleton_pair *pair = &part->pairs[p];
            uint32_t previous_plus_one = 0;
            bool read = take_varint32(&c, &previous_plus_one) && take_varint32(&c, &pair->signature);
            pair->previous = previous_plus_one - 1u;
            bool ordered = p == 0 || pair->previous > part->pairs[p - 1].previous ||
                           (pair->previous == part->pairs[p - 1].previous &&
                            pair->signature > part->pairs[p - 1].signature);
            if (!read || !histogram_read(&c, &pair->compute) || !histogram_read(&c, &pair->duration) ||
                pair->compute.count != pair->duration.count || !ordered) {
                say(error, error_size, "corrupt: thread %u's timing pair %u", t, p);
                goto failed;
            }
        }
    }
    *at = c.at;
    return true;
failed:
    adt_skeleton_timing_parts_free(out, thread_count);
    return false;
}
