/*
 * The measurement-cost tables (core.h, "measurement cost"): start-up sets
 * the gap classes' bounds; the tables themselves are static, one per
 * thread index, so that the hot paths (MPI wrappers, the sampling signal
 * handler) write into memory that exists from the start: no allocation,
 * no lock. The end of the run reads them (runtime/summary.c).
 */
#include <string.h>

#include "core/core.h"

/* One per location the runtime can give (ADT_RUNTIME_MAX_LOCATIONS);
 * 1024 x 552 bytes of zeroed memory, touched only by the threads that run. */
#define COST_TABLES 1024u

static adt_cost_table tables[COST_TABLES];
uint64_t adt_cost_gap_bounds[ADT_COST_GAP_CLASSES - 1];
__thread adt_cost_table *adt_cost_own __attribute__((tls_model("initial-exec")));

void adt_cost_start(uint64_t ticks_per_second)
{
    static const uint64_t bounds_ns[ADT_COST_GAP_CLASSES - 1] = ADT_COST_GAP_BOUNDS_NS;
    for (unsigned c = 0; c < ADT_COST_GAP_CLASSES - 1; c++) {
        uint64_t ticks = (uint64_t)((double)bounds_ns[c] * (double)ticks_per_second / 1e9);
        __atomic_store_n(&adt_cost_gap_bounds[c], ticks > 0 ? ticks : 1, __ATOMIC_RELAXED);
    }
}

adt_cost_table *adt_cost_table_of(uint32_t thread_index)
{
    return thread_index < COST_TABLES ? &tables[thread_index] : NULL;
}

const char *adt_cost_kind_key(adt_cost_kind kind)
{
    static const char *const keys[ADT_COST_KINDS] = {
        [ADT_COST_MPI_OTHER] = "mpi_other",
        [ADT_COST_MPI_P2P] = "mpi_p2p",
        [ADT_COST_MPI_COLLECTIVE] = "mpi_collective",
        [ADT_COST_SAMPLE] = "sample",
    };
    return (unsigned)kind < ADT_COST_KINDS ? keys[kind] : "";
}

static bool named(const char *name, const char *prefix)
{
    return strncmp(name, prefix, strlen(prefix)) == 0;
}

adt_cost_kind adt_cost_kind_of_mpi_region(unsigned role, const char *name)
{
    if (role == ADT_COST_ROLE_BARRIER || (role >= ADT_COST_ROLE_COLL_ONE2ALL && role <= ADT_COST_ROLE_COLL_OTHER))
        return ADT_COST_MPI_COLLECTIVE;
    if (role == ADT_COST_ROLE_POINT2POINT)
        return ADT_COST_MPI_P2P;
    /* The completions: MPI_Test_cancelled only reads a status. */
    if (name != NULL && (named(name, "MPI_Wait") || named(name, "MPI_Start") ||
                         (named(name, "MPI_Test") && !named(name, "MPI_Test_cancelled"))))
        return ADT_COST_MPI_P2P;
    return ADT_COST_MPI_OTHER;
}
