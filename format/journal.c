/*
 * The definitions journal: every definition the registry adds, appended
 * in order as a call that adt_defs_replay (journal_replay.c) makes again
 * on a fresh registry, which then hands out the same local ids. It lets a
 * process that is ending save its definitions from a signal handler
 * (adt_defs_journal: one pointer and one length, both already whole)
 * where the registry's hash tables, behind their mutex and in malloc'd
 * memory, cannot be read.
 *
 * Execution contexts:
 * - journal_* appends: normal context, under the registry's mutex (every
 *   caller in defs.c holds it), so entries are in the order ids were made.
 * - adt_defs_journal: any context, async-signal-safe (two loads).
 *
 * Memory: one private mapping reserved at creation (MAP_NORESERVE, so only
 * the pages written count); an entry is made visible by a release store
 * of the committed length after its bytes are written, so a reader never
 * sees a half-written entry. A journal that fills up stops growing (the
 * definitions themselves still work) and says so in adt_defs_journal.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/defs_internal.h"

#define JOURNAL_RESERVED_BYTES (64ull << 20)

int adt_journal_open(adt_journal *journal)
{
    void *memory = mmap(NULL, JOURNAL_RESERVED_BYTES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED)
        return -1;
    journal->memory = memory;
    journal->capacity = JOURNAL_RESERVED_BYTES;
    journal->committed = 0;
    journal->full = false;
    return 0;
}

void adt_journal_close(adt_journal *journal)
{
    if (journal->memory != NULL)
        munmap(journal->memory, journal->capacity);
    journal->memory = NULL;
}

/* ---- building one entry (under the registry's mutex) -------------------- */

typedef struct entry_builder {
    adt_journal *journal;
    size_t start;    /* where the entry's header goes */
    size_t position; /* next payload byte */
    bool overflow;
} entry_builder;

static entry_builder entry_begin(adt_journal *journal)
{
    size_t start = atomic_load_explicit(&journal->committed, memory_order_relaxed);
    entry_builder builder = { .journal = journal, .start = start, .position = start + 8,
                              .overflow = journal->full || journal->memory == NULL };
    return builder;
}

static void put(entry_builder *builder, const void *bytes, size_t size)
{
    if (size == 0)
        return;
    if (builder->overflow || size > builder->journal->capacity - builder->position) {
        builder->overflow = true;
        return;
    }
    memcpy(builder->journal->memory + builder->position, bytes, size);
    builder->position += size;
}

static void put_u32(entry_builder *builder, uint32_t value)
{
    put(builder, &value, sizeof value);
}

static void put_string(entry_builder *builder, const char *text)
{
    if (text == NULL) {
        put_u32(builder, JOURNAL_NO_STRING);
        return;
    }
    size_t length = strlen(text);
    put_u32(builder, (uint32_t)length);
    put(builder, text, length);
}

static void entry_commit(entry_builder *builder, uint32_t op)
{
    adt_journal *journal = builder->journal;
    size_t padded = (builder->position + 7u) & ~(size_t)7u;
    if (builder->overflow || padded > journal->capacity) {
        journal->full = true;
        return;
    }
    memset(journal->memory + builder->position, 0, padded - builder->position);
    uint32_t header[2] = { op, (uint32_t)(builder->position - builder->start - 8) };
    memcpy(journal->memory + builder->start, header, sizeof header);
    atomic_store_explicit(&journal->committed, padded, memory_order_release);
}

void adt_journal_region(adt_journal *journal, const char *name, const char *canonical_name, uint32_t role,
                        uint32_t paradigm, const char *source_file, uint32_t begin_line, uint32_t end_line)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, role);
    put_u32(&entry, paradigm);
    put_u32(&entry, begin_line);
    put_u32(&entry, end_line);
    put_string(&entry, name);
    put_string(&entry, canonical_name);
    put_string(&entry, source_file);
    entry_commit(&entry, OP_REGION);
}

void adt_journal_source_location(adt_journal *journal, const char *file, uint32_t line)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, line);
    put_string(&entry, file);
    entry_commit(&entry, OP_SOURCE_LOCATION);
}

void adt_journal_comm(adt_journal *journal, const adt_comm_desc *comm)
{
    entry_builder entry = entry_begin(journal);
    uint32_t size = comm->is_self ? 0 : comm->size;
    uint32_t remote_size = comm->is_self ? 0 : comm->remote_size;
    put_u32(&entry, comm->creator_world_rank);
    put_u32(&entry, comm->sequence);
    put_u32(&entry, comm->parent);
    put_u32(&entry, comm->is_self);
    put_u32(&entry, size);
    put_u32(&entry, remote_size);
    put_string(&entry, comm->name);
    put(&entry, comm->members, (size_t)size * sizeof(uint32_t));
    put(&entry, comm->remote_members, (size_t)remote_size * sizeof(uint32_t));
    entry_commit(&entry, OP_COMM);
}

void adt_journal_comm_name(adt_journal *journal, uint32_t comm, const char *name)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, comm);
    put_string(&entry, name);
    entry_commit(&entry, OP_COMM_NAME);
}

void adt_journal_metric(adt_journal *journal, const char *name, const char *unit)
{
    entry_builder entry = entry_begin(journal);
    put_string(&entry, name);
    put_string(&entry, unit);
    entry_commit(&entry, OP_METRIC);
}

void adt_journal_rma_win(adt_journal *journal, const adt_rma_win_key *key, uint32_t comm)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, key->creator_world_rank);
    put_u32(&entry, key->sequence);
    put_u32(&entry, comm);
    entry_commit(&entry, OP_RMA_WIN);
}

void adt_journal_group(adt_journal *journal, const uint32_t *members, uint32_t size)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, size);
    put(&entry, members, (size_t)size * sizeof *members);
    entry_commit(&entry, OP_GROUP);
}

void adt_journal_io_file(adt_journal *journal, const char *name)
{
    entry_builder entry = entry_begin(journal);
    put_string(&entry, name);
    entry_commit(&entry, OP_IO_FILE);
}

void adt_journal_parameter(adt_journal *journal, const char *name)
{
    entry_builder entry = entry_begin(journal);
    put_string(&entry, name);
    entry_commit(&entry, OP_PARAMETER);
}

void adt_journal_user_metric(adt_journal *journal, const char *name)
{
    entry_builder entry = entry_begin(journal);
    put_string(&entry, name);
    entry_commit(&entry, OP_USER_METRIC);
}

void adt_journal_io_handle(adt_journal *journal, const adt_io_handle_key *key)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, key->creator_world_rank);
    put_u32(&entry, key->sequence);
    put_u32(&entry, key->file);
    put_u32(&entry, key->comm);
    entry_commit(&entry, OP_IO_HANDLE);
}

/* ---- the snapshot -------------------------------------------------------------- */

const void *adt_defs_journal(const adt_defs *defs, size_t *bytes, bool *complete)
{
    const adt_journal *journal = &defs->journal;
    *bytes = atomic_load_explicit(&journal->committed, memory_order_acquire);
    *complete = !journal->full && journal->memory != NULL;
    return journal->memory;
}

