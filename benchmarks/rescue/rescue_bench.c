/*
 * The rescue of issue #10, timed inside a traced MPI run: every rank fills
 * its buffer to a given fraction with MPI events, then saves it from the
 * snapshot signal's handler (the same code as an ending signal), then ends
 * normally, so the normal end-of-run write of the same data is timed by
 * the runtime (summary.json's write_seconds). run.py drives it.
 *
 * usage: adaptrace-bench-rescue FRACTION KEEP_DIR
 *   Run traced with ADAPTRACE_SAMPLING=off (the whole buffer holds
 *   events), ADAPTRACE_SNAPSHOT_SIGNAL=USR2 and ADAPTRACE_OUTPUT set. Each
 *   rank hard-links its rescue file into KEEP_DIR (the normal end removes
 *   it) for run.py to recover. Rank 0 prints one JSON line.
 */
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bytes one MPI_Comm_rank call takes in the buffer: an Enter and a Leave
 * record of 24 bytes each (16-byte header, 8-byte region payload). */
#define BYTES_PER_CALL 48.0

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static double buffer_bytes(void)
{
    const char *text = getenv("ADAPTRACE_BUFFER_SIZE");
    char *end = NULL;
    double value = text != NULL ? strtod(text, &end) : 64.0;
    if (end != NULL && (*end == 'M' || *end == 'm'))
        value *= 1024.0 * 1024.0;
    else if (end != NULL && (*end == 'K' || *end == 'k'))
        value *= 1024.0;
    else if (text == NULL)
        value *= 1024.0 * 1024.0;
    return value;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FRACTION KEEP_DIR\n", argv[0]);
        return 2;
    }
    double fraction = atof(argv[1]);
    const char *keep = argv[2], *output = getenv("ADAPTRACE_OUTPUT");
    if (output == NULL) {
        fprintf(stderr, "%s: ADAPTRACE_OUTPUT is not set\n", argv[0]);
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = (long)(fraction * buffer_bytes() / BYTES_PER_CALL);
    int ignored;
    for (long i = 0; i < calls; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &ignored);
    if (rank == 0 && mkdir(keep, 0755) != 0 && errno != EEXIST)
        perror(keep);
    MPI_Barrier(MPI_COMM_WORLD);

    double start = seconds_now();
    raise(SIGUSR2);
    double save_seconds = seconds_now() - start;

    char saved[4096], kept[4096];
    snprintf(saved, sizeof saved, "%s.rescue/rank-%d.adtr", output, rank);
    snprintf(kept, sizeof kept, "%s/rank-%d.adtr", keep, rank);
    struct stat file;
    double file_bytes = stat(saved, &file) == 0 ? (double)file.st_size : -1.0;
    if (link(saved, kept) != 0)
        perror(kept);
    double slowest = 0.0, largest = 0.0;
    MPI_Reduce(&save_seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&file_bytes, &largest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"ranks\": %d, \"calls_per_rank\": %ld, \"save_seconds_max\": %.6f, \"rescue_file_bytes_max\": %.0f}\n",
               size, calls, slowest, largest);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
