/*
 * The definitions journal read back (journal.c writes it): adt_defs_replay
 * makes every journalled call again on a fresh registry, which hands out
 * the same local ids as the process that wrote it.
 *
 * Execution context: the recovery (adaptrace-recover), normal context;
 * malloc and the registry's functions are free to use.
 */
#include <stdlib.h>
#include <string.h>

#include "format/defs_internal.h"

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
    if (reader->failed || length == JOURNAL_NO_STRING)
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
    case OP_PARAMETER: {
        const char *name = take_string(reader);
        return !reader->failed && adt_defs_parameter(defs, name) != ADT_UNDEFINED_ID;
    }
    case OP_USER_METRIC: {
        const char *name = take_string(reader);
        return !reader->failed && adt_defs_user_metric(defs, name) != ADT_UNDEFINED_ID;
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
