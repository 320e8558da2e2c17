#include "comms.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "handle_table.h"

/* Communicators alive at once, and matched messages not yet received. */
#define COMM_CAPACITY 4096u
#define MESSAGE_CAPACITY 1024u

/* Local communicator ids whose peers' world ranks are kept (ids beyond:
 * their messages are not attributable to a world rank online). */
#define COMM_PEER_TABLES 65536u
/* A peer table's words before its peers: the count, the key's two, the
 * lowest and the highest world rank of its members (both groups of an
 * inter-communicator; UINT32_MAX for one outside the world). */
#define PEER_TABLE_HEAD 5u

/* 0 is MPI_COMM_WORLD's, 1 every MPI_COMM_SELF's. */
#define FIRST_SEQUENCE 2u

adt_mpi_comm_info adt_mpi_world_info;
MPI_Comm adt_mpi_world = MPI_COMM_WORLD;
MPI_Fint adt_mpi_world_fortran_given;
MPI_Fint adt_mpi_world_fortran;

void adt_mpi_world_narrow(MPI_Comm own)
{
    adt_mpi_world = own;
    adt_mpi_world_fortran_given = PMPI_Comm_c2f(MPI_COMM_WORLD);
    adt_mpi_world_fortran = PMPI_Comm_c2f(own);
    if (own != MPI_COMM_WORLD)
        PMPI_Comm_set_name(own, "MPI_COMM_WORLD");
}

static adt_defs *comm_defs;
static adt_handle_table *comm_table;
static adt_handle_table *message_table;
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint next_sequence = FIRST_SEQUENCE;
static atomic_uint_fast64_t untracked[ADT_MPI_UNTRACKED_CAUSE_COUNT];
static uint32_t world_rank;
static MPI_Group world_group = MPI_GROUP_NULL;

/* [local communicator id]: the world ranks of the peers a rank field
 * names (the remote group of an inter-communicator), the count first
 * (malloc'd), or NULL. Each is made in define (normal context: a
 * communicator constructor) and published with a release store, once:
 * a local id stands for one definition, whose members never change, so a
 * table once published stays right for the id however often the id is
 * lent again (adt_defs_comm gives a lent key its definition's id). The
 * tables live until adt_mpi_comms_fini, after the stream is closed: a
 * request started on a freed communicator (a persistent send) still finds
 * its table. */
static _Atomic(const uint32_t *) *peer_tables;

/* The sequences this rank handed out to objects of a kind, freed since,
 * with the local id of their communicator (under register_lock): as many
 * as objects were alive at once on communicators still alive. */
typedef struct released_key {
    uint32_t comm;
    uint32_t sequence;
} released_key;
typedef struct released_keys {
    released_key *keys;
    size_t count;
    size_t capacity;
} released_keys;
static released_keys released[ADT_MPI_OBJECT_KINDS];

/* The intra-communicators this rank keyed, freed since, whose keys the
 * next communicator made on the same parent with the same members takes
 * back (under register_lock): as many as were alive at once on parents
 * still alive. */
typedef struct released_comm {
    uint32_t parent;
    uint32_t sequence;
    uint32_t size;
    uint32_t *members; /* world ranks, malloc'd */
} released_comm;
static struct {
    released_comm *comms;
    size_t count;
    size_t capacity;
} released_comms;

const adt_mpi_comm_info *adt_mpi_comm_lookup_slow(MPI_Comm comm)
{
    if (!comm_table || comm == MPI_COMM_NULL)
        return NULL;
    return adt_handle_table_find(comm_table, (uintptr_t)comm);
}

/* World ranks of the members of group, in group-rank order (malloc'd). */
static uint32_t *world_members(MPI_Group group, int *size)
{
    PMPI_Group_size(group, size);
    int *ranks = malloc(sizeof(int) * (size_t)(*size) * 2 + 1);
    if (!ranks)
        return NULL;
    int *translated = ranks + *size;
    for (int i = 0; i < *size; ++i)
        ranks[i] = i;
    PMPI_Group_translate_ranks(group, *size, ranks, world_group, translated);
    uint32_t *members = (uint32_t *)ranks;
    for (int i = 0; i < *size; ++i)
        members[i] = translated[i] == MPI_UNDEFINED ? UINT32_MAX : (uint32_t)translated[i];
    return members;
}

/* Publishes the key, the bounds of the members and the peers (count
 * world ranks) of local id comm, as its table (PEER_TABLE_HEAD) where
 * none is: the caller frees it when it is not taken. Normal context. */
static bool publish_peers(uint32_t comm, adt_mpi_comm_key key, const uint32_t bounds[2], const uint32_t *peers,
                          int count)
{
    if (!peer_tables || comm >= COMM_PEER_TABLES ||
        atomic_load_explicit(&peer_tables[comm], memory_order_relaxed) != NULL)
        return false;
    uint32_t *table = malloc(((size_t)count + PEER_TABLE_HEAD) * sizeof *table);
    if (!table)
        return false;
    table[0] = (uint32_t)count;
    table[1] = key.creator_world_rank;
    table[2] = key.sequence;
    table[3] = bounds[0];
    table[4] = bounds[1];
    memcpy(table + PEER_TABLE_HEAD, peers, (size_t)count * sizeof *table);
    const uint32_t *none = NULL;
    /* Release: a hot-path reader whose acquire load sees the pointer sees
     * the table's words written above. Two threads defining the same id
     * at once: one table wins, the other is freed (both hold the same
     * ranks). */
    if (atomic_compare_exchange_strong_explicit(&peer_tables[comm], &none, table, memory_order_release,
                                                memory_order_relaxed))
        return true;
    free(table);
    return false;
}

/* comm's peer table, NULL when it has none. peer_tables is set in
 * adt_mpi_comms_init, before any wrapper runs, and freed after the last;
 * the acquire load pairs with publish_peers' release store, so the
 * table's words are those written before it was published, and never
 * change after: no lock, no malloc. */
static const uint32_t *published_table(uint32_t comm)
{
    if (!peer_tables || comm >= COMM_PEER_TABLES)
        return NULL;
    return atomic_load_explicit(&peer_tables[comm], memory_order_acquire);
}

uint32_t adt_mpi_comm_world_rank(uint32_t comm, int peer)
{
    /* MPI_COMM_WORLD's ranks are world ranks: no table read. */
    if (comm == adt_mpi_world_info.id && peer >= 0 && peer < adt_mpi_world_info.size)
        return (uint32_t)peer;
    const uint32_t *table = published_table(comm);
    if (!table || peer < 0 || (uint32_t)peer >= table[0])
        return ADT_UNDEFINED_ID;
    return table[PEER_TABLE_HEAD + peer];
}

bool adt_mpi_comm_key_of(uint32_t comm, adt_mpi_comm_key *key)
{
    if (comm == adt_mpi_world_info.id) {
        *key = adt_mpi_world_info.key;
        return true;
    }
    const uint32_t *table = published_table(comm);
    if (!table)
        return false;
    *key = (adt_mpi_comm_key){ table[1], table[2] };
    return true;
}

bool adt_mpi_comm_member_bounds(uint32_t comm, uint32_t *lowest, uint32_t *highest)
{
    if (comm == adt_mpi_world_info.id) {
        *lowest = 0;
        *highest = (uint32_t)adt_mpi_world_info.size - 1;
        return true;
    }
    const uint32_t *table = published_table(comm);
    if (!table)
        return false;
    *lowest = table[3];
    *highest = table[4];
    return true;
}

/* Defines comm (whose groups are those of `like`) and maps it. */
/* bounds[0] and bounds[1] widened to the lowest and highest of count
 * world ranks. */
static void widen_bounds(uint32_t bounds[2], const uint32_t *ranks, int count)
{
    for (int i = 0; i < count; i++) {
        bounds[0] = ranks[i] < bounds[0] ? ranks[i] : bounds[0];
        bounds[1] = ranks[i] > bounds[1] ? ranks[i] : bounds[1];
    }
}

static void define(MPI_Comm comm, MPI_Comm like, MPI_Comm parent, adt_mpi_comm_key key, const char *name)
{
    int inter = 0;
    PMPI_Comm_test_inter(like, &inter);
    MPI_Group local = MPI_GROUP_NULL, remote = MPI_GROUP_NULL;
    PMPI_Comm_group(like, &local);
    int size = 0, remote_size = 0, rank = 0;
    PMPI_Comm_rank(like, &rank);
    uint32_t *members = world_members(local, &size);
    uint32_t *remote_members = NULL;
    if (inter) {
        PMPI_Comm_remote_group(like, &remote);
        remote_members = world_members(remote, &remote_size);
        PMPI_Group_free(&remote);
    }
    PMPI_Group_free(&local);
    if (!members || (inter && !remote_members)) {
        adt_log("MPI communicator not traced: out of memory for its %d members", size + remote_size);
        atomic_fetch_add(&untracked[ADT_MPI_UNTRACKED_OUT_OF_MEMORY], 1);
        free(members);
        free(remote_members);
        return;
    }
    const adt_mpi_comm_info *parent_info = adt_mpi_comm_lookup(parent);
    adt_comm_desc desc = {
        .creator_world_rank = key.creator_world_rank,
        .sequence = key.sequence,
        .name = name,
        .members = members,
        .size = (uint32_t)size,
        .remote_members = remote_members,
        .remote_size = (uint32_t)remote_size,
        .parent = parent_info ? parent_info->id : ADT_UNDEFINED_ID,
        .is_self = !inter && size == 1,
    };
    pthread_mutex_lock(&register_lock);
    uint32_t id = adt_defs_comm(comm_defs, &desc);
    adt_mpi_comm_info *info = id == ADT_UNDEFINED_ID ? NULL : adt_handle_table_insert(comm_table, (uintptr_t)comm);
    if (info)
        *info = (adt_mpi_comm_info){ .id = id, .rank = rank, .size = size, .remote_size = remote_size,
                                     .parent = desc.parent, .key = key };
    else
        atomic_fetch_add(&untracked[id == ADT_UNDEFINED_ID ? ADT_MPI_UNTRACKED_OUT_OF_MEMORY
                                                          : ADT_MPI_UNTRACKED_TABLE_FULL],
                         1);
    pthread_mutex_unlock(&register_lock);
    if (id != ADT_UNDEFINED_ID) {
        uint32_t bounds[2] = { UINT32_MAX, 0 };
        widen_bounds(bounds, members, size);
        widen_bounds(bounds, remote_members, remote_size);
        publish_peers(id, key, bounds, inter ? remote_members : members, inter ? remote_size : size);
    }
    free(members);
    free(remote_members);
}

int adt_mpi_comms_init(adt_defs *defs)
{
    comm_defs = defs;
    comm_table = adt_handle_table_create(COMM_CAPACITY, sizeof(adt_mpi_comm_info));
    message_table = adt_handle_table_create(MESSAGE_CAPACITY, sizeof(adt_mpi_probed_message));
    peer_tables = calloc(COMM_PEER_TABLES, sizeof *peer_tables);
    if (!comm_table || !message_table || !peer_tables) {
        adt_mpi_comms_fini();
        return -1;
    }
    int rank = 0;
    PMPI_Comm_rank(adt_mpi_world, &rank);
    world_rank = (uint32_t)rank;
    PMPI_Comm_group(adt_mpi_world, &world_group);
    define(adt_mpi_world, adt_mpi_world, MPI_COMM_NULL, (adt_mpi_comm_key){ 0, 0 }, "MPI_COMM_WORLD");
    const adt_mpi_comm_info *world = adt_handle_table_find(comm_table, (uintptr_t)adt_mpi_world);
    if (!world) {
        adt_mpi_comms_fini();
        return -1;
    }
    adt_mpi_world_info = *world;
    define(MPI_COMM_SELF, MPI_COMM_SELF, MPI_COMM_NULL, (adt_mpi_comm_key){ world_rank, 1 }, "MPI_COMM_SELF");
    return 0;
}

void adt_mpi_comms_fini(void)
{
    adt_handle_table_destroy(comm_table);
    adt_handle_table_destroy(message_table);
    comm_table = NULL;
    message_table = NULL;
    for (uint32_t id = 0; peer_tables && id < COMM_PEER_TABLES; id++)
        free((void *)atomic_load_explicit(&peer_tables[id], memory_order_relaxed));
    free(peer_tables);
    peer_tables = NULL;
    for (unsigned kind = 0; kind < ADT_MPI_OBJECT_KINDS; kind++) {
        free(released[kind].keys);
        released[kind] = (released_keys){ 0 };
    }
    for (size_t i = 0; i < released_comms.count; i++)
        free(released_comms.comms[i].members);
    free(released_comms.comms);
    released_comms.comms = NULL;
    released_comms.count = released_comms.capacity = 0;
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
}

/* Rank 0's sequence for a new object of kind on the communicator comm
 * (local id): one released there, else a fresh one. */
static uint32_t object_sequence(adt_mpi_object_kind kind, uint32_t comm)
{
    uint32_t sequence = 0;
    pthread_mutex_lock(&register_lock);
    released_keys *pool = &released[kind];
    for (size_t i = pool->count; i-- > 0;) {
        if (pool->keys[i].comm == comm) {
            sequence = pool->keys[i].sequence;
            pool->keys[i] = pool->keys[--pool->count];
            break;
        }
    }
    pthread_mutex_unlock(&register_lock);
    return sequence ? sequence : atomic_fetch_add(&next_sequence, 1);
}

/* Rank 0's sequence for a new intra-communicator with comm's members,
 * made on the parent whose local id is parent (ADT_UNDEFINED_ID: none
 * known): the one of a communicator freed with the same parent and
 * members, else a fresh one. */
static uint32_t comm_sequence(MPI_Comm comm, uint32_t parent)
{
    pthread_mutex_lock(&register_lock);
    bool any = released_comms.count > 0;
    pthread_mutex_unlock(&register_lock);
    if (!any || parent == ADT_UNDEFINED_ID)
        return atomic_fetch_add(&next_sequence, 1);
    MPI_Group group;
    PMPI_Comm_group(comm, &group);
    int size = 0;
    uint32_t *members = world_members(group, &size);
    PMPI_Group_free(&group);
    uint32_t sequence = 0;
    pthread_mutex_lock(&register_lock);
    for (size_t i = 0; members && i < released_comms.count; i++) {
        released_comm *freed = &released_comms.comms[i];
        if (freed->parent == parent && freed->size == (uint32_t)size &&
            memcmp(freed->members, members, (size_t)size * sizeof *members) == 0) {
            sequence = freed->sequence;
            free(freed->members);
            *freed = released_comms.comms[--released_comms.count];
            break;
        }
    }
    pthread_mutex_unlock(&register_lock);
    free(members);
    return sequence ? sequence : atomic_fetch_add(&next_sequence, 1);
}

/* kind: ADT_MPI_OBJECT_KINDS for a communicator whose parent has the
 * local id comm_id (ADT_UNDEFINED_ID: a fresh sequence), else the kind of
 * object on comm_id. */
static adt_mpi_comm_key agree_key(MPI_Comm comm, adt_mpi_object_kind kind, uint32_t comm_id)
{
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        /* Bcast on an inter-communicator goes from one group to the other;
         * both groups agree over their union instead. */
        MPI_Comm merged;
        PMPI_Intercomm_merge(comm, 0, &merged);
        /* An inter-communicator's key is never lent (only intra ones
         * are kept): its members are not the merged ones. */
        adt_mpi_comm_key key = agree_key(merged, kind, kind == ADT_MPI_OBJECT_KINDS ? ADT_UNDEFINED_ID : comm_id);
        PMPI_Comm_free(&merged);
        return key;
    }
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    uint32_t key[2] = { world_rank, 0 };
    if (rank == 0)
        key[1] = kind == ADT_MPI_OBJECT_KINDS ? comm_sequence(comm, comm_id) : object_sequence(kind, comm_id);
    PMPI_Bcast(key, 2, MPI_UINT32_T, 0, comm);
    return (adt_mpi_comm_key){ key[0], key[1] };
}

adt_mpi_comm_key adt_mpi_comm_agree_key(MPI_Comm comm)
{
    /* A duplicate's: comm is its parent, and its members are comm's. */
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup_slow(comm);
    return agree_key(comm, ADT_MPI_OBJECT_KINDS, info ? info->id : ADT_UNDEFINED_ID);
}

adt_mpi_comm_key adt_mpi_object_agree_key(MPI_Comm comm, const adt_mpi_comm_info *info, adt_mpi_object_kind kind)
{
    /* On a communicator not followed, nothing is defined for the key. */
    return info ? agree_key(comm, kind, info->id) : agree_key(comm, ADT_MPI_OBJECT_KINDS, ADT_UNDEFINED_ID);
}

void adt_mpi_object_key_released(adt_mpi_object_kind kind, uint32_t comm, adt_mpi_comm_key key)
{
    if (key.creator_world_rank != world_rank)
        return;
    pthread_mutex_lock(&register_lock);
    released_keys *pool = &released[kind];
    if (pool->count == pool->capacity) {
        size_t capacity = pool->capacity ? pool->capacity * 2 : 16;
        released_key *grown = realloc(pool->keys, capacity * sizeof *grown);
        if (grown) {
            pool->keys = grown;
            pool->capacity = capacity;
        }
    }
    if (pool->count < pool->capacity)
        pool->keys[pool->count++] = (released_key){ comm, key.sequence };
    pthread_mutex_unlock(&register_lock);
}

/* The communicator comm (local id) is freed: no object will be made on it
 * again, so its released sequences go, and the keys of communicators
 * freed on it; its own key is kept when this rank lends it (members:
 * its world ranks, taken over; NULL: not lent). */
static void forget_released(uint32_t comm, const adt_mpi_comm_info *info, uint32_t *members)
{
    pthread_mutex_lock(&register_lock);
    for (unsigned kind = 0; kind < ADT_MPI_OBJECT_KINDS; kind++) {
        released_keys *pool = &released[kind];
        for (size_t i = pool->count; i-- > 0;)
            if (pool->keys[i].comm == comm)
                pool->keys[i] = pool->keys[--pool->count];
    }
    for (size_t i = released_comms.count; i-- > 0;) {
        if (released_comms.comms[i].parent == comm) {
            free(released_comms.comms[i].members);
            released_comms.comms[i] = released_comms.comms[--released_comms.count];
        }
    }
    if (members && released_comms.count == released_comms.capacity) {
        size_t capacity = released_comms.capacity ? released_comms.capacity * 2 : 16;
        released_comm *grown = realloc(released_comms.comms, capacity * sizeof *grown);
        if (grown) {
            released_comms.comms = grown;
            released_comms.capacity = capacity;
        }
    }
    if (members && released_comms.count < released_comms.capacity) {
        released_comms.comms[released_comms.count++] =
            (released_comm){ info->parent, info->key.sequence, (uint32_t)info->size, members };
        members = NULL;
    }
    pthread_mutex_unlock(&register_lock);
    free(members);
}

void adt_mpi_comm_created(MPI_Comm parent, MPI_Comm newcomm)
{
    if (!comm_table || newcomm == MPI_COMM_NULL)
        return;
    const adt_mpi_comm_info *parent_info = adt_mpi_comm_lookup(parent);
    define(newcomm, newcomm, parent,
           agree_key(newcomm, ADT_MPI_OBJECT_KINDS, parent_info ? parent_info->id : ADT_UNDEFINED_ID), "");
}

void adt_mpi_comm_duplicated(MPI_Comm parent, MPI_Comm newcomm, adt_mpi_comm_key key)
{
    if (!comm_table || newcomm == MPI_COMM_NULL)
        return;
    define(newcomm, parent, parent, key, "");
}

adt_mpi_freed_comm adt_mpi_comm_free_begin(MPI_Comm comm)
{
    adt_mpi_freed_comm freed = { .comm = comm };
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup_slow(comm);
    if (!info)
        return freed;
    freed.followed = true;
    freed.info = *info;
    adt_handle_table_remove(comm_table, (uintptr_t)comm);
    /* Its key is lent by the rank that keyed it (its rank 0), for an
     * intra-communicator with a parent: its members are taken while the
     * communicator still exists. */
    if (info->rank == 0 && info->remote_size == 0 && info->parent != ADT_UNDEFINED_ID &&
        info->key.creator_world_rank == world_rank) {
        MPI_Group group;
        PMPI_Comm_group(comm, &group);
        int size = 0;
        freed.members = world_members(group, &size);
        PMPI_Group_free(&group);
    }
    return freed;
}

void adt_mpi_comm_free_end(const adt_mpi_freed_comm *freed, bool ok)
{
    if (!freed->followed || !comm_table) {
        free(freed->members);
        return;
    }
    if (ok) {
        forget_released(freed->info.id, &freed->info, freed->members);
        return;
    }
    free(freed->members);
    /* Its slot was free until now: only another thread's new communicator
     * can have taken it. */
    adt_mpi_comm_info *info = adt_handle_table_insert(comm_table, (uintptr_t)freed->comm);
    if (info)
        *info = freed->info;
    else
        atomic_fetch_add(&untracked[ADT_MPI_UNTRACKED_TABLE_FULL], 1);
}

void adt_mpi_comm_named(MPI_Comm comm)
{
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(comm);
    char name[MPI_MAX_OBJECT_NAME];
    int length = 0;
    if (info && PMPI_Comm_get_name(comm, name, &length) == MPI_SUCCESS)
        adt_defs_comm_set_name(comm_defs, info->id, name);
}

void adt_mpi_message_probed(const adt_mpi_comm_info *comm, int source, int tag, MPI_Message message)
{
    if (!message_table || !comm || message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC)
        return;
    adt_mpi_probed_message *slot = adt_handle_table_insert(message_table, (uintptr_t)message);
    if (slot)
        *slot = (adt_mpi_probed_message){ *comm, source, tag };
}

const adt_mpi_probed_message *adt_mpi_message_take(MPI_Message message)
{
    static _Thread_local adt_mpi_probed_message taken;
    if (!message_table)
        return NULL;
    const adt_mpi_probed_message *slot = adt_handle_table_find(message_table, (uintptr_t)message);
    if (!slot)
        return NULL;
    taken = *slot;
    adt_handle_table_remove(message_table, (uintptr_t)message);
    return &taken;
}

uint32_t adt_mpi_group_define(MPI_Group group)
{
    if (!comm_table || group == MPI_GROUP_NULL)
        return ADT_UNDEFINED_ID;
    int size = 0;
    uint32_t *members = world_members(group, &size);
    uint32_t id = members ? adt_defs_group(comm_defs, members, (uint32_t)size) : ADT_UNDEFINED_ID;
    free(members);
    return id;
}

void adt_mpi_comms_untracked(uint64_t counts[ADT_MPI_UNTRACKED_CAUSE_COUNT])
{
    for (unsigned cause = 0; cause < ADT_MPI_UNTRACKED_CAUSE_COUNT; cause++)
        counts[cause] = atomic_load(&untracked[cause]);
}
