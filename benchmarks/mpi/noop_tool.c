/*
 * A PMPI tool that does nothing but pass the ping-pong's calls on to
 * PMPI_*: stacked behind adaptrace (run.py's stacked_noop case, issue #24)
 * it measures what the stacking itself costs per call.
 */
#include <mpi.h>

int MPI_Send(const void *buffer, int count, MPI_Datatype type, int to, int tag, MPI_Comm comm)
{
    return PMPI_Send(buffer, count, type, to, tag, comm);
}

int MPI_Recv(void *buffer, int count, MPI_Datatype type, int from, int tag, MPI_Comm comm, MPI_Status *status)
{
    return PMPI_Recv(buffer, count, type, from, tag, comm, status);
}
