/*
 * adaptrace-demo: a small 2-D Jacobi solver, the kind of MPI program
 * adaptrace is meant for. The ranks form a 2-D process grid; every
 * iteration exchanges halos with the four neighbours (MPI_Isend/MPI_Irecv/
 * MPI_Waitall), relaxes the interior, and every few iterations computes the
 * global residual (MPI_Allreduce). Each grid row has its own communicator
 * (MPI_Comm_split) whose row sums are reduced at the end; rank 0 broadcasts
 * the parameters and gathers the local results.
 *
 * usage: adaptrace-demo [ITERATIONS [LOCAL_SIZE]]   (defaults 3000 and 256)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIRECTION_COUNT = 4, RESIDUAL_INTERVAL = 10 };
enum { NORTH, SOUTH, WEST, EAST };

typedef struct parameters {
    int iterations;
    int local_size; /* interior points per side of each rank's block */
} parameters;

typedef struct grid {
    int n;            /* interior points per side */
    int stride;       /* n + 2: one halo cell on each side */
    double *current;
    double *next;
    double *send_column[2]; /* packed west/east columns */
    double *recv_column[2];
} grid;

static int parse_positive(const char *text, const char *what)
{
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value <= 0 || value > 1000000) {
        fprintf(stderr, "adaptrace-demo: %s '%s' is not a positive integer (accepted: 1..1000000)\n",
                what, text);
        return -1;
    }
    return (int)value;
}

static double *cell(const grid *g, double *field, int row, int column)
{
    return &field[row * g->stride + column];
}

static void grid_init(grid *g, int n, const int coords[2])
{
    g->n = n;
    g->stride = n + 2;
    size_t cells = (size_t)g->stride * (size_t)g->stride;
    g->current = calloc(cells, sizeof(double));
    g->next = calloc(cells, sizeof(double));
    for (int side = 0; side < 2; side++) {
        g->send_column[side] = calloc((size_t)n, sizeof(double));
        g->recv_column[side] = calloc((size_t)n, sizeof(double));
    }
    if (!g->current || !g->next || !g->send_column[0] || !g->send_column[1] ||
        !g->recv_column[0] || !g->recv_column[1]) {
        fprintf(stderr, "adaptrace-demo: out of memory for a %dx%d block\n", n, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* A smooth initial field that differs per block, so the solver has work. */
    for (int row = 1; row <= n; row++)
        for (int column = 1; column <= n; column++)
            *cell(g, g->current, row, column) =
                (double)((row + coords[0] * n) % 17 + (column + coords[1] * n) % 13);
}

static void grid_free(grid *g)
{
    free(g->current);
    free(g->next);
    for (int side = 0; side < 2; side++) {
        free(g->send_column[side]);
        free(g->recv_column[side]);
    }
}

/* Halo exchange with the four neighbours; MPI_PROC_NULL at the border. */
static void exchange_halos(grid *g, MPI_Comm cart, const int neighbour[DIRECTION_COUNT])
{
    const int n = g->n;
    MPI_Request requests[2 * DIRECTION_COUNT];
    for (int row = 1; row <= n; row++) {
        g->send_column[0][row - 1] = *cell(g, g->current, row, 1);
        g->send_column[1][row - 1] = *cell(g, g->current, row, n);
    }
    MPI_Irecv(cell(g, g->current, 0, 1), n, MPI_DOUBLE, neighbour[NORTH], SOUTH, cart, &requests[0]);
    MPI_Irecv(cell(g, g->current, n + 1, 1), n, MPI_DOUBLE, neighbour[SOUTH], NORTH, cart, &requests[1]);
    MPI_Irecv(g->recv_column[0], n, MPI_DOUBLE, neighbour[WEST], EAST, cart, &requests[2]);
    MPI_Irecv(g->recv_column[1], n, MPI_DOUBLE, neighbour[EAST], WEST, cart, &requests[3]);
    MPI_Isend(cell(g, g->current, 1, 1), n, MPI_DOUBLE, neighbour[NORTH], NORTH, cart, &requests[4]);
    MPI_Isend(cell(g, g->current, n, 1), n, MPI_DOUBLE, neighbour[SOUTH], SOUTH, cart, &requests[5]);
    MPI_Isend(g->send_column[0], n, MPI_DOUBLE, neighbour[WEST], WEST, cart, &requests[6]);
    MPI_Isend(g->send_column[1], n, MPI_DOUBLE, neighbour[EAST], EAST, cart, &requests[7]);
    MPI_Waitall(2 * DIRECTION_COUNT, requests, MPI_STATUSES_IGNORE);
    for (int row = 1; row <= n; row++) {
        if (neighbour[WEST] != MPI_PROC_NULL)
            *cell(g, g->current, row, 0) = g->recv_column[0][row - 1];
        if (neighbour[EAST] != MPI_PROC_NULL)
            *cell(g, g->current, row, n + 1) = g->recv_column[1][row - 1];
    }
}

/* One Jacobi sweep of the 5-point stencil; returns the local squared change. */
static double relax(grid *g)
{
    const int n = g->n;
    double change = 0.0;
    for (int row = 1; row <= n; row++) {
        for (int column = 1; column <= n; column++) {
            double updated = 0.25 * (*cell(g, g->current, row - 1, column) +
                                     *cell(g, g->current, row + 1, column) +
                                     *cell(g, g->current, row, column - 1) +
                                     *cell(g, g->current, row, column + 1));
            double delta = updated - *cell(g, g->current, row, column);
            change += delta * delta;
            *cell(g, g->next, row, column) = updated;
        }
    }
    double *swap = g->current;
    g->current = g->next;
    g->next = swap;
    return change;
}

static double local_sum(const grid *g)
{
    double sum = 0.0;
    for (int row = 1; row <= g->n; row++)
        for (int column = 1; column <= g->n; column++)
            sum += *cell(g, g->current, row, column);
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int world_rank, world_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    parameters params = { 3000, 256 };
    if (world_rank == 0) {
        if (argc > 1)
            params.iterations = parse_positive(argv[1], "ITERATIONS");
        if (argc > 2)
            params.local_size = parse_positive(argv[2], "LOCAL_SIZE");
    }
    MPI_Bcast(&params, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (params.iterations < 0 || params.local_size < 0) {
        MPI_Finalize();
        return 2;
    }

    int dims[2] = { 0, 0 };
    int periodic[2] = { 0, 0 };
    MPI_Dims_create(world_size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periodic, 0, &cart);
    int cart_rank, coords[2];
    MPI_Comm_rank(cart, &cart_rank);
    MPI_Cart_coords(cart, cart_rank, 2, coords);
    int neighbour[DIRECTION_COUNT];
    MPI_Cart_shift(cart, 0, 1, &neighbour[NORTH], &neighbour[SOUTH]);
    MPI_Cart_shift(cart, 1, 1, &neighbour[WEST], &neighbour[EAST]);

    MPI_Comm row_comm;
    MPI_Comm_split(cart, coords[0], coords[1], &row_comm);

    grid g;
    grid_init(&g, params.local_size, coords);
    double residual = 0.0;
    for (int iteration = 1; iteration <= params.iterations; iteration++) {
        exchange_halos(&g, cart, neighbour);
        double change = relax(&g);
        if (iteration % RESIDUAL_INTERVAL == 0 || iteration == params.iterations)
            MPI_Allreduce(&change, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
    }

    double sum = local_sum(&g);
    double row_sum = 0.0;
    MPI_Reduce(&sum, &row_sum, 1, MPI_DOUBLE, MPI_SUM, 0, row_comm);
    double *sums = world_rank == 0 ? malloc((size_t)world_size * sizeof(double)) : NULL;
    MPI_Gather(&sum, 1, MPI_DOUBLE, sums, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        double total = 0.0;
        for (int r = 0; r < world_size; r++)
            total += sums[r];
        printf("adaptrace-demo: %d ranks (%dx%d grid), %d iterations of %dx%d, residual %.6e, "
               "field sum %.6e, row 0 sum %.6e\n",
               world_size, dims[0], dims[1], params.iterations, params.local_size,
               params.local_size, residual, total, row_sum);
        free(sums);
    }

    grid_free(&g);
    MPI_Comm_free(&row_comm);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
