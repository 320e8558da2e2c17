/*
 * The C half of the mixed Fortran + C test program (mixed.f90): a small C
 * "library" that a Fortran code calls through bind(C), making MPI calls of
 * its own on communicators the Fortran side passes as Fortran handles
 * (MPI_Comm_f2c) and handing a communicator it creates back (MPI_Comm_c2f).
 * Every call is noted in the log the Fortran side shares (expect_notes.h),
 * so the expectations list the calls of both languages in one order.
 */
#include <mpi.h>

#include "expect_notes.h"

enum { HALO_WIDTH = 3, TAG_TO_RIGHT = 60, TAG_TO_LEFT = 61 };

/* One 1-D halo exchange with both ring neighbours of comm, then the global
 * sum of the interior: returns that sum. */
double mixed_halo_exchange(MPI_Fint fortran_comm)
{
    MPI_Comm comm = CALL(MPI_Comm_f2c, fortran_comm);
    int rank, size;
    CALL(MPI_Comm_rank, comm, &rank);
    CALL(MPI_Comm_size, comm, &size);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;

    /* ghost | interior | ghost */
    double field[3 * HALO_WIDTH];
    for (int i = 0; i < 3 * HALO_WIDTH; i++)
        field[i] = rank;
    double *left_ghost = field, *interior = field + HALO_WIDTH, *right_ghost = field + 2 * HALO_WIDTH;
    MPI_Request requests[4];
    CALL(MPI_Irecv, left_ghost, HALO_WIDTH, MPI_DOUBLE, left, TAG_TO_RIGHT, comm, &requests[0]);
    CALL(MPI_Irecv, right_ghost, HALO_WIDTH, MPI_DOUBLE, right, TAG_TO_LEFT, comm, &requests[1]);
    CALL(MPI_Isend, interior, HALO_WIDTH, MPI_DOUBLE, right, TAG_TO_RIGHT, comm, &requests[2]);
    CALL(MPI_Isend, interior, HALO_WIDTH, MPI_DOUBLE, left, TAG_TO_LEFT, comm, &requests[3]);
    CALL(MPI_Waitall, 4, requests, MPI_STATUSES_IGNORE);

    double local = 0, global = 0;
    for (int i = 0; i < HALO_WIDTH; i++)
        local += interior[i];
    CALL(MPI_Allreduce, &local, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
    return global;
}

/* A nonblocking reduction on comm to its rank 0, completed here. */
int mixed_reduce_ranks(MPI_Fint fortran_comm)
{
    MPI_Comm comm = CALL(MPI_Comm_f2c, fortran_comm);
    int rank, sum = 0;
    CALL(MPI_Comm_rank, comm, &rank);
    MPI_Request request;
    CALL(MPI_Ireduce, &rank, &sum, 1, MPI_INT, MPI_SUM, 0, comm, &request);
    CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
    return sum;
}

/* A duplicate of comm made in C, for the Fortran side to use and free. */
MPI_Fint mixed_duplicate(MPI_Fint fortran_comm)
{
    MPI_Comm comm = CALL(MPI_Comm_f2c, fortran_comm), duplicate;
    CALL(MPI_Comm_dup, comm, &duplicate);
    return CALL(MPI_Comm_c2f, duplicate);
}
