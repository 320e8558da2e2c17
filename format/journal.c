/*
 * The definitions journal: every definition the registry adds, appended
 * in order as a call that adt_defs_replay makes again on a fresh registry,
 * which then hands out the same local ids. It lets a process that is
 * ending save its definitions from a signal handler (adt_defs_journal:
 * one pointer and one length, both already whole) where the registry's
 * hash tables, behind their mutex and in malloc'd memory, cannot be read.
 *
 * Execution contexts:
 * - journal_* appends: normal context, under the registry's mutex (every
 *   caller in defs.c holds it), so entries are in the order ids were made.
 * - adt_defs_journal: any context, async-signal-safe (two loads).
 * - adt_defs_replay: the recovery, normal context.
 *
 * Memory: one private mapping reserved at creation (MAP_NORESERVE, so only
 * the pages written count); an entry is made visible by a release store
 * of the committed length after its bytes are written, so a reader never
 * sees a half-written entry. A journal that fills up stops growing (the
 * definitions themselves still work) and says so in adt_defs_journal.
 *
 * Entry: u32 op, u32 payload bytes, payload padded to 8 bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/defs_internal.h"

#define JOURNAL_RESERVED_BYTES (64ull << 20)
#define NO_STRING UINT32_MAX

enum journal_op {
    OP_REGION = 1,
    OP_SOURCE_LOCATION,
    OP_COMM,
    OP_COMM_NAME,
    OP_METRIC,
    OP_RMA_WIN,
    OP_GROUP,
    OP_IO_FILE,
    OP_IO_HANDLE,
};

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
        put_u32(builder, NO_STRING);
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

void adt_journal_io_handle(adt_journal *journal, const adt_io_handle_key *key)
{
    entry_builder entry = entry_begin(journal);
    put_u32(&entry, key->creator_world_rank);
    put_u32(&entry, key->sequence);
    put_u32(&entry, key->file);
    put_u32(&entry, key->comm);
    entry_commit(&entry, OP_IO_HANDLE);
}

/* ---- reading ------------------------------------------------------------------ */

const void *adt_defs_journal(const adt_defs *defs, size_t *bytes, bool *complete)
{
    const adt_journal *journal = &defs->journal;
    *bytes = atomic_load_explicit(&journal->committed, memory_order_acquire);
    *complete = !journal->full && journal->memory != NULL;
    return journal->memory;
}

typedef struct entry_reader {
    const uint8_t *at;
    size_t left;
    bool failed;
    char *strings[3]; /* copies with their NUL, freed after each entry */
    size_t string_count;
} entry_reader;

static uint32_t take_u32(entry_reader *reader)
{
    uint32_t value = 0;
    if (reader->left < sizeof value) {
        reader->failed = true;
        return 0;
    }
    memcpy(&value, reader->at, sizeof value);
    reader->at += sizeof value;
    reader->left -= sizeof value;
    return value;
}

static const char *take_string(entry_reader *reader)
{
    uint32_t length = take_u32(reader);
    if (reader->failed || length == NO_STRING)
        return NULL;
    if (length > reader->left || reader->string_count == sizeof reader->strings / sizeof reader->strings[0]) {
        reader->failed = true;
        return NULL;
    }
    char *copy = malloc((size_t)length + 1);
    if (copy == NULL) {
        reader->failed = true;
        return NULL;
    }
    memcpy(copy, reader->at, length);
    copy[length] = '\0';
    reader->at += length;
    reader->left -= length;
    reader->strings[reader->string_count++] = copy;
    return copy;
}

static const uint32_t *take_ranks(entry_reader *reader, uint32_t count)
{
    size_t bytes = (size_t)count * sizeof(uint32_t);
    if (bytes > reader->left) {
        reader->failed = true;
        return NULL;
    }
    const uint32_t *ranks = (const uint32_t *)reader->at;
    reader->at += bytes;
    reader->left -= bytes;
    return ranks;
}

/* Member lists may sit at any 4-byte offset; copied to aligned memory. */
static uint32_t *aligned_ranks(const uint32_t *ranks, uint32_t count)
{
    uint32_t *copy = malloc((size_t)count * sizeof *copy + 1);
    if (copy != NULL && count > 0)
        memcpy(copy, ranks, (size_t)count * sizeof *copy);
    return copy;
}

static bool replay_comm(adt_defs *defs, entry_reader *reader)
{
    adt_comm_desc comm = {0};
    comm.creator_world_rank = take_u32(reader);
    comm.sequence = take_u32(reader);
    comm.parent = take_u32(reader);
    comm.is_self = take_u32(reader) != 0;
    comm.size = take_u32(reader);
    comm.remote_size = take_u32(reader);
    comm.name = take_string(reader);
    const uint32_t *members = take_ranks(reader, comm.size);
    const uint32_t *remote = take_ranks(reader, comm.remote_size);
    if (reader->failed)
        return false;
    uint32_t *members_copy = aligned_ranks(members, comm.size);
    uint32_t *remote_copy = aligned_ranks(remote, comm.remote_size);
    comm.members = members_copy;
    comm.remote_members = remote_copy;
    bool ok = members_copy != NULL && remote_copy != NULL && adt_defs_comm(defs, &comm) != ADT_UNDEFINED_ID;
    free(members_copy);
    free(remote_copy);
    return ok;
}

static bool replay_group(adt_defs *defs, entry_reader *reader)
{
    uint32_t size = take_u32(reader);
    const uint32_t *members = take_ranks(reader, size);
    if (reader->failed)
        return false;
    uint32_t *copy = aligned_ranks(members, size);
    bool ok = copy != NULL && adt_defs_group(defs, copy, size) != ADT_UNDEFINED_ID;
    free(copy);
    return ok;
}

static bool replay_entry(adt_defs *defs, uint32_t op, entry_reader *reader)
{
    switch (op) {
    case OP_REGION: {
        uint32_t role = take_u32(reader), paradigm = take_u32(reader);
        uint32_t begin_line = take_u32(reader), end_line = take_u32(reader);
        const char *name = take_string(reader);
        const char *canonical_name = take_string(reader);
        const char *source_file = take_string(reader);
        return !reader->failed && adt_defs_region(defs, name, canonical_name, (adt_region_role)role,
                                                  (adt_paradigm)paradigm, source_file, begin_line,
                                                  end_line) != ADT_UNDEFINED_ID;
    }
    case OP_SOURCE_LOCATION: {
        uint32_t line = take_u32(reader);
        const char *file = take_string(reader);
        return !reader->failed && adt_defs_source_location(defs, file, line) != ADT_UNDEFINED_ID;
    }
    case OP_COMM:
        return replay_comm(defs, reader);
    case OP_COMM_NAME: {
        uint32_t comm = take_u32(reader);
        const char *name = take_string(reader);
        return !reader->failed && adt_defs_comm_set_name(defs, comm, name) == 0;
    }
    case OP_RMA_WIN: {
        uint32_t creator = take_u32(reader), sequence = take_u32(reader), comm = take_u32(reader);
        return !reader->failed && adt_defs_rma_win(defs, creator, sequence, comm) != ADT_UNDEFINED_ID;
    }
    case OP_GROUP:
        return replay_group(defs, reader);
    case OP_IO_FILE: {
        const char *name = take_string(reader);
        return !reader->failed && adt_defs_io_file(defs, name) != ADT_UNDEFINED_ID;
    }
    case OP_IO_HANDLE: {
        uint32_t creator = take_u32(reader), sequence = take_u32(reader);
        uint32_t file = take_u32(reader), comm = take_u32(reader);
        return !reader->failed && adt_defs_io_handle(defs, creator, sequence, file, comm) != ADT_UNDEFINED_ID;
    }
    case OP_METRIC: {
        const char *name = take_string(reader);
        const char *unit = take_string(reader);
        return !reader->failed && adt_defs_metric(defs, name, unit) != ADT_UNDEFINED_ID;
    }
    default:
        return false;
    }
}

adt_defs *adt_defs_replay(const void *journal, size_t bytes)
{
    adt_defs *defs = adt_defs_create();
    if (defs == NULL)
        return NULL;
    const uint8_t *at = journal;
    size_t offset = 0;
    while (bytes - offset >= 8) {
        uint32_t header[2];
        memcpy(header, at + offset, sizeof header);
        size_t padded = ((size_t)header[1] + 7u) & ~(size_t)7u;
        if (padded > bytes - offset - 8)
            break;
        entry_reader reader = { .at = at + offset + 8, .left = header[1] };
        bool ok = replay_entry(defs, header[0], &reader);
        for (size_t i = 0; i < reader.string_count; i++)
            free(reader.strings[i]);
        if (!ok) {
            adt_defs_destroy(defs);
            return NULL;
        }
        offset += 8 + padded;
    }
    return defs;
}
