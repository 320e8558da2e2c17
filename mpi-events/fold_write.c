/*
 * skeleton.adts at MPI_Finalize (end of run: malloc, stdio and collective
 * PMPI calls are fine here): every rank encodes its threads' skeletons,
 * rank 0 gathers them and writes the file into the archive, where ranks
 * whose skeletons differ at most in their calls' parameters are stored
 * once, as one class (adt_skeleton_file_write). A gather to rank 0, not
 * yet a merge up the binomial tree (docs/folding.md).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "fold.h"
#include "mpi_functions.h"
#include "core/core.h"
#include "runtime/runtime.h"
#include "skeleton/skeleton.h"

void adt_mpi_fold_write(int written)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t part_bytes = 0;
    uint8_t *part = adt_mpi_folding && written == 0 ? adt_skeleton_rank_encode((uint32_t)rank, &part_bytes) : NULL;
    /* Every rank takes part or none does (a rank's part may fail alone). */
    int ready = part != NULL && part_bytes <= INT_MAX, everywhere = 0;
    PMPI_Allreduce(&ready, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!everywhere) {
        if (rank == 0 && adt_mpi_folding && written == 0)
            adt_log("no %s written: a rank could not encode its skeletons (out of memory)", ADT_SKELETON_FILE_NAME);
        free(part);
        return;
    }
    int own_bytes = (int)part_bytes;
    int *counts = rank == 0 ? malloc(sizeof *counts * (size_t)size) : NULL;
    int *displacements = rank == 0 ? malloc(sizeof *displacements * (size_t)size) : NULL;
    PMPI_Gather(&own_bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    uint8_t *all = NULL;
    long long total = 0;
    if (rank == 0 && counts && displacements) {
        for (int r = 0; r < size; ++r) {
            displacements[r] = (int)total;
            total += counts[r];
        }
        all = total <= INT_MAX ? malloc(total > 0 ? (size_t)total : 1) : NULL;
    }
    /* Rank 0 without room receives nothing (counts of 0); it says so. */
    if (rank == 0 && !all && counts) {
        for (int r = 0; r < size; ++r)
            counts[r] = displacements ? (displacements[r] = 0) : 0;
    }
    PMPI_Gatherv(part, own_bytes, MPI_BYTE, all, counts, displacements, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(part);
    if (rank == 0) {
        const uint8_t **parts = malloc(sizeof *parts * (size_t)size);
        size_t *sizes = malloc(sizeof *sizes * (size_t)size);
        const char *names[ADT_MPI_FN_COUNT];
        for (int f = 0; f < ADT_MPI_FN_COUNT; ++f)
            names[f] = adt_mpi_functions[f].name;
        char path[ADT_PATH_MAX + sizeof ADT_SKELETON_FILE_NAME + 1];
        snprintf(path, sizeof path, "%s/%s", adt_runtime_archive_dir(), ADT_SKELETON_FILE_NAME);
        if (!all || !parts || !sizes) {
            adt_log("no %s written: out of memory for the ranks' %lld bytes of skeletons", ADT_SKELETON_FILE_NAME,
                    total);
        } else {
            for (int r = 0; r < size; ++r) {
                parts[r] = all + displacements[r];
                sizes[r] = (size_t)counts[r];
            }
            if (adt_skeleton_file_write(path, names, ADT_MPI_FN_COUNT, parts, sizes, (uint32_t)size,
                                        adt_clock_resolution()) != 0)
                adt_log("cannot write %s", path);
        }
        free(parts);
        free(sizes);
    }
    free(all);
    free(counts);
    free(displacements);
}
