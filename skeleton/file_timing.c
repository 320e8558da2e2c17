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

static double le_double(const uint8_t *b)
{
    uint64_t bits = le(b, 8);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static void say(char *error, size_t error_size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
}

/* One histogram; false when it does not hold together. */
static bool histogram_read(const uint8_t *b, adt_skeleton_histogram *h)
{
    h->count = le(b, 8);
    h->min = le(b + 8, 8);
    h->max = le(b + 16, 8);
    h->min_rank = (uint32_t)le(b + 24, 4);
    h->max_rank = (uint32_t)le(b + 28, 4);
    h->mean = le_double(b + 32);
    h->m2 = le_double(b + 40);
    h->low = (uint32_t)le(b + 48, 4);
    h->width_log2 = (uint32_t)le(b + 52, 4);
    uint64_t binned = 0;
    for (uint32_t i = 0; i < ADT_SKELETON_BINS; ++i) {
        h->bins[i] = le(b + 56 + 8 * i, 8);
        binned += h->bins[i];
    }
    /* Bins of width 2^5 cover every position; a mean may differ from min
     * or max by rounding only. */
    double slack = 1e-6 * (double)h->max + 1;
    return h->count > 0 && h->min <= h->max && binned == h->count && h->width_log2 <= 5 &&
           h->low < ADT_SKELETON_POSITIONS && h->low % (1u << h->width_log2) == 0 && isfinite(h->mean) &&
           isfinite(h->m2) && h->m2 >= 0 && h->mean >= (double)h->min - slack && h->mean <= (double)h->max + slack;
}

_Static_assert(ADT_SKELETON_HISTOGRAM_BYTES == 56 + 8 * ADT_SKELETON_BINS, "the histogram's fields below");

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
    const uint8_t *b = *at;
    for (uint32_t t = 0; t < thread_count; ++t)
        out[t].pairs = NULL;
    for (uint32_t t = 0; t < thread_count; ++t) {
        adt_skeleton_timing_part *part = &out[t];
        if ((size_t)(end - b) < 24) {
            say(error, error_size, "cut short in thread %u's timing", t);
            goto failed;
        }
        part->untimed = le(b, 8);
        part->span = le(b + 8, 8);
        part->span_rank = (uint32_t)le(b + 16, 4);
        part->pair_count = (uint32_t)le(b + 20, 4);
        b += 24;
        if (part->pair_count > (size_t)(end - b) / ADT_SKELETON_PAIR_BYTES) {
            say(error, error_size, "cut short: thread %u's timing claims %u pairs", t, part->pair_count);
            goto failed;
        }
        part->pairs = malloc(sizeof *part->pairs * (part->pair_count ? part->pair_count : 1));
        if (!part->pairs) {
            say(error, error_size, "out of memory reading thread %u's timing", t);
            goto failed;
        }
        for (uint32_t p = 0; p < part->pair_count; ++p, b += ADT_SKELETON_PAIR_BYTES) {
            adt_skeleton_pair *pair = &part->pairs[p];
            pair->previous = (uint32_t)le(b, 4);
            pair->signature = (uint32_t)le(b + 4, 4);
            bool ordered = p == 0 || pair->previous > part->pairs[p - 1].previous ||
                           (pair->previous == part->pairs[p - 1].previous &&
                            pair->signature > part->pairs[p - 1].signature);
            if (!histogram_read(b + 8, &pair->compute) ||
                !histogram_read(b + 8 + ADT_SKELETON_HISTOGRAM_BYTES, &pair->duration) ||
                pair->compute.count != pair->duration.count || !ordered) {
                say(error, error_size, "corrupt: thread %u's timing pair %u", t, p);
                goto failed;
            }
        }
    }
    *at = b;
    return true;
failed:
    adt_skeleton_timing_parts_free(out, thread_count);
    return false;
}
