/*
 * Internal: growable byte blobs for the messages exchanged between ranks
 * (host byte order: all ranks of a run share one architecture), and a
 * bounds-checked cursor to read them back.
 */
#ifndef ADAPTRACE_FORMAT_BLOB_H
#define ADAPTRACE_FORMAT_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct adt_blob {
    uint8_t *data;
    size_t size;
    size_t capacity;
    bool failed; /* an allocation failed; later puts are ignored */
} adt_blob;

static inline void adt_blob_put(adt_blob *blob, const void *bytes, size_t size)
{
    if (blob->failed)
        return;
    if (blob->size + size > blob->capacity) {
        size_t capacity = blob->capacity ? blob->capacity : 256;
        while (capacity < blob->size + size)
            capacity *= 2;
        uint8_t *grown = realloc(blob->data, capacity);
        if (!grown) {
            blob->failed = true;
            return;
        }
        blob->data = grown;
        blob->capacity = capacity;
    }
    if (size)
        memcpy(blob->data + blob->size, bytes, size);
    blob->size += size;
}

static inline void adt_blob_put_u32(adt_blob *blob, uint32_t value)
{
    adt_blob_put(blob, &value, sizeof value);
}

static inline void adt_blob_put_u64(adt_blob *blob, uint64_t value)
{
    adt_blob_put(blob, &value, sizeof value);
}

static inline void adt_blob_put_string(adt_blob *blob, const void *bytes, size_t size)
{
    adt_blob_put_u32(blob, (uint32_t)size);
    adt_blob_put(blob, bytes, size);
}

static inline void adt_blob_free(adt_blob *blob)
{
    free(blob->data);
    memset(blob, 0, sizeof *blob);
}

typedef struct adt_cursor {
    const uint8_t *data;
    size_t size;
    size_t offset;
    bool failed; /* read past the end; later reads return zeros */
} adt_cursor;

static inline const void *adt_cursor_take(adt_cursor *cursor, size_t size)
{
    if (cursor->failed || size > cursor->size - cursor->offset) {
        cursor->failed = true;
        return NULL;
    }
    const void *at = cursor->data + cursor->offset;
    cursor->offset += size;
    return at;
}

static inline uint32_t adt_cursor_u32(adt_cursor *cursor)
{
    uint32_t value = 0;
    const void *at = adt_cursor_take(cursor, sizeof value);
    if (at)
        memcpy(&value, at, sizeof value);
    return value;
}

static inline uint64_t adt_cursor_u64(adt_cursor *cursor)
{
    uint64_t value = 0;
    const void *at = adt_cursor_take(cursor, sizeof value);
    if (at)
        memcpy(&value, at, sizeof value);
    return value;
}

#endif
