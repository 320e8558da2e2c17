/*
 * The end-of-run writer's hooks into OTF2 (end of run, normal context):
 * OTF2's error reports captured as the detail of our messages, the flush
 * and chunk-pool memory callbacks, and opening the archive with them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/otf2_collectives.h"
#include "format/writer_internal.h"

/* OTF2 reports its own errors through this hook; the first one becomes the
 * detail of our message instead of going to stderr.
 *
 * After OTF2 reported an error the archive object is abandoned: no further
 * call touches it, not even a close. OTF2 3.0.2 frees a file buffer twice
 * when a writer whose write failed (EFBIG, ENOSPC) is closed, so closing
 * would turn a full disk into a crash; leaking the archive's memory on this
 * error path is the lesser harm. */
static __thread char otf2_error_detail[256];
static __thread bool otf2_error_seen;
static OTF2_ErrorCode capture_otf2_error(void *user, const char *file, uint64_t line,
                                         const char *function, OTF2_ErrorCode code,
                                         const char *format, va_list args)
{
    (void)user, (void)file, (void)line, (void)function;
    otf2_error_seen = true;
    if (!otf2_error_detail[0]) {
        char message[200];
        vsnprintf(message, sizeof message, format, args);
        snprintf(otf2_error_detail, sizeof otf2_error_detail, "%s: %s",
                 OTF2_Error_GetDescription(code), message);
    }
    return code;
}

OTF2_ErrorCallback adt_writer_capture_otf2_errors(void)
{
    otf2_error_detail[0] = '\0';
    otf2_error_seen = false;
    return OTF2_Error_RegisterCallback(capture_otf2_error, NULL);
}

bool adt_writer_otf2_failed(void)
{
    return otf2_error_seen;
}

const char *adt_writer_otf2_detail(const char *fallback)
{
    return otf2_error_detail[0] ? otf2_error_detail : fallback;
}

/* With the bytes this rank's files held when it failed: a full disk shows
 * how far the write got (a file size limit stops at that size). */
void adt_writer_otf2_error(writer *w, const char *what, OTF2_ErrorCode code)
{
    adt_writer_error(w, "writing trace %s: %s failed in %s (%s; %llu bytes of this rank's files written)",
              w->input->archive_dir, what, w->temp_dir,
              adt_writer_otf2_detail(OTF2_Error_GetName(code)),
              (unsigned long long)adt_writer_bytes_of_rank(w));
}

static OTF2_FlushType flush_always(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                   void *caller, bool final)
{
    (void)user, (void)type, (void)location, (void)caller, (void)final;
    return OTF2_FLUSH;
}

/* No post-flush callback: with one OTF2 would record every chunk written
 * during this final write as a BufferFlush event, which it is not. */
static const OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = flush_always,
                                                     .otf2_post_flush = NULL };

/* One chunk per OTF2 writer: when it is full OTF2 gets no second one, so it
 * flushes the chunk to its file and reuses it. Without this OTF2 keeps up
 * to 128 MiB per writer in memory until the writer is closed, which would
 * be a second copy of the trace.
 *
 * A closed writer's chunk goes back to the writer's pool, and the next
 * writer of the same chunk size takes it from there, so the chunk's pages
 * are faulted in once per trace, not once per writer. That matters because
 * OTF2 fills the unused rest of a writer's last chunk when it closes the
 * writer, touching all of a definition writer's chunk for a few hundred
 * bytes of definitions. Writers are open one at a time, so the pool
 * usually holds a single chunk, never more than CHUNK_POOL_SIZE. */
typedef struct writer_chunk {
    void *memory;
    uint64_t bytes;
    bool in_use;
} writer_chunk;

static void *take_spare_chunk(chunk_pool *pool, uint64_t chunk_bytes)
{
    for (size_t i = 0; i < pool->count; ++i)
        if (pool->spares[i].bytes == chunk_bytes) {
            void *memory = pool->spares[i].memory;
            pool->spares[i] = pool->spares[--pool->count];
            return memory;
        }
    return malloc(chunk_bytes);
}

static void return_spare_chunk(chunk_pool *pool, void *memory, uint64_t chunk_bytes)
{
    if (pool->count == CHUNK_POOL_SIZE) {
        free(memory);
        return;
    }
    pool->spares[pool->count++] = (spare_chunk){ memory, chunk_bytes };
}

void adt_writer_free_chunk_pool(chunk_pool *pool)
{
    for (size_t i = 0; i < pool->count; ++i)
        free(pool->spares[i].memory);
    pool->count = 0;
}

static void *allocate_chunk(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer,
                            uint64_t chunk_bytes)
{
    (void)type, (void)location;
    writer_chunk *chunk = *per_buffer;
    if (!chunk) {
        chunk = calloc(1, sizeof *chunk);
        if (!chunk)
            return NULL;
        *per_buffer = chunk;
    }
    if (chunk->in_use)
        return NULL;
    if (!chunk->memory) {
        if (!(chunk->memory = take_spare_chunk(user, chunk_bytes)))
            return NULL;
        chunk->bytes = chunk_bytes;
    }
    chunk->in_use = true;
    return chunk->memory;
}

static void free_chunks(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer, bool final)
{
    (void)type, (void)location;
    writer_chunk *chunk = *per_buffer;
    if (!chunk)
        return;
    chunk->in_use = false;
    if (final) {
        if (chunk->memory)
            return_spare_chunk(user, chunk->memory, chunk->bytes);
        free(chunk);
        *per_buffer = NULL;
    }
}

static const OTF2_MemoryCallbacks memory_callbacks = { .otf2_allocate = allocate_chunk,
                                                       .otf2_free_all = free_chunks };

int adt_writer_open_archive(writer *w)
{
    w->archive = OTF2_Archive_Open(w->temp_dir, ARCHIVE_NAME, OTF2_FILEMODE_WRITE, EVENT_CHUNK_BYTES,
                                   DEF_CHUNK_BYTES, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!w->archive) {
        adt_writer_otf2_error(w, "opening the archive", OTF2_ERROR_INVALID);
        return -1;
    }
    OTF2_ErrorCode status = OTF2_Archive_SetFlushCallbacks(w->archive, &flush_callbacks, NULL);
    if (status == OTF2_SUCCESS)
        status = OTF2_Archive_SetMemoryCallbacks(w->archive, &memory_callbacks, &w->chunks);
    if (status == OTF2_SUCCESS)
        status = adt_otf2_set_collectives(w->archive, w->collectives, &w->otf2_context);
    if (status == OTF2_SUCCESS && w->input->creator)
        status = OTF2_Archive_SetCreator(w->archive, w->input->creator);
    if (status != OTF2_SUCCESS) {
        adt_writer_otf2_error(w, "configuring the archive", status);
        return -1;
    }
    return 0;
}
