/*
 * A program that calls MPI only through Open MPI's mpif.h entry points
 * (mpi_init_, mpi_barrier_, mpi_finalize_: arguments by reference, as
 * Fortran passes them), written in C so that a build without a Fortran
 * compiler has it: what a Fortran program does where libadaptrace.so has
 * no Fortran wrappers (ADAPTRACE_FORTRAN off, tests/mpi).
 */
#include <mpi.h>

void mpi_init_(MPI_Fint *ierror);
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierror);
void mpi_finalize_(MPI_Fint *ierror);

int main(void)
{
    MPI_Fint error = 0;
    mpi_init_(&error);
    MPI_Fint world = PMPI_Comm_c2f(MPI_COMM_WORLD);
    mpi_barrier_(&world, &error);
    mpi_finalize_(&error);
    return error == 0 ? 0 : 1;
}
