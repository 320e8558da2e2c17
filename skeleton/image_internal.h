/*
 * image_internal.h: the head of an image of the share (skeleton/ only:
 * written by image_save.c in a signal handler, read by image_read.c in
 * normal context; skeleton.h says what the image holds).
 */
#ifndef ADAPTRACE_SKELETON_IMAGE_INTERNAL_H
#define ADAPTRACE_SKELETON_IMAGE_INTERNAL_H

#include <stdint.h>

#include "skeleton.h"

#define ADT_SKELETON_IMAGE_MAGIC "ADTSKIM"
#define ADT_SKELETON_IMAGE_VERSION 1u

typedef struct adt_skeleton_image_head {
    char magic[8];
    uint32_t version;
    uint32_t skeleton_count;
    uint64_t skeleton_bytes;  /* sizeof(adt_skeleton) of the build that wrote it */
    uint64_t share_address;   /* the share's first byte in the saving process */
    uint64_t region_bytes;    /* the claimed slabs that follow the headers */
} adt_skeleton_image_head;

_Static_assert(sizeof(adt_skeleton_image_head) % 8 == 0 && sizeof(adt_skeleton) % 8 == 0,
               "the slabs that follow the headers stay 8-byte aligned in the image");

#endif
