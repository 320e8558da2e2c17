/*
 * The MPMD launch (issue #28), start-up only: right after MPI_Init, every
 * process of the job learns whether MPI_COMM_WORLD holds
 * adaptrace-analyzer processes beside the application's, and where it
 * does, the two sides are split apart and joined by an inter-communicator
 * (the application's side of it is its narrowed world, mpi-events/comms.h).
 * Called by the ranks' MPI_Init wrapper (mpi-events/setup.c) and by the
 * analyzer (analyzer.c) alike, so that both run the same collectives.
 * PMPI calls only, on MPI_COMM_WORLD before the application can have a
 * message in flight on it.
 */
#include <stdio.h>

#include "online/online_internal.h"

void adt_online_mpmd_split(bool analyzer, adt_online_mpmd *mpmd)
{
    *mpmd = (adt_online_mpmd){ .own = MPI_COMM_WORLD, .other = MPI_COMM_NULL };
    int mine[2] = { !analyzer, analyzer }, counts[2] = { 0, 0 };
    if (PMPI_Allreduce(mine, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return;
    mpmd->ranks = (uint32_t)counts[0];
    mpmd->analyzers = (uint32_t)counts[1];
    if (counts[0] == 0 || counts[1] == 0)
        return;
    int world_rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm own;
    if (PMPI_Comm_split(MPI_COMM_WORLD, analyzer, world_rank, &own) != MPI_SUCCESS)
        return;
    /* The other side's leader: the first world rank outside this side,
     * found locally from the two groups. */
    MPI_Group world_group, own_group, other_group;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Comm_group(own, &own_group);
    PMPI_Group_difference(world_group, own_group, &other_group);
    int first = 0, leader = 0;
    PMPI_Group_translate_ranks(other_group, 1, &first, world_group, &leader);
    PMPI_Group_free(&other_group);
    PMPI_Group_free(&own_group);
    PMPI_Group_free(&world_group);
    MPI_Comm other;
    if (PMPI_Intercomm_create(own, 0, MPI_COMM_WORLD, leader, ADT_ONLINE_TAG_MPMD, &other) != MPI_SUCCESS) {
        PMPI_Comm_free(&own);
        return;
    }
    PMPI_Comm_set_errhandler(other, MPI_ERRORS_RETURN);
    mpmd->own = own;
    mpmd->other = other;
}

void adt_online_mpmd_setup_send(const adt_config *config, const adt_online_mpmd *mpmd, uint32_t rank,
                                const char *archive_dir, bool profile, bool samples_unstreamed)
{
    if (rank != 0)
        return;
    adt_online_mpmd_setup setup = { .streams = 1, .interval_s = config->live_interval_s, .profile = profile };
    snprintf(setup.archive, sizeof setup.archive, "%s", archive_dir);
    /* Analyzer 0 posts its receive as soon as the inter-communicator is
     * there: the send completes at once. */
    PMPI_Send(&setup, (int)sizeof setup, MPI_BYTE, 0, ADT_ONLINE_TAG_SETUP, mpmd->other);
    char differs[96] = "", idle[96] = "";
    if (config->analyzers != 0 && config->analyzers != mpmd->analyzers)
        snprintf(differs, sizeof differs, "; ADAPTRACE_ANALYZERS=%u is not used", config->analyzers);
    if (mpmd->analyzers > mpmd->ranks)
        snprintf(idle, sizeof idle, "; %u of them serve no rank", mpmd->analyzers - mpmd->ranks);
    adt_log("%u analyzer%s in this job's MPI_COMM_WORLD (an MPMD launch%s%s): the application's MPI_COMM_WORLD is "
            "its %u process%s; the live report is %s/live/report.json%s%s%s",
            mpmd->analyzers, mpmd->analyzers == 1 ? "" : "s", differs, idle, mpmd->ranks,
            mpmd->ranks == 1 ? "" : "es", archive_dir,
            ADT_WITH_REPORT_HTML ? " and report.html beside it" : "",
            profile ? " (ADAPTRACE_ONLINE_OUTPUT=profile: no trace files, the final report is report.json there)"
                    : "",
            samples_unstreamed ? "; the samples are not streamed: set ADAPTRACE_ANALYZERS=N for the ranks where the "
                           "launcher does not tell them that several programs start (srun --multi-prog), and "
                           "ADAPTRACE_ONLINE_OUTPUT=profile writes the trace then"
                         : "");
}

void adt_online_mpmd_release(adt_online_mpmd *mpmd)
{
    if (mpmd->other == MPI_COMM_NULL)
        return;
    int rank = 0;
    PMPI_Comm_rank(mpmd->own, &rank);
    if (rank == 0) {
        static const adt_online_mpmd_setup nothing = { .streams = 0 };
        PMPI_Send(&nothing, (int)sizeof nothing, MPI_BYTE, 0, ADT_ONLINE_TAG_SETUP, mpmd->other);
        adt_log("the %u analyzer%s of this MPMD launch %s nothing to analyze: adaptrace does not measure this "
                "run; the application's MPI_COMM_WORLD is its %u process%s all the same",
                mpmd->analyzers, mpmd->analyzers == 1 ? "" : "s", mpmd->analyzers == 1 ? "has" : "have",
                mpmd->ranks, mpmd->ranks == 1 ? "" : "es");
    }
    PMPI_Comm_free(&mpmd->other);
}
