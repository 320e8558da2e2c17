/* Shared by the writer and the reader of skeleton.adts, and the reader of
 * an image of the share (image_read.c), only. */
#ifndef ADAPTRACE_SKELETON_FILE_H
#define ADAPTRACE_SKELETON_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skeleton.h"

/* FNV-1a 64 over every byte before the file's last 8 (which hold it). */
uint64_t adt_skeleton_checksum(const uint8_t *data, size_t size);

/* adt_skeleton_rank_encode of these threads' skeletons, in this order
 * (the share's, or those rebuilt from an image of it: image_read.c).
 * NULL when out of memory. */
uint8_t *adt_skeleton_threads_encode(adt_skeleton *const *threads, size_t count, uint32_t rank, size_t *bytes);

/* How many varint fields a key reads as; UINT32_MAX when it does not read
 * as varints (the merge then matches it only byte for byte). */
uint32_t adt_skeleton_key_fields(const uint8_t *key, uint32_t length);

/* One thread's timing section (docs/folding.md, "skeleton.adts"). */
typedef struct adt_skeleton_timing_part {
    uint64_t untimed;
    uint64_t span;
    uint32_t span_rank;
    uint32_t pair_count;
    adt_skeleton_pair *pairs; /* malloc'd */
} adt_skeleton_timing_part;

/* The fewest bytes of one pair in the file: two varints and two
 * histograms of at least seven one-byte varints, two f64, the mask and
 * one bin (the bound of a claimed pair count). */
#define ADT_SKELETON_PAIR_MIN_BYTES (2u + 2u * (7u + 16u + 1u + 1u))

/* Reads thread_count timing sections from *at (advanced) up to end into
 * out; false with one line in error (every pairs array of out freed and
 * NULL). Checks each pair's own consistency and their order. */
bool adt_skeleton_timing_decode(const uint8_t **at, const uint8_t *end, uint32_t thread_count,
                                adt_skeleton_timing_part *out, char *error, size_t error_size);
void adt_skeleton_timing_parts_free(adt_skeleton_timing_part *parts, uint32_t count);

#endif
