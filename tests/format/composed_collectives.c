/* The composed collectives (adt_composed_group, issue #28: the online
 * analyzers' writer) under mpirun -np 2: 5 ranks as threads of the 2
 * processes, interleaved and uneven (process 0 holds ranks 0 and 2,
 * process 1 ranks 1, 3 and 4), so that pairs meet in one process and
 * across. Every operation is run from every root with contents that name
 * their sender, receiver and place: a message routed to the wrong thread,
 * or overtaking another of its pair, fails a check. Then a group whose
 * process 1 sends nothing: process 0's wait ends in an error within its
 * bound, and its other thread, waiting in process, is woken with one.
 * Exit status 0 = all checks passed in both processes. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

#define RANKS 5
/* Over Open MPI's eager limit: such a message waits for its receiver. */
#define LARGE_BYTES ((size_t)2 << 20)

static const uint32_t process_of[RANKS] = { 0, 1, 0, 1, 1 };

typedef struct rank_thread {
    adt_composed_group *group;
    uint32_t rank;
    int failures;
    int checks;
} rank_thread;

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        t->checks++;                                                                  \
        if (!(cond)) {                                                                \
            fprintf(stderr, "rank %u: check failed: %s: ", t->rank, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
            t->failures++;                                                            \
        }                                                                             \
    } while (0)

/* The byte at i of a message from `from` to `to`, its seq-th. */
static unsigned char content(uint32_t from, uint32_t to, uint32_t seq, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + seq * 3 + i * 5 + (i >> 9));
}

static void fill(unsigned char *data, size_t bytes, uint32_t from, uint32_t to, uint32_t seq)
{
    for (size_t i = 0; i < bytes; i++)
        data[i] = content(from, to, seq, i);
}

static size_t mismatch(const unsigned char *data, size_t bytes, uint32_t from, uint32_t to, uint32_t seq)
{
    for (size_t i = 0; i < bytes; i++)
        if (data[i] != content(from, to, seq, i))
            return i + 1;
    return 0;
}

/* The seq-th message of a pair: small, large, small, ... */
static size_t message_bytes(uint32_t seq)
{
    return seq % 2 ? LARGE_BYTES : 16 + seq;
}

static void exchange(rank_thread *t, const adt_collectives *c, unsigned char *buffer, uint32_t peer, bool sending)
{
    for (uint32_t seq = 0; seq < 4; seq++) {
        size_t bytes = message_bytes(seq);
        if (sending) {
            fill(buffer, bytes, t->rank, peer, seq);
            CHECK(c->send(c->context, buffer, bytes, peer) == 0, "send %u to %u", seq, peer);
        } else {
            memset(buffer, 0, bytes);
            CHECK(c->recv(c->context, buffer, bytes, peer) == 0, "recv %u from %u", seq, peer);
            size_t at = mismatch(buffer, bytes, peer, t->rank, seq);
            CHECK(at == 0, "message %u from %u differs at byte %zu", seq, peer, at - 1);
        }
    }
}

static void point_to_point(rank_thread *t, const adt_collectives *c, unsigned char *buffer)
{
    /* Every pair, in one order for all: the smallest pair not done has
     * both its ranks at it, so no send waits forever for its receiver. */
    for (uint32_t a = 0; a < RANKS; a++)
        for (uint32_t b = a + 1; b < RANKS; b++) {
            if (t->rank == a) {
                exchange(t, c, buffer, b, true);
                exchange(t, c, buffer, b, false);
            } else if (t->rank == b) {
                exchange(t, c, buffer, a, false);
                exchange(t, c, buffer, a, true);
            }
        }
    /* Every rank sends to rank 0, which takes them last rank first: the
     * earlier senders' messages wait, each for its own receive. */
    if (t->rank != 0) {
        exchange(t, c, buffer, 0, true);
    } else {
        for (uint32_t from = RANKS - 1; from > 0; from--)
            exchange(t, c, buffer, from, false);
    }
}

static void collectives(rank_thread *t, const adt_collectives *c, unsigned char *buffer)
{
    CHECK(c->rank == t->rank && c->size == RANKS, "rank %u of %u", c->rank, c->size);
    CHECK(c->barrier(c->context) == 0, "barrier");
    for (uint32_t root = 0; root < RANKS; root++) {
        size_t bytes = root == RANKS - 1 ? LARGE_BYTES : 100 + root;
        if (t->rank == root)
            fill(buffer, bytes, root, RANKS, 0);
        else
            memset(buffer, 0, bytes);
        CHECK(c->bcast(c->context, buffer, bytes, root) == 0, "bcast from %u", root);
        size_t at = mismatch(buffer, bytes, root, RANKS, 0);
        CHECK(at == 0, "bcast from %u differs at byte %zu", root, at - 1);
    }
    size_t sizes[RANKS], total = 0;
    for (uint32_t r = 0; r < RANKS; r++)
        total += sizes[r] = r == 3 ? LARGE_BYTES : 10 * r + 1;
    /* + 1: room for the sizes of the wrong gatherv below */
    unsigned char *all = malloc(total + 1), *mine = malloc(sizes[t->rank]);
    for (uint32_t root = 0; root < RANKS; root++) {
        fill(mine, sizes[t->rank], t->rank, root, 1);
        memset(all, 0, total);
        CHECK(c->gatherv(c->context, mine, sizes[t->rank], all, sizes, root) == 0, "gatherv to %u", root);
        for (uint32_t r = 0, offset = 0; t->rank == root && r < RANKS; offset += (uint32_t)sizes[r], r++) {
            size_t at = mismatch(all + offset, sizes[r], r, root, 1);
            CHECK(at == 0, "gatherv to %u: rank %u's part differs at byte %zu", root, r, at - 1);
        }
        if (t->rank == root)
            for (uint32_t r = 0, offset = 0; r < RANKS; offset += (uint32_t)sizes[r], r++)
                fill(all + offset, sizes[r], root, r, 2);
        memset(mine, 0, sizes[t->rank]);
        CHECK(c->scatterv(c->context, all, sizes, mine, sizes[t->rank], root) == 0, "scatterv from %u", root);
        size_t at = mismatch(mine, sizes[t->rank], root, t->rank, 2);
        CHECK(at == 0, "scatterv from %u differs at byte %zu", root, at - 1);
    }
    /* A root that expects another size from rank 1: every rank hears the
     * root's verdict, and the pairs stay in step for what follows. */
    size_t wrong[RANKS];
    memcpy(wrong, sizes, sizeof wrong);
    wrong[1] += 1;
    CHECK(c->gatherv(c->context, mine, sizes[t->rank], all, wrong, 2) != 0, "gatherv of a wrong size succeeded");
    uint64_t largest = 3 * t->rank + 5, smallest = largest;
    CHECK(c->allreduce_max_u64(c->context, &largest) == 0 && largest == 3 * (RANKS - 1) + 5, "max %llu",
          (unsigned long long)largest);
    CHECK(c->allreduce_min_u64(c->context, &smallest) == 0 && smallest == 5, "min %llu",
          (unsigned long long)smallest);
    free(all);
    free(mine);
}

static void *run_rank(void *arg)
{
    rank_thread *t = arg;
    adt_collectives c = adt_composed_group_collectives(t->group, t->rank);
    unsigned char *buffer = malloc(LARGE_BYTES);
    collectives(t, &c, buffer);
    point_to_point(t, &c, buffer);
    CHECK(c.barrier(c.context) == 0, "the last barrier");
    free(buffer);
    return NULL;
}

/* Process 0 only, in a group where process 1 sends nothing: rank 0 waits
 * for rank 1 (the other process) until the bound, rank 2 for rank 0 (in
 * process); both get an error. */
static void *run_abandoned(void *arg)
{
    rank_thread *t = arg;
    adt_collectives c = adt_composed_group_collectives(t->group, t->rank);
    char byte = 0;
    uint32_t from = t->rank == 0 ? 1 : 0;
    CHECK(c.recv(c.context, &byte, 1, from) != 0, "a message from %u that was never sent", from);
    return NULL;
}

static int run_threads(adt_composed_group *group, int process, void *(*body)(void *), int *checks)
{
    rank_thread threads[RANKS];
    pthread_t ids[RANKS];
    for (uint32_t r = 0; r < RANKS; r++) {
        threads[r] = (rank_thread){ .group = group, .rank = r };
        if ((int)process_of[r] == process)
            pthread_create(&ids[r], NULL, body, &threads[r]);
    }
    int failures = 0;
    for (uint32_t r = 0; r < RANKS; r++)
        if ((int)process_of[r] == process) {
            pthread_join(ids[r], NULL);
            failures += threads[r].failures;
            *checks += threads[r].checks;
        }
    return failures;
}

int main(int argc, char **argv)
{
    int provided = 0, process = 0, processes = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &process);
    MPI_Comm_size(MPI_COMM_WORLD, &processes);
    if (provided < MPI_THREAD_MULTIPLE || processes != 2) {
        fprintf(stderr, "composed collectives: need 2 processes with MPI_THREAD_MULTIPLE (%d processes, level %d)\n",
                processes, provided);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm comm, abandoned_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &abandoned_comm);
    char error[256] = "";
    int failures = 0, checks = 0;
    adt_composed_group *group = adt_composed_group_create(&comm, RANKS, process_of, 60, error, sizeof error);
    if (group == NULL) {
        fprintf(stderr, "process %d: %s\n", process, error);
        failures++;
    } else {
        failures += run_threads(group, process, run_rank, &checks);
        checks++;
        if (adt_composed_group_broken(group)) {
            fprintf(stderr, "process %d: the group broke\n", process);
            failures++;
        }
        adt_composed_group_destroy(group);
    }
    /* Tags beyond MPI_TAG_UB: refused with why. */
    static uint32_t crowded[1u << 17];
    checks++;
    if (adt_composed_group_create(&comm, 1u << 17, crowded, 1, error, sizeof error) != NULL ||
        strstr(error, "MPI_TAG_UB") == NULL) {
        fprintf(stderr, "process %d: %u ranks in one process were not refused: '%s'\n", process, 1u << 17, error);
        failures++;
    }
    adt_composed_group *abandoned = adt_composed_group_create(&abandoned_comm, RANKS, process_of, 1, error,
                                                              sizeof error);
    if (process == 0 && abandoned != NULL) {
        failures += run_threads(abandoned, process, run_abandoned, &checks);
        checks++;
        if (!adt_composed_group_broken(abandoned)) {
            fprintf(stderr, "process 0: the group did not break on a wait given up\n");
            failures++;
        }
    }
    adt_composed_group_destroy(abandoned);
    int all_failures = 0, all_checks = 0;
    MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (process == 0)
        printf("composed collectives: %d of %d checks failed\n", all_failures, all_checks);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&abandoned_comm);
    MPI_Finalize();
    return process == 0 && all_failures != 0 ? 1 : 0;
}
