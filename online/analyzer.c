/*
 * adaptrace-analyzer: the analysis process of an online run (issue #28).
 * Started by the ranks' MPI_Init with MPI_Comm_spawn (connect.c), never
 * by hand: argv is the archive, the number of ranks and the live
 * interval in seconds. Rank 0 spawns them; all ranks then connect to the
 * port analyzer 0 opens. Analyzer a of N serves ranks r with r * N / P = a:
 * it receives their chunks on the parent inter-communicator, adds them up
 * (live.c), and every interval the analyzers sum their totals on analyzer
 * 0, which writes <archive>/live/report.json. When all ranks sent their
 * last chunk, the final report is written, each rank hears that it is
 * (ADT_ONLINE_TAG_DONE), and all disconnect. Its own process: normal
 * context, stdio and malloc allowed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "mpi_functions.h"
#include "online/live.h"

/* How long the loop sleeps when no chunk waits: the analyzer shares cores
 * with the ranks. */
#define IDLE_NANOSECONDS 2000000L

typedef struct analyzer {
    MPI_Comm parent;
    int index;
    int count;
    const char *archive;
    uint32_t ranks;
    uint32_t interval_s;
    uint32_t served;
    uint32_t finished;
    bool parents_lost;
    adt_live live;
    adt_live total; /* analyzer 0: the sum over the analyzers */
    const char *names[ADT_MPI_FN_COUNT];
    double started;
} analyzer;

static int parse_count(const char *text, uint32_t low, uint32_t high, uint32_t *value)
{
    char *end;
    errno = 0;
    unsigned long number = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || number < low || number > high)
        return -1;
    *value = (uint32_t)number;
    return 0;
}

/* Receives every chunk that waits; false once the parents cannot be
 * reached (then what came is all there is). */
static void receive_waiting(analyzer *a, adt_online_chunk *chunk)
{
    while (!a->parents_lost && a->finished < a->served) {
        int waiting = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, a->parent, &waiting, &status) != MPI_SUCCESS) {
            a->parents_lost = true;
            fprintf(stderr, "adaptrace-analyzer %d: the ranks cannot be reached any more\n", a->index);
            return;
        }
        if (!waiting)
            return;
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        if (bytes < 0 || (size_t)bytes > sizeof *chunk ||
            MPI_Recv(chunk, bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, a->parent, MPI_STATUS_IGNORE) !=
                MPI_SUCCESS) {
            a->parents_lost = true;
            fprintf(stderr, "adaptrace-analyzer %d: a message of %d bytes from rank %d could not be received\n",
                    a->index, bytes, status.MPI_SOURCE);
            return;
        }
        bool last = status.MPI_TAG == ADT_ONLINE_TAG_LAST;
        char error[256];
        if (adt_live_add_chunk(&a->live, (uint32_t)status.MPI_SOURCE, chunk, (size_t)bytes, last, error,
                               sizeof error) != 0)
            fprintf(stderr, "adaptrace-analyzer %d: %s (left out)\n", a->index, error);
        if (last)
            a->finished++;
    }
}

/* One round of all analyzers (collective over their MPI_COMM_WORLD): the
 * totals summed on analyzer 0, which writes them. Returns whether every
 * analyzer is done, which makes this report the final one. */
static bool report_round(analyzer *a, bool done)
{
    int mine = done, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Reduce(a->live.table, a->total.table, (int)(a->ranks * a->live.functions * ADT_LIVE_FUNCTION_WORDS),
               MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(a->live.states, a->total.states, (int)(a->ranks * ADT_LIVE_RANK_WORDS), MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    if (a->index == 0) {
        char error[512];
        if (adt_live_write(&a->total, a->names, a->archive, all, (uint32_t)a->count, a->interval_s,
                           MPI_Wtime() - a->started, error, sizeof error) != 0)
            fprintf(stderr, "adaptrace-analyzer: live report not written: %s\n", error);
    }
    return all;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    analyzer a = { .started = MPI_Wtime() };
    MPI_Comm_get_parent(&a.parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &a.index);
    MPI_Comm_size(MPI_COMM_WORLD, &a.count);
    if (a.parent == MPI_COMM_NULL || argc != 4 || parse_count(argv[2], 1, INT32_MAX, &a.ranks) != 0 ||
        parse_count(argv[3], 1, UINT32_MAX, &a.interval_s) != 0) {
        if (a.index == 0)
            fprintf(stderr, "adaptrace-analyzer: started by libadaptrace.so at MPI_Init with ADAPTRACE_ANALYZERS "
                            "set (adaptrace --analyzers N), not by hand\n");
        MPI_Finalize();
        return 2;
    }
    a.archive = argv[1];
    /* Rank 0 alone spawned the analyzers (connect.c): analyzer 0 sends it
     * a port, to which all ranks connect. */
    char port[MPI_MAX_PORT_NAME] = "";
    if (a.index == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, ADT_ONLINE_TAG_PORT, a.parent);
    }
    MPI_Comm spawner = a.parent;
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &a.parent);
    MPI_Comm_disconnect(&spawner);
    if (a.index == 0)
        MPI_Close_port(port);
    MPI_Comm_set_errhandler(a.parent, MPI_ERRORS_RETURN);
    for (int f = 0; f < ADT_MPI_FN_COUNT; f++)
        a.names[f] = adt_mpi_functions[f].name;
    adt_online_chunk *chunk = malloc(sizeof *chunk);
    if (chunk == NULL || adt_live_create(&a.live, a.ranks, ADT_MPI_FN_COUNT) != 0 ||
        (a.index == 0 && adt_live_create(&a.total, a.ranks, ADT_MPI_FN_COUNT) != 0)) {
        fprintf(stderr, "adaptrace-analyzer %d: out of memory for %" PRIu32 " ranks\n", a.index, a.ranks);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (uint32_t r = 0; r < a.ranks; r++)
        a.served += adt_online_analyzer_of(r, a.ranks, (uint32_t)a.count) == (uint32_t)a.index;
    double next_report = a.started + a.interval_s;
    for (;;) {
        receive_waiting(&a, chunk);
        bool done = a.parents_lost || a.finished == a.served;
        if (done || MPI_Wtime() >= next_report) {
            if (report_round(&a, done))
                break;
            next_report += a.interval_s;
            if (next_report < MPI_Wtime())
                next_report = MPI_Wtime() + a.interval_s;
        } else {
            struct timespec idle = { 0, IDLE_NANOSECONDS };
            nanosleep(&idle, NULL);
        }
    }
    /* Analyzer 0 has written the final report: the ranks may go on to
     * write their archive, which adopts live/. */
    MPI_Barrier(MPI_COMM_WORLD);
    static const int done_word = 1;
    for (uint32_t r = 0; r < a.ranks && !a.parents_lost; r++)
        if (adt_online_analyzer_of(r, a.ranks, (uint32_t)a.count) == (uint32_t)a.index)
            MPI_Send(&done_word, 1, MPI_INT, (int)r, ADT_ONLINE_TAG_DONE, a.parent);
    if (a.parents_lost)
        MPI_Comm_free(&a.parent);
    else
        MPI_Comm_disconnect(&a.parent);
    adt_live_destroy(&a.live);
    adt_live_destroy(&a.total);
    free(chunk);
    MPI_Finalize();
    return 0;
}
