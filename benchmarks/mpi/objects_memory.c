/*
 * A long run of MPI objects (issue #31): COUNT windows and COUNT files,
 * each made, used once and freed in turn by every rank on MPI_COMM_SELF
 * (a window allocated by MPI_Win_allocate, one put to itself between two
 * fences; a file opened in DIRECTORY with MPI_MODE_DELETE_ON_CLOSE, written
 * once, closed). The process's resident memory (VmRSS of
 * /proc/self/status) is read SAMPLES times along the way and printed by
 * rank 0 as one JSON object, so that a run traced by adaptrace can be
 * compared with one that is not: adaptrace's memory must stay flat
 * however many objects the run has made and freed.
 *
 * With NOTES_DIR, every window and file also goes to
 * NOTES_DIR/objects.<rank>.txt in the format of tests/mpi/objects.c, for
 * tests/mpi/objects_check.py.
 *
 * usage: adaptrace-bench-objects COUNT SAMPLES DIRECTORY [NOTES_DIR]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:"), 0 if absent. */
static long status_kib(const char *field)
{
    FILE *status = fopen("/proc/self/status", "r");
    if (!status)
        return 0;
    char line[256];
    long kib = 0;
    while (fgets(line, sizeof line, status))
        if (strncmp(line, field, strlen(field)) == 0)
            kib = strtol(line + strlen(field), NULL, 10);
    fclose(status);
    return kib;
}

static void window(FILE *notes)
{
    int *memory = NULL, value = 1;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &memory, &win);
    MPI_Win_fence(0, win);
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    if (notes)
        fprintf(notes, "window 1 1\n");
}

static void file(const char *name, int rank, FILE *notes)
{
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "adaptrace-bench-objects: cannot open %s\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_write_at(fh, 0, &rank, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    if (notes)
        fprintf(notes, "file %s 1\n", name);
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 || atol(argv[1]) < 1 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: %s COUNT SAMPLES DIRECTORY [NOTES_DIR]\n", argv[0]);
        return 2;
    }
    long count = atol(argv[1]);
    int samples = atoi(argv[2]);
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char name[4096];
    snprintf(name, sizeof name, "%s/adaptrace-bench-objects-%d-rank%d", argv[3], (int)getpid(), rank);
    FILE *notes = NULL;
    if (argc == 5) {
        char path[4096];
        snprintf(path, sizeof path, "%s/objects.%d.txt", argv[4], rank);
        notes = fopen(path, "w");
        if (!notes)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long *rss = calloc((size_t)samples + 1, sizeof *rss);
    long every = count / samples > 0 ? count / samples : 1;
    int taken = 0;
    double start = MPI_Wtime();
    for (long i = 0; i < count; i++) {
        if (i % every == 0 && taken < samples)
            rss[taken++] = status_kib("VmRSS:");
        window(notes);
        file(name, rank, notes);
    }
    double seconds = MPI_Wtime() - start;
    rss[taken++] = status_kib("VmRSS:");
    if (notes)
        fclose(notes);
    if (rank == 0) {
        printf("{\"windows\": %ld, \"files\": %ld, \"seconds\": %.3f, \"vm_hwm_kib\": %ld, \"rss_kib\": [", count,
               count, seconds, status_kib("VmHWM:"));
        for (int s = 0; s < taken; s++)
            printf("%s%ld", s ? ", " : "", rss[s]);
        printf("], \"rss_growth_kib\": %ld}\n", rss[taken - 1] - rss[0]);
    }
    free(rss);
    MPI_Finalize();
    return 0;
}
