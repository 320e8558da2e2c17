/*
 * image_read.c: the rank's part encoded from an image of the share
 * (skeleton.h), in adaptrace-recover (normal context: malloc, no MPI).
 *
 * The slabs are copied into memory of this process and every table laid
 * out again at its place in them, from the capacities it holds
 * (adt_skeleton_*_lay_out: the layout its init made and its growth kept);
 * a table that does not fit in the slabs, or whose counts exceed its
 * capacities, makes the image refused. The links inside the grammar
 * (symbol and rule indices) are the saving process's, trusted once the
 * image's own hash (its last 8 bytes) matches: they were whole when
 * written (no thread folded then, see image_save.c), and checking every
 * one would take a walk of every rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_internal.h"
#include "image_internal.h"
#include "layout_internal.h"
#include "signatures_internal.h"
#include "skeleton_file.h"
#include "timing_internal.h"

typedef struct region {
    uint8_t *memory;        /* the slabs, copied */
    uint64_t saved_address; /* where they were in the saving process */
    uint64_t bytes;
} region;

/* Where a saved pointer points in the copy, when `bytes` from there lie in
 * the slabs (and it is 8-byte aligned, as every table is); else NULL. */
static void *in_region(const region *slabs, const void *saved, size_t bytes)
{
    uint64_t at = (uint64_t)(uintptr_t)saved - slabs->saved_address;
    if ((uint64_t)(uintptr_t)saved < slabs->saved_address || at % 8 != 0 || at > slabs->bytes ||
        bytes > slabs->bytes - at)
        return NULL;
    return slabs->memory + at;
}

static bool rebuild_signatures(const region *slabs, adt_skeleton *skeleton)
{
    adt_skeleton_signatures *table = in_region(slabs, skeleton->signatures, sizeof *table);
    if (!table || table->entry_capacity == 0 || table->slot_mask != adt_skeleton_hash_slots(table->entry_capacity) - 1 ||
        !in_region(slabs, skeleton->signatures, adt_skeleton_signatures_bytes(table->entry_capacity, table->byte_capacity)))
        return false;
    adt_skeleton_signatures_lay_out(table, table->entry_capacity, table->byte_capacity);
    if (table->count > table->entry_capacity || table->bytes_used > table->byte_capacity)
        return false;
    for (uint32_t i = 0; i < table->count; ++i)
        if (table->entries[i].offset > table->bytes_used || table->entries[i].length > table->bytes_used - table->entries[i].offset)
            return false;
    skeleton->signatures = table;
    return true;
}

static bool rebuild_grammar(const region *slabs, adt_skeleton *skeleton)
{
    adt_skeleton_grammar *g = in_region(slabs, skeleton->grammar, sizeof *g);
    if (!g || (g->digram_mask & (g->digram_mask + 1)) != 0 || g->digram_mask == 0 || g->symbol_capacity < 2 ||
        g->rule_capacity < 1)
        return false;
    uint32_t log2 = (uint32_t)__builtin_ctz(g->digram_mask + 1);
    if (!in_region(slabs, skeleton->grammar, adt_skeleton_grammar_bytes(g->symbol_capacity, g->rule_capacity, log2)))
        return false;
    adt_skeleton_grammar_lay_out(g, g->symbol_capacity, g->rule_capacity, log2);
    if (g->symbols_used > g->symbol_capacity || g->rules_used > g->rule_capacity ||
        g->followed >= g->symbol_capacity || (g->followed != ADT_SKELETON_GRAMMAR_NIL && g->matched >= g->expected_length))
        return false;
    skeleton->grammar = g;
    return true;
}

static bool rebuild_timing(const region *slabs, adt_skeleton *skeleton)
{
    adt_skeleton_timing *timing = in_region(slabs, skeleton->timing, sizeof *timing);
    if (!timing || timing->capacity == 0 || timing->slot_mask != adt_skeleton_hash_slots(timing->capacity) - 1 ||
        !in_region(slabs, skeleton->timing, adt_skeleton_timing_bytes(timing->capacity)))
        return false;
    adt_skeleton_timing_lay_out(timing, timing->capacity);
    if (timing->count > timing->capacity)
        return false;
    /* The hot path's shortcuts point into the saving process; the export
     * reads the entries only. */
    timing->last = timing->expected = NULL;
    skeleton->timing = timing;
    return true;
}

/* A skeleton with tables has all three; one that never had a slab (or
 * was being claimed) has none. */
static bool rebuild(const region *slabs, adt_skeleton *skeleton)
{
    if (skeleton->stop < ADT_SKELETON_RUNNING || skeleton->stop >= ADT_SKELETON_STOP_CAUSES)
        return false;
    skeleton->encoder_memory = NULL;
    if (!skeleton->signatures && !skeleton->grammar && !skeleton->timing)
        return true;
    return rebuild_signatures(slabs, skeleton) && rebuild_grammar(slabs, skeleton) && rebuild_timing(slabs, skeleton);
}

uint8_t *adt_skeleton_image_encode(const uint8_t *image, size_t image_bytes, uint32_t rank, size_t *bytes,
                                   char *error, size_t error_size)
{
    adt_skeleton_image_head head;
    if (image_bytes < sizeof head) {
        snprintf(error, error_size, "shorter than its head");
        return NULL;
    }
    memcpy(&head, image, sizeof head);
    if (memcmp(head.magic, ADT_SKELETON_IMAGE_MAGIC, sizeof head.magic) != 0 ||
        head.version != ADT_SKELETON_IMAGE_VERSION || head.skeleton_bytes != sizeof(adt_skeleton)) {
        snprintf(error, error_size, "not an image of this build's skeletons");
        return NULL;
    }
    uint64_t headers = (uint64_t)head.skeleton_count * sizeof(adt_skeleton), hash;
    if (head.region_bytes % 8 != 0 || image_bytes - sizeof head < sizeof hash ||
        headers > image_bytes - sizeof head - sizeof hash ||
        head.region_bytes != image_bytes - sizeof head - headers - sizeof hash) {
        snprintf(error, error_size, "its lengths do not add up");
        return NULL;
    }
    memcpy(&hash, image + image_bytes - sizeof hash, sizeof hash);
    if (adt_skeleton_fnv_more(ADT_SKELETON_FNV_START, image, image_bytes - sizeof hash) != hash) {
        snprintf(error, error_size, "its hash does not match");
        return NULL;
    }
    region slabs = { malloc(head.region_bytes ? head.region_bytes : 1), head.share_address, head.region_bytes };
    adt_skeleton *skeletons = malloc(headers ? headers : 1);
    adt_skeleton **threads = malloc(sizeof *threads * (head.skeleton_count ? head.skeleton_count : 1));
    uint8_t *part = NULL;
    if (!slabs.memory || !skeletons || !threads) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    memcpy(skeletons, image + sizeof head, headers);
    memcpy(slabs.memory, image + sizeof head + headers, head.region_bytes);
    for (uint32_t i = 0; i < head.skeleton_count; ++i) {
        if (!rebuild(&slabs, &skeletons[i])) {
            snprintf(error, error_size, "thread %u's tables do not fit its slabs", i);
            goto done;
        }
        threads[i] = &skeletons[i];
    }
    part = adt_skeleton_threads_encode(threads, head.skeleton_count, rank, bytes);
    if (!part)
        snprintf(error, error_size, "out of memory");
done:
    free(threads);
    free(skeletons);
    free(slabs.memory);
    return part;
}
