/*
 * image_save.c: an image of the share (skeleton.h), taken in a signal
 * handler (the rescue of a run ended by a signal). Async-signal-safe
 * throughout: atomic loads of the share's counts (adt_skeleton_count,
 * adt_skeleton_at, adt_skeleton_share_claimed_bytes) and memcpy into the
 * caller's block; no lock, no malloc, no stdio.
 *
 * The share is not changing while it is copied: the caller stopped every
 * thread's folding first. What may still happen is a thread's first MPI
 * call claiming a slab: its slab lies beyond the slabs counted at the
 * image's beginning, and its skeleton, if counted, is written as one that
 * never folded (it never will: folding is stopped). The encoder's own
 * room in each first slab keeps changing (a call's key being made); the
 * reader does not use it, and the caller hashes the bytes as copied.
 */
#include <string.h>

#include "image_internal.h"
#include "layout_internal.h"

static const adt_skeleton never_folded = { .stop = ADT_SKELETON_RUNNING, .previous = ADT_SKELETON_NO_PREVIOUS };

void adt_skeleton_image_begin(adt_skeleton_image_cursor *cursor)
{
    /* The count first: a skeleton counted has its slab among the slabs
     * claimed by then (its claim comes before its count). */
    size_t count = adt_skeleton_count();
    *cursor = (adt_skeleton_image_cursor){
        .share_address = (uint64_t)(uintptr_t)adt_skeleton_share_memory(),
        .region_bytes = adt_skeleton_share_claimed_bytes(),
        .skeleton_count = (uint32_t)count,
        .hash = ADT_SKELETON_FNV_START,
    };
    cursor->total_bytes = sizeof(adt_skeleton_image_head) + (uint64_t)count * sizeof(adt_skeleton) +
                          cursor->region_bytes + sizeof cursor->hash;
}

/* Skeleton i's header as the image holds it. */
static adt_skeleton header_of(const adt_skeleton_image_cursor *cursor, size_t i)
{
    const adt_skeleton *skeleton = adt_skeleton_at(i);
    uint64_t at = (uint64_t)(uintptr_t)skeleton;
    if (at >= cursor->share_address + cursor->region_bytes && at < cursor->share_address + adt_skeleton_share_bytes())
        return never_folded;
    return *skeleton;
}

size_t adt_skeleton_image_next(adt_skeleton_image_cursor *cursor, void *block, size_t block_bytes)
{
    uint64_t headers_end = sizeof(adt_skeleton_image_head) + (uint64_t)cursor->skeleton_count * sizeof(adt_skeleton);
    uint64_t left = cursor->total_bytes - cursor->offset;
    size_t size = left < block_bytes ? (size_t)left : block_bytes;
    if (size == 0)
        return 0;
    uint64_t at = cursor->offset;
    if (at < sizeof(adt_skeleton_image_head)) {
        adt_skeleton_image_head head = {
            .magic = ADT_SKELETON_IMAGE_MAGIC, .version = ADT_SKELETON_IMAGE_VERSION,
            .skeleton_count = cursor->skeleton_count, .skeleton_bytes = sizeof(adt_skeleton),
            .share_address = cursor->share_address, .region_bytes = cursor->region_bytes
        };
        size_t part = sizeof head - (size_t)at < size ? sizeof head - (size_t)at : size;
        memcpy(block, (const uint8_t *)&head + at, part);
        size = part;
    } else if (at < headers_end) {
        /* One header (or the rest of one) per block. */
        size_t index = (size_t)((at - sizeof(adt_skeleton_image_head)) / sizeof(adt_skeleton));
        size_t within = (size_t)((at - sizeof(adt_skeleton_image_head)) % sizeof(adt_skeleton));
        adt_skeleton header = header_of(cursor, index);
        size_t part = sizeof header - within < size ? sizeof header - within : size;
        memcpy(block, (const uint8_t *)&header + within, part);
        size = part;
    } else if (at < headers_end + cursor->region_bytes) {
        uint64_t region_left = headers_end + cursor->region_bytes - at;
        size = region_left < size ? (size_t)region_left : size;
        memcpy(block, adt_skeleton_share_memory() + (at - headers_end), size);
    } else {
        /* The trailer: the hash of everything before it. */
        size_t within = (size_t)(at - headers_end - cursor->region_bytes);
        uint64_t hash = cursor->hash;
        size = sizeof hash - within < size ? sizeof hash - within : size;
        memcpy(block, (const uint8_t *)&hash + within, size);
        cursor->offset += size;
        return size;
    }
    cursor->hash = adt_skeleton_fnv_more(cursor->hash, block, size);
    cursor->offset += size;
    return size;
}
