! Each wrapped MPI family called through the mpi_f08 module (whose routines
! call PMPI_ directly in Open MPI, so only adaptrace's mpi_x_f08_ entry points
! see them): blocking and nonblocking point-to-point with request arrays,
! collectives, communicators, one-sided communication (MPI-IO through
! mpi_f08: io.F90). Half of the calls leave the optional ierror
! out. Notes each call before making it and writes EXPECT_DIR/rank.<r>.txt
! (format in expect_notes.h) before MPI_Finalize. Needs an even number of
! ranks.
!
! usage: mpi-families-f08 EXPECT_DIR
program families_f08
    use mpi_f08
    use notes
    use noted_start
    implicit none
    integer :: ierr, rank, nranks, left, right, partner, parity
    character(len=4096) :: arguments(1), expect_dir

    call start_noted('mpi-families-f08 EXPECT_DIR', arguments, rank, nranks)
    expect_dir = arguments(1)
    if (nranks < 2 .or. mod(nranks, 2) /= 0) then
        if (rank == 0) write (0, '(A,I0)') 'mpi-families-f08: needs an even number of ranks, got ', nranks
        call note_call('MPI_Abort')
        call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
    left = mod(rank + nranks - 1, nranks)
    right = mod(rank + 1, nranks)
    partner = ieor(rank, 1)
    parity = mod(rank, 2)

    call blocking_point_to_point()
    call nonblocking_point_to_point()
    call collectives()
    call communicators()
    call one_sided()

    call note_call('MPI_Finalize')
    call write_expectations(expect_dir, rank)
    call MPI_Finalize(ierr)

contains

    subroutine blocking_point_to_point()
        integer :: values(4)
        type(MPI_Status) :: status
        values = rank
        if (parity == 0) then
            call note_call('MPI_Send')
            call MPI_Send(values, 4, MPI_INTEGER, partner, 1, MPI_COMM_WORLD)
            call note_call('MPI_Recv')
            call MPI_Recv(values, 2, MPI_INTEGER, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        else
            call note_call('MPI_Recv')
            call MPI_Recv(values, 4, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status)
            call note_call('MPI_Ssend')
            call MPI_Ssend(values, 2, MPI_INTEGER, status%MPI_SOURCE, 2, MPI_COMM_WORLD, ierr)
        end if
        call note_call('MPI_Sendrecv')
        call MPI_Sendrecv(values, 1, MPI_INTEGER, right, 3, values(2), 1, MPI_INTEGER, left, 3, &
                          MPI_COMM_WORLD, status)
    end subroutine

    subroutine nonblocking_point_to_point()
        integer :: out(2), in(2), index, completed, indices(2)
        type(MPI_Request) :: requests(2)
        type(MPI_Status) :: statuses(2)
        logical :: flag
        out = rank
        call note_call('MPI_Irecv')
        call MPI_Irecv(in(1), 1, MPI_INTEGER, left, 10, MPI_COMM_WORLD, requests(1))
        call note_call('MPI_Isend')
        call MPI_Isend(out(1), 1, MPI_INTEGER, right, 10, MPI_COMM_WORLD, requests(2), ierr)
        call note_call('MPI_Waitall')
        call MPI_Waitall(2, requests, statuses)

        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 2, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, requests(1))
        call note_call('MPI_Isend')
        call MPI_Isend(out, 2, MPI_INTEGER, right, 11, MPI_COMM_WORLD, requests(2))
        do completed = 1, 2
            call note_call('MPI_Waitany')
            call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE)
        end do

        call note_call('MPI_Irecv')
        call MPI_Irecv(in(2), 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, requests(1))
        call note_call('MPI_Isend')
        call MPI_Isend(out(2), 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, requests(2))
        flag = .false.
        do while (.not. flag)
            call note_call('MPI_Testall')
            call MPI_Testall(2, requests, flag, MPI_STATUSES_IGNORE, ierr)
        end do

        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 1, MPI_INTEGER, left, 13, MPI_COMM_WORLD, requests(1))
        call note_call('MPI_Isend')
        call MPI_Isend(out, 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, requests(2))
        index = 0
        do while (index < 2)
            call note_call('MPI_Waitsome')
            call MPI_Waitsome(2, requests, completed, indices, statuses)
            if (completed /= MPI_UNDEFINED) index = index + completed
        end do
        call note_call('MPI_Wait')
        call MPI_Wait(requests(1), statuses(1))
    end subroutine

    subroutine collectives()
        integer :: value, total, gathered(nranks)
        type(MPI_Request) :: request
        value = rank + 1
        call note_call('MPI_Barrier')
        call MPI_Barrier(MPI_COMM_WORLD)
        call note_call('MPI_Bcast')
        call MPI_Bcast(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(value, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
        call note_call('MPI_Gather')
        call MPI_Gather(value, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD)
        call note_call('MPI_Iallreduce')
        call MPI_Iallreduce(value, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, request)
        call note_call('MPI_Wait')
        call MPI_Wait(request, MPI_STATUS_IGNORE)
    end subroutine

    subroutine communicators()
        type(MPI_Comm) :: dup, same_parity
        integer :: value, total
        value = 1
        call note_call('MPI_Comm_dup')
        call MPI_Comm_dup(MPI_COMM_WORLD, dup)
        call note_call('MPI_Comm_split')
        call MPI_Comm_split(MPI_COMM_WORLD, parity, rank, same_parity, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(value, total, 1, MPI_INTEGER, MPI_SUM, same_parity)
        call note_members('members', parity, 2, nranks / 2)
        call note_call('MPI_Comm_set_name')
        call MPI_Comm_set_name(dup, 'f08 duplicate')
        call note_call('MPI_Barrier')
        call MPI_Barrier(dup)
        call note_members('members', 0, 1, nranks)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(same_parity)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(dup, ierr)
    end subroutine

    ! Fence epochs and a passive-target lock: each rank puts its rank into
    ! its right neighbour's window, then reads its left neighbour's, which
    ! holds the rank two to the left.
    subroutine one_sided()
        integer, asynchronous :: window_values(2)
        integer :: got
        type(MPI_Win) :: window
        integer(kind=MPI_ADDRESS_KIND) :: window_bytes, displacement
        integer :: value_bytes
        value_bytes = storage_size(got) / 8
        window_bytes = 2 * value_bytes
        displacement = 0
        window_values = -1
        call note_call('MPI_Win_create')
        call MPI_Win_create(window_values, window_bytes, value_bytes, MPI_INFO_NULL, MPI_COMM_WORLD, window, ierr)
        call note_call('MPI_Win_fence')
        call MPI_Win_fence(0, window)
        call note_call('MPI_Put')
        call MPI_Put(rank, 1, MPI_INTEGER, right, displacement, 1, MPI_INTEGER, window, ierr)
        call note_call('MPI_Win_fence')
        call MPI_Win_fence(0, window, ierr)
        call note_call('MPI_Win_lock')
        call MPI_Win_lock(MPI_LOCK_SHARED, left, 0, window)
        call note_call('MPI_Get')
        call MPI_Get(got, 1, MPI_INTEGER, left, displacement, 1, MPI_INTEGER, window)
        call note_call('MPI_Win_unlock')
        call MPI_Win_unlock(left, window, ierr)
        if (got /= mod(rank + 2 * nranks - 2, nranks)) then
            write (0, '(A,I0,A,I0)') 'mpi-families-f08: rank ', rank, ' read ', got
            error stop 1
        end if
        call note_call('MPI_Win_free')
        call MPI_Win_free(window)
    end subroutine
end program
