/* MPI programs whose profile is known, for the adaptrace-report tests.
 *
 * usage: report-workloads pingpong|imbalance|late-sender|irregular EXPECT_DIR
 *   pingpong     ranks 0 and 1 exchange PINGPONG_ROUNDS round trips of
 *                PINGPONG_BYTES bytes (MPI_Send/MPI_Recv); nothing else
 *                sends.
 *   imbalance    IMBALANCE_STEPS steps of computing then MPI_Barrier;
 *                rank 1 computes 2 × IMBALANCE_STEP_MS, the others
 *                IMBALANCE_STEP_MS.
 *   late-sender  LATE_ROUNDS rounds: rank 0 sends a token to rank 1 and
 *                at once waits in MPI_Recv for the answer, which rank 1
 *                sends LATE_DELAY_MS after the token arrived (after a
 *                barrier, so that the first round starts together).
 *   irregular    IRREGULAR_STEPS time steps of MPI_Barrier, computing
 *                IRREGULAR_STEP_MS, MPI_Allreduce; in step
 *                IRREGULAR_SLOW_STEP rank IRREGULAR_SLOW_RANK computes
 *                IRREGULAR_SLOW_FACTOR times as long. Each rank writes
 *                the seconds it computed in each step, one line per step,
 *                to EXPECT_DIR/steps.RANK.
 * Computing is a busy wait on CLOCK_MONOTONIC. On a loaded machine a rank
 * can still be descheduled past its end (a few hundred ms were seen with
 * the test suite running beside other builds), so each rank writes the
 * seconds it actually spent computing to EXPECT_DIR/computed.RANK, and
 * check_report.py compares the report with those. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum {
    PINGPONG_ROUNDS = 100,
    PINGPONG_BYTES = 1024,
    IMBALANCE_STEPS = 4,
    IMBALANCE_STEP_MS = 150,
    LATE_ROUNDS = 3,
    LATE_DELAY_MS = 200,
    IRREGULAR_STEPS = 8,
    IRREGULAR_STEP_MS = 20,
    IRREGULAR_SLOW_STEP = 5,
    IRREGULAR_SLOW_RANK = 1,
    IRREGULAR_SLOW_FACTOR = 8,
};

static double now_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static double computed_seconds;

/* Not inlined, so the samples name it. Returns the seconds it computed. */
__attribute__((noinline)) static double compute_for(double milliseconds)
{
    double start = now_seconds();
    double end = start + milliseconds / 1000;
    double now;
    while ((now = now_seconds()) < end) {
    }
    computed_seconds += now - start;
    return now - start;
}

/* Writes values to EXPECT_DIR/NAME.RANK, one a line; 0 or 1 (said). */
static int write_seconds(const char *expect_dir, const char *name, int rank, const double *values, int count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", expect_dir, name, rank);
    FILE *out = fopen(path, "w");
    int written = out != NULL;
    for (int i = 0; i < count && written; i++) {
        written = fprintf(out, "%.9f\n", values[i]) > 0;
    }
    if (out == NULL || (fclose(out) != 0) | !written) {
        perror(path);
        return 1;
    }
    return 0;
}

static void pingpong(int rank)
{
    char message[PINGPONG_BYTES];
    memset(message, rank, sizeof message);
    for (int round = 0; round < PINGPONG_ROUNDS; round++) {
        if (rank == 0) {
            MPI_Send(message, PINGPONG_BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(message, PINGPONG_BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(message, PINGPONG_BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(message, PINGPONG_BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
    }
}

static void imbalance(int rank)
{
    for (int step = 0; step < IMBALANCE_STEPS; step++) {
        compute_for(rank == 1 ? 2 * IMBALANCE_STEP_MS : IMBALANCE_STEP_MS);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void late_sender(int rank)
{
    int token = 0;
    /* Both ranks start the rounds together, whatever MPI_Init took. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < LATE_ROUNDS; round++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            compute_for(LATE_DELAY_MS);
            MPI_Send(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        }
    }
}

/* Not inlined: its two MPI calls are one calling context on every rank. */
__attribute__((noinline)) static int irregular(int rank, const char *expect_dir)
{
    double step_seconds[IRREGULAR_STEPS];
    for (int step = 0; step < IRREGULAR_STEPS; step++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int slow = step == IRREGULAR_SLOW_STEP && rank == IRREGULAR_SLOW_RANK;
        step_seconds[step] = compute_for(slow ? IRREGULAR_SLOW_FACTOR * IRREGULAR_STEP_MS : IRREGULAR_STEP_MS);
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    return write_seconds(expect_dir, "steps", rank, step_seconds, IRREGULAR_STEPS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int status = 0;
    if (argc == 3 && strcmp(argv[1], "pingpong") == 0) {
        pingpong(rank);
    } else if (argc == 3 && strcmp(argv[1], "imbalance") == 0) {
        imbalance(rank);
    } else if (argc == 3 && strcmp(argv[1], "late-sender") == 0) {
        late_sender(rank);
    } else if (argc == 3 && strcmp(argv[1], "irregular") == 0) {
        status = irregular(rank, argv[2]);
    } else {
        if (rank == 0) {
            fprintf(stderr, "usage: %s pingpong|imbalance|late-sender|irregular EXPECT_DIR\n", argv[0]);
        }
        status = 2;
    }
    MPI_Finalize();
    if (status == 0) {
        status = write_seconds(argv[2], "computed", rank, &computed_seconds, 1);
    }
    return status;
}
