/*
 * A deterministic one-sided (MPI-3 RMA) program for the whole-run tests:
 * one synchronisation mode per run, each rank working on its ring
 * neighbours. Every MPI call goes through CALL(); besides the calls each
 * rank notes (format in expect_notes.h, with these lines added):
 *
 *   window <w0> <w1> ...            the last call created a window whose
 *                                   group has these MPI_COMM_WORLD ranks
 *   rma <put|get|atomic> <target> <sent> <received> <window>
 *                                   the last call did this operation on the
 *                                   window'th window this rank created
 *   group <w0> ...                  the last call synchronised with a group
 *                                   of these MPI_COMM_WORLD ranks
 *
 * usage: mpi-rma fence|pscw|lock|lock_all|untraced_window EXPECT_DIR
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expect_notes.h"

enum { CELLS = 8 };

static int rank, size, left, right, windows_created;

/* Creates a window on MPI_COMM_WORLD and says so; returns its number. */
static int note_window(void)
{
    expect_note_members("window", 0, 1, size);
    return windows_created++;
}

static void note_operation(const char *kind, int target, size_t sent, size_t received, int window)
{
    expect_note("rma %s %d %zu %zu %d", kind, target, sent, received, window);
}

/* Active target, fence epochs: every operation kind of a blocking call. */
static void fence(void)
{
    int local[CELLS] = { 0 };
    int values[CELLS], results[CELLS], one = 1, fetched = 0, compare = 0, swapped = 0;
    for (int i = 0; i < CELLS; i++)
        values[i] = rank * 100 + i;
    MPI_Win win;
    CALL(MPI_Win_create, local, (MPI_Aint)sizeof local, (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int w = note_window();
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, values, 2, MPI_INT, right, 0, 2, MPI_INT, win);
    note_operation("put", right, 2 * sizeof(int), 0, w);
    CALL(MPI_Get, results, 3, MPI_INT, left, 4, 3, MPI_INT, win);
    note_operation("get", left, 0, 3 * sizeof(int), w);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Accumulate, values, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win);
    note_operation("atomic", right, sizeof(int), 0, w);
    CALL(MPI_Get_accumulate, values, 2, MPI_INT, results, 2, MPI_INT, left, 5, 2, MPI_INT, MPI_SUM, win);
    note_operation("atomic", left, 2 * sizeof(int), 2 * sizeof(int), w);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Fetch_and_op, &one, &fetched, MPI_INT, right, 7, MPI_SUM, win);
    note_operation("atomic", right, sizeof(int), sizeof(int), w);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Compare_and_swap, &one, &compare, &swapped, MPI_INT, left, 6, win);
    note_operation("atomic", left, 2 * sizeof(int), sizeof(int), w);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Win_free, &win);
    if (local[0] != left * 100 || local[1] != left * 100 + 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Generalised active target: each rank exposes its window to its left
 * neighbour and accesses its right one; the second round waits by test. */
static void post_start_complete_wait(void)
{
    int *local = NULL;
    int values[CELLS];
    for (int i = 0; i < CELLS; i++)
        values[i] = rank + i;
    MPI_Win win;
    CALL(MPI_Win_allocate, (MPI_Aint)(CELLS * sizeof(int)), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &local,
         &win);
    int w = note_window();
    MPI_Group world, from_left, to_right;
    CALL(MPI_Comm_group, MPI_COMM_WORLD, &world);
    CALL(MPI_Group_incl, world, 1, &left, &from_left);
    CALL(MPI_Group_incl, world, 1, &right, &to_right);
    for (int round = 0; round < 2; round++) {
        CALL(MPI_Win_post, from_left, 0, win);
        expect_note_members("group", left, 1, 1);
        CALL(MPI_Win_start, to_right, 0, win);
        expect_note_members("group", right, 1, 1);
        CALL(MPI_Put, values, 4, MPI_INT, right, 0, 4, MPI_INT, win);
        note_operation("put", right, 4 * sizeof(int), 0, w);
        CALL(MPI_Accumulate, values, 2, MPI_INT, right, 4, 2, MPI_INT, MPI_SUM, win);
        note_operation("atomic", right, 2 * sizeof(int), 0, w);
        CALL(MPI_Win_complete, win);
        if (round == 0) {
            CALL(MPI_Win_wait, win);
        } else {
            for (int flag = 0; !flag;)
                CALL(MPI_Win_test, win, &flag);
        }
    }
    CALL(MPI_Group_free, &to_right);
    CALL(MPI_Group_free, &from_left);
    CALL(MPI_Group_free, &world);
    CALL(MPI_Win_free, &win);
}

/* Passive target, one target locked at a time, on a dynamic window whose
 * memory is attached afterwards. */
static void lock(void)
{
    int local[CELLS] = { 0 }, values[CELLS] = { 0 }, results[CELLS];
    MPI_Win win;
    CALL(MPI_Win_create_dynamic, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int w = note_window();
    CALL(MPI_Win_attach, win, local, (MPI_Aint)sizeof local);
    MPI_Aint mine, addresses[64];
    CALL(MPI_Get_address, local, &mine);
    CALL(MPI_Allgather, &mine, 1, MPI_AINT, addresses, 1, MPI_AINT, MPI_COMM_WORLD);
    CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, right, 0, win);
    CALL(MPI_Put, values, 3, MPI_INT, right, addresses[right], 3, MPI_INT, win);
    note_operation("put", right, 3 * sizeof(int), 0, w);
    CALL(MPI_Put, values, 1, MPI_INT, right, addresses[right] + 3 * (MPI_Aint)sizeof(int), 1, MPI_INT, win);
    note_operation("put", right, sizeof(int), 0, w);
    CALL(MPI_Win_flush, right, win);
    CALL(MPI_Get, results, 2, MPI_INT, right, addresses[right], 2, MPI_INT, win);
    note_operation("get", right, 0, 2 * sizeof(int), w);
    CALL(MPI_Win_flush_local, right, win);
    CALL(MPI_Accumulate, values, 1, MPI_INT, right, addresses[right], 1, MPI_INT, MPI_SUM, win);
    note_operation("atomic", right, sizeof(int), 0, w);
    CALL(MPI_Win_unlock, right, win);
    CALL(MPI_Win_lock, MPI_LOCK_SHARED, left, 0, win);
    CALL(MPI_Get, results, 4, MPI_INT, left, addresses[left], 4, MPI_INT, win);
    note_operation("get", left, 0, 4 * sizeof(int), w);
    CALL(MPI_Win_unlock, left, win);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
    CALL(MPI_Win_detach, win, local);
    CALL(MPI_Win_free, &win);
}

/* Passive target on every rank at once, with the request-based operations,
 * on a window of shared memory. */
static void lock_all(void)
{
    MPI_Comm node;
    CALL(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    CALL(MPI_Comm_size, node, &node_size);
    if (node_size != size)
        MPI_Abort(MPI_COMM_WORLD, 4);
    int *local = NULL;
    MPI_Win win;
    CALL(MPI_Win_allocate_shared, (MPI_Aint)(CELLS * sizeof(int)), (int)sizeof(int), MPI_INFO_NULL, node, &local,
         &win);
    int w = note_window();
    int values[CELLS] = { 1, 2, 3, 4, 5, 6, 7, 8 }, results[CELLS];
    MPI_Request requests[3];
    CALL(MPI_Win_lock_all, 0, win);
    CALL(MPI_Rput, values, 2, MPI_INT, right, 0, 2, MPI_INT, win, &requests[0]);
    note_operation("put", right, 2 * sizeof(int), 0, w);
    CALL(MPI_Rget, results, 1, MPI_INT, left, 3, 1, MPI_INT, win, &requests[1]);
    note_operation("get", left, 0, sizeof(int), w);
    CALL(MPI_Raccumulate, values, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win, &requests[2]);
    note_operation("atomic", right, sizeof(int), 0, w);
    CALL(MPI_Waitall, 3, requests, MPI_STATUSES_IGNORE);
    CALL(MPI_Rget_accumulate, values, 1, MPI_INT, results, 1, MPI_INT, left, 4, 1, MPI_INT, MPI_SUM, win,
         &requests[0]);
    note_operation("atomic", left, sizeof(int), sizeof(int), w);
    CALL(MPI_Wait, &requests[0], MPI_STATUS_IGNORE);
    CALL(MPI_Put, values, 1, MPI_INT, left, 5, 1, MPI_INT, win);
    note_operation("put", left, sizeof(int), 0, w);
    CALL(MPI_Win_flush_local_all, win);
    CALL(MPI_Get, results, 1, MPI_INT, right, 6, 1, MPI_INT, win);
    note_operation("get", right, 0, sizeof(int), w);
    CALL(MPI_Win_flush_all, win);
    CALL(MPI_Win_sync, win);
    CALL(MPI_Win_unlock_all, win);
    CALL(MPI_Win_free, &win);
    CALL(MPI_Comm_free, &node);
}

/* A window on a communicator adaptrace never saw created (made through
 * the profiling interface): its calls are regions only, and the summary
 * counts the window as not traced, one per rank. */
static void untraced_window(void)
{
    MPI_Comm hidden;
    PMPI_Comm_dup(MPI_COMM_WORLD, &hidden);
    int local = 0, value = rank;
    MPI_Win win;
    CALL(MPI_Win_create, &local, (MPI_Aint)sizeof local, (int)sizeof local, MPI_INFO_NULL, hidden, &win);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Put, &value, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    CALL(MPI_Win_fence, 0, win);
    CALL(MPI_Win_free, &win);
    PMPI_Comm_free(&hidden);
    if (local != left)
        MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s fence|pscw|lock|lock_all|untraced_window EXPECT_DIR\n", argv[0]);
        return 2;
    }
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    if (size > 64) {
        fprintf(stderr, "mpi-rma: at most 64 ranks\n");
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    }
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    if (strcmp(argv[1], "fence") == 0) {
        fence();
    } else if (strcmp(argv[1], "pscw") == 0) {
        post_start_complete_wait();
    } else if (strcmp(argv[1], "lock") == 0) {
        lock();
    } else if (strcmp(argv[1], "lock_all") == 0) {
        lock_all();
    } else if (strcmp(argv[1], "untraced_window") == 0) {
        untraced_window();
    } else {
        fprintf(stderr, "mpi-rma: unknown mode '%s' (accepted: fence, pscw, lock, lock_all, untraced_window)\n", argv[1]);
        CALL(MPI_Abort, MPI_COMM_WORLD, 2);
    }
    expect_note("call MPI_Finalize");
    expect_write(argv[2], rank);
    MPI_Finalize();
    return 0;
}
