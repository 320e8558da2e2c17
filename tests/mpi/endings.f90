! The Fortran twin of endings.c (same modes and output): some traced
! communication through the Fortran bindings, then an ending. A fault is
! raised as SIGSEGV (Fortran has no portable wild store).
!
! usage: mpi-endings-fortran MODE EXPECT_DIR
program endings
    use mpi
    use notes
    use noted_start
    use, intrinsic :: iso_c_binding, only: c_int
    implicit none
    interface
        integer(c_int) function raise(signum) bind(C, name='raise')
            import :: c_int
            integer(c_int), value :: signum
        end function
    end interface
    integer, parameter :: rounds = 30, wait_tag = 99, sigsegv = 11
    integer :: ierr, rank, nranks, round, left, right, outgoing, incoming, total, value
    integer :: requests(2)
    character(len=4096) :: arguments(2), mode, expect_dir

    call start_noted('mpi-endings-fortran wait|segv|abort|no-finalize EXPECT_DIR', arguments, rank, nranks)
    mode = arguments(1)
    expect_dir = arguments(2)
    left = mod(rank + nranks - 1, nranks)
    right = mod(rank + 1, nranks)
    do round = 0, rounds - 1
        outgoing = rank * 1000 + round
        call note_call('MPI_Irecv')
        call MPI_Irecv(incoming, 1, MPI_INTEGER, left, round, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Isend')
        call MPI_Isend(outgoing, 1, MPI_INTEGER, right, round, MPI_COMM_WORLD, requests(2), ierr)
        call note_call('MPI_Waitall')
        call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(outgoing, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Bcast')
        call MPI_Bcast(total, 1, MPI_INTEGER, mod(round, nranks), MPI_COMM_WORLD, ierr)
        call compute()
    end do

    if (trim(mode) == 'no-finalize') then
        call ready('returns')
        call wait_for_every_log(expect_dir, nranks)
        stop
    end if
    if (rank == 1 .and. trim(mode) == 'segv') then
        call ready('faults')
        ierr = raise(sigsegv)
    end if
    if (rank == 1 .and. trim(mode) == 'abort') then
        call note_call('MPI_Abort')
        call ready('aborts')
        call wait_for_every_log(expect_dir, nranks)
        call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
    end if
    call note_call('MPI_Recv')
    call ready('waits')
    call MPI_Recv(value, 1, MPI_INTEGER, right, wait_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Finalize(ierr)

contains

    subroutine ready(what)
        character(len=*), intent(in) :: what
        call write_expectations(expect_dir, rank)
        write (*, '(A,I0,A,A)') 'rank ', rank, ' ', what
        flush (6)
    end subroutine

    subroutine compute()
        double precision, volatile :: total_sum
        integer :: i
        total_sum = 0d0
        do i = 1, 200000
            total_sum = total_sum + 1d0 / i
        end do
    end subroutine
end program
