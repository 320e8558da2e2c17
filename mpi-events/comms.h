/*
 * Communicator tracking: every communicator the application gets is
 * defined once with adt_defs_comm and mapped handle -> local id.
 *
 * A communicator is identified across ranks by (world rank of its rank 0,
 * a sequence number that rank handed out), agreed with a PMPI_Bcast inside
 * the new communicator (over a temporary merged communicator for
 * inter-communicators). MPI_COMM_WORLD is (0, 0); each rank's
 * MPI_COMM_SELF is (world rank, 1). An intra-communicator freed lends its
 * key, and so its definition, to the next one made on the same parent
 * with the same members in the same order: rank 0 keeps the keys of the
 * ones it keyed, with their parents and members, from their free on (the
 * same rank 0 keys the next one, and every member freed the old one
 * before, in program order, making the new one collectively). So a run
 * that makes and frees a communicator every time step defines it once,
 * and its calls on it repeat (the skeleton folds them: docs/folding.md).
 *
 * Lookups (every point-to-point and collective wrapper) are lock-free;
 * registrations take a mutex (they are collective MPI calls anyway).
 */
#ifndef ADAPTRACE_MPI_COMMS_H
#define ADAPTRACE_MPI_COMMS_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "format/format.h"
#include "runtime/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct adt_mpi_comm_key {
    uint32_t creator_world_rank;
    uint32_t sequence;
} adt_mpi_comm_key;

typedef struct adt_mpi_comm_info {
    uint32_t id;          /* local communicator id (adt_defs_comm) */
    int32_t rank;         /* this process's rank in it */
    int32_t size;         /* size of the local group */
    int32_t remote_size;  /* size of the remote group, 0 for intra-communicators */
    uint32_t parent;      /* the parent's local id (ADT_UNDEFINED_ID: none) */
    adt_mpi_comm_key key;
} adt_mpi_comm_info;

/* The application's MPI_COMM_WORLD as the application and adaptrace see
 * it: MPI_COMM_WORLD itself, or in an MPMD launch with analyzers
 * (docs/online.md) the application's own processes (adt_mpi_world_narrow).
 * The wrappers pass it on in place of every MPI_COMM_WORLD the application
 * gives (adt_mpi_narrowed, adt_mpi_narrowed_fortran), and adaptrace's own
 * collectives (start-up, clock offsets, the archive, the skeleton, the
 * stream) run on it. Set once in MPI_Init, before the application can
 * call MPI from another thread. */
extern MPI_Comm adt_mpi_world;
/* The Fortran handles of MPI_COMM_WORLD and of adt_mpi_world, equal until
 * the world is narrowed. */
extern MPI_Fint adt_mpi_world_fortran_given;
extern MPI_Fint adt_mpi_world_fortran;

/* Hot path (every wrapper with a communicator argument): the communicator
 * to pass on for comm. */
static inline MPI_Comm adt_mpi_narrowed(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD ? adt_mpi_world : comm;
}
static inline MPI_Fint adt_mpi_narrowed_fortran(MPI_Fint comm)
{
    return comm == adt_mpi_world_fortran_given ? adt_mpi_world_fortran : comm;
}

/* Whether keyval is an attribute MPI caches on MPI_COMM_WORLD itself
 * (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_APPNUM,
 * MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE): asked of MPI_COMM_WORLD, not of
 * the narrowed world, which has none of them. Open MPI gives them the same
 * numbers in C and Fortran. */
static inline bool adt_mpi_world_attribute(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
           keyval == MPI_APPNUM || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE;
}

/* MPI_Init, before anything else uses the world: the application's world
 * is own from now on (MPI_COMM_WORLD: nothing changes). Named
 * "MPI_COMM_WORLD", as MPI_Comm_get_name tells the application. */
void adt_mpi_world_narrow(MPI_Comm own);

/* After PMPI_Init: creates the tables and defines MPI_COMM_WORLD and
 * MPI_COMM_SELF. Returns 0, or -1 (out of memory). */
int adt_mpi_comms_init(adt_defs *defs);
/* Before PMPI_Finalize: frees the tables. */
void adt_mpi_comms_fini(void);

/* Hot path. NULL for communicators adaptrace did not see being created
 * (their events are not recorded). */
extern adt_mpi_comm_info adt_mpi_world_info;
const adt_mpi_comm_info *adt_mpi_comm_lookup_slow(MPI_Comm comm);
static inline const adt_mpi_comm_info *adt_mpi_comm_lookup(MPI_Comm comm)
{
    return comm == adt_mpi_world ? &adt_mpi_world_info : adt_mpi_comm_lookup_slow(comm);
}

/* Hot path (the stream's message records, online/): the world rank (in
 * adt_mpi_world, the archive's rank) of rank peer of the communicator
 * whose local id is comm, in its remote group for an inter-communicator;
 * ADT_UNDEFINED_ID when not known: a peer outside the world (a spawned
 * process), a rank beyond the group, a communicator whose table could not
 * be kept (no memory, an id beyond COMM_PEER_TABLES in comms.c).
 * Lock-free: the tables are made when communicators are created and kept
 * until adt_mpi_comms_fini (see comms.c). */
uint32_t adt_mpi_comm_world_rank(uint32_t comm, int peer);

/* Hot path (the stream's message ends, online/): the key of the
 * communicator whose local id is comm, into key; false when not known (as
 * adt_mpi_comm_world_rank's). Lock-free, the same tables. */
bool adt_mpi_comm_key_of(uint32_t comm, adt_mpi_comm_key *key);
/* Hot path (the stream's collective ends): the lowest and the highest
 * world rank among the members (both groups of an inter-communicator;
 * UINT32_MAX for a member outside the world) of the communicator whose
 * local id is comm; false when not known. Lock-free, the same tables. */
bool adt_mpi_comm_member_bounds(uint32_t comm, uint32_t *lowest, uint32_t *highest);

/* Processes a rank field can name: the remote group of an
 * inter-communicator, else the communicator itself. */
static inline int adt_mpi_comm_peers(const adt_mpi_comm_info *info)
{
    return info->remote_size > 0 ? info->remote_size : info->size;
}

/* Whether this process is the root of a collective with root argument
 * root (MPI_ROOT on inter-communicators). */
static inline bool adt_mpi_is_root(const adt_mpi_comm_info *info, int root)
{
    return info->remote_size > 0 ? root == MPI_ROOT : root == info->rank;
}

/* Collective over comm: the key rank 0 hands out for a duplicate of comm
 * (MPI_Comm_idup's, agreed before the call): the key of a duplicate of
 * comm freed before, if rank 0 keeps one, else a fresh one. */
adt_mpi_comm_key adt_mpi_comm_agree_key(MPI_Comm comm);

/* Windows and files are keyed like communicators, over the communicator
 * they are made on. Their keys are recycled so that a run defines a window
 * or file handle once per object alive at a time, not once per object
 * ever made: rank 0 of the communicator takes back the sequence of a
 * window (file) freed on it, and hands it out again to the next window
 * (file) made on the same communicator. Every rank then finds the
 * definition it made for that key, of the same communicator (the key
 * never leaves its communicator), and its freed object is gone there too:
 * freeing is collective and comes before the next creation on the same
 * communicator in every rank's order. */
typedef enum adt_mpi_object_kind { ADT_MPI_OBJECT_WINDOW, ADT_MPI_OBJECT_FILE, ADT_MPI_OBJECT_KINDS } adt_mpi_object_kind;
/* Collective over comm (followed as info, or NULL): the key of a new
 * object of kind. */
adt_mpi_comm_key adt_mpi_object_agree_key(MPI_Comm comm, const adt_mpi_comm_info *info, adt_mpi_object_kind kind);
/* The object of kind keyed key, on the communicator whose local id is
 * comm, was freed: on the rank that handed key out, its sequence may be
 * handed out again (where there is no memory to keep it, it is not). */
void adt_mpi_object_key_released(adt_mpi_object_kind kind, uint32_t comm, adt_mpi_comm_key key);

/* After a constructor returned newcomm (MPI_COMM_NULL is ignored);
 * collective over newcomm. */
void adt_mpi_comm_created(MPI_Comm parent, MPI_Comm newcomm);
/* MPI_Comm_idup: newcomm cannot be used before the request completes, so
 * the key was agreed on the parent beforehand and the members are the
 * parent's. Not collective. */
void adt_mpi_comm_duplicated(MPI_Comm parent, MPI_Comm newcomm, adt_mpi_comm_key key);
/* MPI_Comm_free and MPI_Comm_disconnect: the communicator leaves the
 * table before the call (once freed, MPI may hand its handle to a new
 * communicator) and comes back after it when the call failed: freeing
 * MPI_COMM_SELF or MPI_COMM_WORLD is an error an application may handle
 * and go on (mpi4py's own tests do), using the communicator still. */
typedef struct adt_mpi_freed_comm {
    MPI_Comm comm;
    bool followed;
    adt_mpi_comm_info info;
    uint32_t *members; /* world ranks (malloc'd), where its key is lent after the free; else NULL */
} adt_mpi_freed_comm;
adt_mpi_freed_comm adt_mpi_comm_free_begin(MPI_Comm comm);
void adt_mpi_comm_free_end(const adt_mpi_freed_comm *freed, bool ok);
/* After MPI_Comm_set_name: the communicator's definition takes the name MPI
 * now holds (for Fortran callers, already stripped of trailing blanks). */
void adt_mpi_comm_named(MPI_Comm comm);

/* Matched probes (MPI_Mprobe, MPI_Improbe): the communicator a message
 * came from and the source and tag the probe asked for (MPI_ANY_SOURCE,
 * MPI_ANY_TAG kept: what the MPI_Mrecv of the message asked for, in
 * effect). */
typedef struct adt_mpi_probed_message {
    adt_mpi_comm_info comm;
    int source;
    int tag;
} adt_mpi_probed_message;
void adt_mpi_message_probed(const adt_mpi_comm_info *comm, int source, int tag, MPI_Message message);
/* The probe of message (consumed), or NULL when unknown; valid in the
 * calling thread until its next call. */
const adt_mpi_probed_message *adt_mpi_message_take(MPI_Message message);

/* The local group id (adt_defs_group) of an MPI group's members, or
 * ADT_UNDEFINED_ID (empty group, no memory). */
uint32_t adt_mpi_group_define(MPI_Group group);

/* Communicators adaptrace could not track, by cause (no free slot, no
 * memory). */
void adt_mpi_comms_untracked(uint64_t counts[ADT_MPI_UNTRACKED_CAUSE_COUNT]);

#ifdef __cplusplus
}
#endif

#endif
