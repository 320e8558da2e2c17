/*
 * More distinct MPI calls than a thread's first slab has signatures for
 * (issue #25): each rank sends itself 0-byte messages with 3,000
 * different tags, so the call signatures never repeat and the table of
 * 2,048 fills, as do the grammar's and timing's first tables. They grow
 * into the share, and the skeleton must expand exactly to every call the
 * archive holds.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char byte = 0;
    for (int tag = 0; tag < 3000; tag++) {
        MPI_Request request;
        MPI_Irecv(&byte, 0, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_SELF, &request);
        MPI_Send(&byte, 0, MPI_BYTE, 0, tag, MPI_COMM_SELF);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
