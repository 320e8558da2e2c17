! How the Fortran test programs begin, one source compiled twice: with
! USE_MPI_F08 through the mpi_f08 module (adt_test_noted_start_f08),
! without through `use mpi` (adt_test_noted_start), so that each program's
! MPI_Init, MPI_Comm_rank and MPI_Comm_size go through the binding it
! tests. Each call is noted before it is made (module notes).
module noted_start
#ifdef USE_MPI_F08
    use mpi_f08
#else
    use mpi
#endif
    use notes
    implicit none
    private
    public :: start_noted
contains
    ! Reads the program's arguments into ARGUMENTS (all of them, or USAGE
    ! on stderr and exit status 2 when there are not as many), starts MPI
    ! and returns this process's RANK in MPI_COMM_WORLD and its size RANKS.
    subroutine start_noted(usage, arguments, rank, ranks)
        character(len=*), intent(in) :: usage
        character(len=*), intent(out) :: arguments(:)
        integer, intent(out) :: rank, ranks
        integer :: i, ierr

        if (command_argument_count() /= size(arguments)) then
            write (0, '(A,A)') 'usage: ', usage
            stop 2
        end if
        do i = 1, size(arguments)
            call get_command_argument(i, arguments(i))
        end do
        call note_call('MPI_Init')
        call MPI_Init(ierr)
        call note_call('MPI_Comm_rank')
        call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
        call note_call('MPI_Comm_size')
        call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
    end subroutine
end module
