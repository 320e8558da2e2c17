/*
 * skeleton.adts at MPI_Finalize (end of run: malloc, stdio and
 * point-to-point PMPI calls are fine here): every rank encodes its
 * threads' skeletons, and the ranks merge them pairwise up the binomial
 * tree of the end of the run (adt_unify_tree_children): each rank merges
 * its own part with its children's subtrees, in increasing rank order,
 * and sends the merge to its parent; rank 0 writes the file into the
 * archive. Ranks whose skeletons differ at most in their calls'
 * parameters are one class there (adt_skeleton_merge_add), so what
 * travels up grows with the distinct behaviours of a subtree's ranks, not
 * with its ranks (docs/folding.md). A rank without a skeleton (not
 * folding, out of memory for its encoding) goes up as a missing rank with
 * its cause, and a subtree that fails on the way (its merge out of
 * memory, its message not whole) as its ranks missing: the file names
 * them (version 5) and holds the others'.
 *
 * And at an ending without MPI_Finalize (MPI_Abort, exit; normal code,
 * never a signal handler): the rank's part for its rescue file
 * (rescue_encode, called by the runtime), from which adaptrace-recover
 * writes skeleton.adts.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "comms.h"
#include "fold.h"
#include "mpi_functions.h"
#include "core/core.h"
#include "format/format.h"
#include "runtime/runtime.h"
#include "skeleton/skeleton.h"

/* The merge of a subtree on the wire: its byte count (u64; FAILED: the
 * subtree could not encode or merge its skeletons, then nothing follows),
 * then its bytes. */
#define SUBTREE_TAG 0x5ce1
#define FAILED UINT64_MAX

/* The cause skeleton.adts names for the ranks of a subtree that failed. */
#define SUBTREE_FAILED_CAUSE "merge_failed"

/* A child's subtree, or NULL when it failed (its message says so, or it
 * did not arrive whole or parse). */
static adt_skeleton_merge *receive_subtree(MPI_Comm comm, int child)
{
    uint64_t bytes = FAILED;
    if (PMPI_Recv(&bytes, 1, MPI_UINT64_T, child, SUBTREE_TAG, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        bytes == FAILED)
        return NULL;
    /* The sender sends only counts that fit an int. */
    uint8_t *data = malloc(bytes > 0 ? (size_t)bytes : 1);
    int received = PMPI_Recv(data, data ? (int)bytes : 0, MPI_BYTE, child, SUBTREE_TAG, comm, MPI_STATUS_IGNORE);
    adt_skeleton_merge *subtree = data && received == MPI_SUCCESS ? adt_skeleton_merge_decode(data, (size_t)bytes) : NULL;
    free(data);
    return subtree;
}

/* merge (or FAILED when NULL) to the parent. */
static void send_subtree(MPI_Comm comm, int parent, const adt_skeleton_merge *merge)
{
    size_t size = 0;
    uint8_t *data = merge ? adt_skeleton_merge_encode(merge, &size) : NULL;
    uint64_t bytes = data && size <= INT_MAX ? (uint64_t)size : FAILED;
    PMPI_Send(&bytes, 1, MPI_UINT64_T, parent, SUBTREE_TAG, comm);
    if (bytes != FAILED)
        PMPI_Send(data, (int)bytes, MPI_BYTE, parent, SUBTREE_TAG, comm);
    free(data);
}

/* The function names the keys' first field indexes. */
static const char *function_names[ADT_MPI_FN_COUNT];

static uint8_t *rescue_encode(uint32_t rank, size_t *bytes, adt_skeleton_saved *why_not)
{
    *why_not = adt_mpi_fold_close();
    if (*why_not != ADT_SKELETON_SAVED)
        return NULL;
    uint8_t *part = adt_skeleton_rank_encode(rank, bytes);
    if (part == NULL)
        *why_not = ADT_SKELETON_NOT_SAVED_MEMORY;
    return part;
}

void adt_mpi_fold_offer_rescue(void)
{
    for (int f = 0; f < ADT_MPI_FN_COUNT; ++f)
        function_names[f] = adt_mpi_functions[f].name;
    adt_mpi_fold_init_close();
    adt_runtime_skeleton_encoder encoder = {
        .encode = rescue_encode, .close = adt_mpi_fold_close, .function_names = function_names, .function_count = ADT_MPI_FN_COUNT
    };
    adt_runtime_set_skeleton_encoder(&encoder);
}

void adt_mpi_fold_write(int written)
{
    int rank = 0, size = 1;
    MPI_Comm comm;
    /* A communicator of its own: no message of the application's can
     * match the tree's. */
    if (PMPI_Comm_dup(adt_mpi_world, &comm) != MPI_SUCCESS)
        return;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    size_t part_bytes = 0;
    uint8_t *part = adt_mpi_folding && written == 0 ? adt_skeleton_rank_encode((uint32_t)rank, &part_bytes) : NULL;
    adt_skeleton_merge *merge = part ? adt_skeleton_merge_of_part(part, part_bytes, (uint32_t)rank) : NULL;
    free(part);
    if (!merge && written == 0)
        merge = adt_skeleton_merge_of_missing(
            (uint32_t)rank, 1,
            adt_skeleton_saved_keys[adt_mpi_folding ? ADT_SKELETON_NOT_SAVED_MEMORY : ADT_SKELETON_SAVED_NOT_FOLDING]);
    /* Every child is received, also after one failed, so that none waits
     * forever; a failed child's subtree, ranks [child, child + its lowest
     * set bit) (adt_unify_tree_children), is named missing. Only when
     * even that cannot be kept (out of memory) does this rank's subtree
     * fail as a whole. */
    uint32_t children[32];
    uint32_t child_count = adt_unify_tree_children((uint32_t)rank, (uint32_t)size, children);
    for (uint32_t k = 0; k < child_count; ++k) {
        adt_skeleton_merge *subtree = receive_subtree(comm, (int)children[k]);
        if (!subtree) {
            uint32_t span = children[k] & (0u - children[k]);
            if (span > (uint32_t)size - children[k])
                span = (uint32_t)size - children[k];
            subtree = adt_skeleton_merge_of_missing(children[k], span, SUBTREE_FAILED_CAUSE);
        }
        if (!merge || !subtree) {
            adt_skeleton_merge_free(merge);
            adt_skeleton_merge_free(subtree);
            merge = NULL;
        } else if (!adt_skeleton_merge_add(merge, subtree)) { /* it frees subtree */
            adt_skeleton_merge_free(merge);
            merge = NULL;
        }
    }
    if (rank != 0) {
        send_subtree(comm, (int)adt_unify_tree_parent((uint32_t)rank), merge);
    } else if (adt_mpi_folding && written == 0) {
        char path[ADT_PATH_MAX + sizeof ADT_SKELETON_FILE_NAME + 1];
        snprintf(path, sizeof path, "%s/%s", adt_runtime_archive_dir(), ADT_SKELETON_FILE_NAME);
        if (!merge)
            adt_log("no %s written: rank 0 could not merge the ranks' skeletons (out of memory)",
                    ADT_SKELETON_FILE_NAME);
        else if (adt_skeleton_merge_write(merge, path, function_names, ADT_MPI_FN_COUNT, (uint32_t)size,
                                          adt_clock_resolution()) != 0)
            adt_log("cannot write %s", path);
        else if (adt_skeleton_merge_missing_count(merge) > 0)
            adt_log("%s lacks the skeletons of %u of the %d ranks (adaptrace-report --skeleton says which and why)",
                    ADT_SKELETON_FILE_NAME, adt_skeleton_merge_missing_count(merge), size);
    }
    adt_skeleton_merge_free(merge);
    PMPI_Comm_free(&comm);
}
