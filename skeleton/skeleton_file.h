/* Shared by the writer and the reader of skeleton.adts only. */
#ifndef ADAPTRACE_SKELETON_FILE_H
#define ADAPTRACE_SKELETON_FILE_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a 64 over every byte before the file's last 8 (which hold it). */
uint64_t adt_skeleton_checksum(const uint8_t *data, size_t size);

#endif
