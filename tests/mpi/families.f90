! The Fortran twin of families.c: every wrapped MPI family called through the
! Fortran bindings (which call PMPI_ directly in Open MPI, so only adaptrace's
! Fortran entry points see them). Before each MPI call the program notes its
! name; before MPI_Finalize each rank writes EXPECT_DIR/rank.<r>.txt in the
! format families.c describes. Needs an even number of ranks.
!
! usage: mpi-families-fortran EXPECT_DIR
program families
    use mpi
    use notes
    use noted_start
    implicit none
    integer, parameter :: rounds = 3, nbc_count = 17
    integer :: ierr, rank, nranks, left, right, partner, half, parity
    character(len=4096) :: arguments(1), expect_dir

    call start_noted('mpi-families-fortran EXPECT_DIR', arguments, rank, nranks)
    expect_dir = arguments(1)
    if (nranks < 2 .or. mod(nranks, 2) /= 0) then
        if (rank == 0) write (0, '(A,I0)') 'mpi-families-fortran: needs an even number of ranks, got ', nranks
        call note_call('MPI_Abort')
        call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    left = mod(rank + nranks - 1, nranks)
    right = mod(rank + 1, nranks)
    partner = ieor(rank, 1)
    half = nranks / 2
    parity = mod(rank, 2)

    call blocking_point_to_point()
    call nonblocking_point_to_point()
    call persistent_requests()
    call probes()
    call combined_send_receive()
    call blocking_collectives()
    call nonblocking_collectives()
    call communicators()

    call note_call('MPI_Finalize')
    call write_expectations(expect_dir, rank)
    call MPI_Finalize(ierr)

contains

    subroutine blocking_point_to_point()
        integer :: values(4), sync, status(MPI_STATUS_SIZE), ready, detached_size
        double precision :: reals(8)
        character(len=4096) :: bsend_space
        values = rank
        reals = 0
        sync = 0
        if (parity == 0) then
            call note_call('MPI_Send')
            call MPI_Send(values, 4, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, ierr)
            call note_call('MPI_Ssend')
            call MPI_Ssend(reals, 8, MPI_DOUBLE_PRECISION, partner, 2, MPI_COMM_WORLD, ierr)
            call note_call('MPI_Recv')
            call MPI_Recv(sync, 0, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
            call note_call('MPI_Rsend')
            call MPI_Rsend(values, 2, MPI_INTEGER, partner, 3, MPI_COMM_WORLD, ierr)
            call note_call('MPI_Buffer_attach')
            call MPI_Buffer_attach(bsend_space, len(bsend_space), ierr)
            call note_call('MPI_Bsend')
            call MPI_Bsend(values, 3, MPI_INTEGER, partner, 5, MPI_COMM_WORLD, ierr)
            call note_call('MPI_Buffer_detach')
            call MPI_Buffer_detach(bsend_space, detached_size, ierr)
        else
            call note_call('MPI_Recv')
            call MPI_Recv(values, 4, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, status, ierr)
            call note_call('MPI_Recv')
            call MPI_Recv(reals, 8, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, status, ierr)
            call note_call('MPI_Irecv')
            call MPI_Irecv(values, 2, MPI_INTEGER, partner, 3, MPI_COMM_WORLD, ready, ierr)
            call note_call('MPI_Send')
            call MPI_Send(sync, 0, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, ierr)
            call note_call('MPI_Wait')
            call MPI_Wait(ready, MPI_STATUS_IGNORE, ierr)
            call note_call('MPI_Recv')
            call MPI_Recv(values, 3, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
                          MPI_STATUS_IGNORE, ierr)
        end if
        call note_call('MPI_Send')
        call MPI_Send(values, 1, MPI_INTEGER, MPI_PROC_NULL, 7, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Recv')
        call MPI_Recv(values, 1, MPI_INTEGER, MPI_PROC_NULL, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end subroutine

    subroutine nonblocking_point_to_point()
        integer :: out(2), in(2), requests(2), statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE)
        integer :: index, done, completed, indices(2), i
        logical :: flag, cancelled
        out = [rank, -rank]

        call note_call('MPI_Irecv')
        call MPI_Irecv(in(1), 1, MPI_INTEGER, left, 10, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Isend')
        call MPI_Isend(out(1), 1, MPI_INTEGER, right, 10, MPI_COMM_WORLD, requests(2), ierr)
        call note_call('MPI_Waitall')
        call MPI_Waitall(2, requests, statuses, ierr)

        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 2, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Issend')
        call MPI_Issend(out, 2, MPI_INTEGER, right, 11, MPI_COMM_WORLD, requests(2), ierr)
        do i = 1, 2
            call note_call('MPI_Waitany')
            call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE, ierr)
        end do

        call note_call('MPI_Irecv')
        call MPI_Irecv(in(2), 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Isend')
        call MPI_Isend(out(2), 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, requests(2), ierr)
        done = 0
        do while (done < 2)
            call note_call('MPI_Waitsome')
            call MPI_Waitsome(2, requests, completed, indices, statuses, ierr)
            done = done + completed
        end do

        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 1, MPI_INTEGER, left, 13, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Isend')
        call MPI_Isend(out, 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, requests(2), ierr)
        flag = .false.
        do while (.not. flag)
            call note_call('MPI_Test')
            call MPI_Test(requests(1), flag, status, ierr)
        end do
        flag = .false.
        do while (.not. flag)
            call note_call('MPI_Testall')
            call MPI_Testall(1, requests(2:2), flag, statuses, ierr)
        end do

        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 1, MPI_INTEGER, left, 14, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Ibsend')
        call MPI_Ibsend(out, 0, MPI_INTEGER, MPI_PROC_NULL, 14, MPI_COMM_WORLD, requests(2), ierr)
        call note_call('MPI_Wait')
        call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
        call note_call('MPI_Irsend')
        call MPI_Irsend(out, 0, MPI_INTEGER, MPI_PROC_NULL, 14, MPI_COMM_WORLD, requests(2), ierr)
        call note_call('MPI_Wait')
        call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
        call note_call('MPI_Isend')
        call MPI_Isend(out, 1, MPI_INTEGER, right, 14, MPI_COMM_WORLD, requests(2), ierr)
        done = 0
        do while (done < 2)
            call note_call('MPI_Testany')
            call MPI_Testany(2, requests, index, flag, MPI_STATUS_IGNORE, ierr)
            if (flag .and. index /= MPI_UNDEFINED) done = done + 1
        end do

        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 1, MPI_INTEGER, left, 16, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Isend')
        call MPI_Isend(out, 1, MPI_INTEGER, right, 16, MPI_COMM_WORLD, requests(2), ierr)
        done = 0
        do while (done < 2)
            call note_call('MPI_Testsome')
            call MPI_Testsome(2, requests, completed, indices, MPI_STATUSES_IGNORE, ierr)
            if (completed /= MPI_UNDEFINED) done = done + completed
        end do

        ! An irecv nobody matches, cancelled.
        call note_call('MPI_Irecv')
        call MPI_Irecv(in, 1, MPI_INTEGER, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Cancel')
        call MPI_Cancel(requests(1), ierr)
        call note_call('MPI_Wait')
        call MPI_Wait(requests(1), status, ierr)
        call note_call('MPI_Test_cancelled')
        call MPI_Test_cancelled(status, cancelled, ierr)
        if (.not. cancelled) error stop 'mpi-families-fortran: the unmatched irecv was not cancelled'
    end subroutine

    subroutine persistent_requests()
        double precision :: out(3), in(3)
        integer :: requests(2), round
        out = rank
        call note_call('MPI_Recv_init')
        call MPI_Recv_init(in, 3, MPI_DOUBLE_PRECISION, left, 20, MPI_COMM_WORLD, requests(1), ierr)
        call note_call('MPI_Send_init')
        call MPI_Send_init(out, 3, MPI_DOUBLE_PRECISION, right, 20, MPI_COMM_WORLD, requests(2), ierr)
        do round = 1, rounds
            call note_call('MPI_Startall')
            call MPI_Startall(2, requests, ierr)
            call note_call('MPI_Waitall')
            call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
        end do
        do round = 1, rounds
            call note_call('MPI_Start')
            call MPI_Start(requests(1), ierr)
            call note_call('MPI_Start')
            call MPI_Start(requests(2), ierr)
            call note_call('MPI_Wait')
            call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
            call note_call('MPI_Wait')
            call MPI_Wait(requests(1), MPI_STATUS_IGNORE, ierr)
        end do
        call note_call('MPI_Request_free')
        call MPI_Request_free(requests(1), ierr)
        call note_call('MPI_Request_free')
        call MPI_Request_free(requests(2), ierr)
    end subroutine

    subroutine probes()
        integer :: values(6), status(MPI_STATUS_SIZE), message, count, tag, request
        logical :: flag
        values = 0
        if (parity == 0) then
            do tag = 30, 33
                call note_call('MPI_Send')
                call MPI_Send(values, tag - 28, MPI_INTEGER, partner, tag, MPI_COMM_WORLD, ierr)
            end do
            return
        end if
        call note_call('MPI_Probe')
        call MPI_Probe(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, status, ierr)
        call note_call('MPI_Get_count')
        call MPI_Get_count(status, MPI_INTEGER, count, ierr)
        call note_call('MPI_Recv')
        call MPI_Recv(values, count, MPI_INTEGER, status(MPI_SOURCE), status(MPI_TAG), MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
        flag = .false.
        do while (.not. flag)
            call note_call('MPI_Iprobe')
            call MPI_Iprobe(partner, 31, MPI_COMM_WORLD, flag, status, ierr)
        end do
        call note_call('MPI_Recv')
        call MPI_Recv(values, 3, MPI_INTEGER, partner, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call note_call('MPI_Mprobe')
        call MPI_Mprobe(partner, 32, MPI_COMM_WORLD, message, status, ierr)
        call note_call('MPI_Mrecv')
        call MPI_Mrecv(values, 4, MPI_INTEGER, message, MPI_STATUS_IGNORE, ierr)
        flag = .false.
        do while (.not. flag)
            call note_call('MPI_Improbe')
            call MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, flag, message, status, ierr)
        end do
        call note_call('MPI_Imrecv')
        call MPI_Imrecv(values, 5, MPI_INTEGER, message, request, ierr)
        call note_call('MPI_Wait')
        call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    end subroutine

    subroutine combined_send_receive()
        integer :: out(2), in(2)
        out = rank
        call note_call('MPI_Sendrecv')
        call MPI_Sendrecv(out, 2, MPI_INTEGER, right, 40, in, 2, MPI_INTEGER, MPI_ANY_SOURCE, &
                          MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call note_call('MPI_Sendrecv_replace')
        call MPI_Sendrecv_replace(out, 2, MPI_INTEGER, right, 42, left, 42, MPI_COMM_WORLD, &
                                  MPI_STATUS_IGNORE, ierr)
    end subroutine

    subroutine blocking_collectives()
        integer, parameter :: block = 2
        integer :: sendbuf(block * nranks), recvbuf(block * nranks), counts(nranks), displs(nranks)
        integer :: bytedispls(nranks), types(nranks), root, r
        root = nranks - 1
        sendbuf = rank
        do r = 1, nranks
            counts(r) = block
            displs(r) = (r - 1) * block
            bytedispls(r) = displs(r) * 4
            types(r) = MPI_INTEGER
        end do
        call note_call('MPI_Barrier')
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
        call note_call('MPI_Bcast')
        call MPI_Bcast(sendbuf, block, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Gather')
        call MPI_Gather(sendbuf, block, MPI_INTEGER, recvbuf, block, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Gatherv')
        call MPI_Gatherv(sendbuf, block, MPI_INTEGER, recvbuf, counts, displs, MPI_INTEGER, root, &
                         MPI_COMM_WORLD, ierr)
        call note_call('MPI_Scatter')
        call MPI_Scatter(sendbuf, block, MPI_INTEGER, recvbuf, block, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Scatterv')
        call MPI_Scatterv(sendbuf, counts, displs, MPI_INTEGER, recvbuf, block, MPI_INTEGER, root, &
                          MPI_COMM_WORLD, ierr)
        call note_call('MPI_Allgather')
        call MPI_Allgather(sendbuf, block, MPI_INTEGER, recvbuf, block, MPI_INTEGER, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Allgatherv')
        call MPI_Allgatherv(sendbuf, block, MPI_INTEGER, recvbuf, counts, displs, MPI_INTEGER, &
                            MPI_COMM_WORLD, ierr)
        call note_call('MPI_Alltoall')
        call MPI_Alltoall(sendbuf, block, MPI_INTEGER, recvbuf, block, MPI_INTEGER, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Alltoallv')
        call MPI_Alltoallv(sendbuf, counts, displs, MPI_INTEGER, recvbuf, counts, displs, MPI_INTEGER, &
                           MPI_COMM_WORLD, ierr)
        call note_call('MPI_Alltoallw')
        call MPI_Alltoallw(sendbuf, counts, bytedispls, types, recvbuf, counts, bytedispls, types, &
                           MPI_COMM_WORLD, ierr)
        call note_call('MPI_Reduce')
        call MPI_Reduce(sendbuf, recvbuf, block, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(sendbuf, recvbuf, block, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Reduce_scatter')
        call MPI_Reduce_scatter(sendbuf, recvbuf, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Reduce_scatter_block')
        call MPI_Reduce_scatter_block(sendbuf, recvbuf, block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Scan')
        call MPI_Scan(sendbuf, recvbuf, block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        call note_call('MPI_Exscan')
        call MPI_Exscan(sendbuf, recvbuf, block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    end subroutine

    subroutine nonblocking_collectives()
        integer, parameter :: block = 3
        integer :: s(block * nranks, nbc_count), v(block * nranks, nbc_count)
        integer :: counts(nranks), displs(nranks), bytedispls(nranks), types(nranks)
        integer :: r(nbc_count), root, i
        root = half
        s = rank
        do i = 1, nranks
            counts(i) = block
            displs(i) = (i - 1) * block
            bytedispls(i) = displs(i) * 4
            types(i) = MPI_INTEGER
        end do
        call note_call('MPI_Ibarrier')
        call MPI_Ibarrier(MPI_COMM_WORLD, r(1), ierr)
        call note_call('MPI_Ibcast')
        call MPI_Ibcast(s(:, 2), block, MPI_INTEGER, root, MPI_COMM_WORLD, r(2), ierr)
        call note_call('MPI_Igather')
        call MPI_Igather(s(:, 3), block, MPI_INTEGER, v(:, 3), block, MPI_INTEGER, root, MPI_COMM_WORLD, &
                         r(3), ierr)
        call note_call('MPI_Igatherv')
        call MPI_Igatherv(s(:, 4), block, MPI_INTEGER, v(:, 4), counts, displs, MPI_INTEGER, 0, &
                          MPI_COMM_WORLD, r(4), ierr)
        call note_call('MPI_Iscatter')
        call MPI_Iscatter(s(:, 5), block, MPI_INTEGER, v(:, 5), block, MPI_INTEGER, root, &
                          MPI_COMM_WORLD, r(5), ierr)
        call note_call('MPI_Iscatterv')
        call MPI_Iscatterv(s(:, 6), counts, displs, MPI_INTEGER, v(:, 6), block, MPI_INTEGER, 0, &
                           MPI_COMM_WORLD, r(6), ierr)
        call note_call('MPI_Iallgather')
        call MPI_Iallgather(s(:, 7), block, MPI_INTEGER, v(:, 7), block, MPI_INTEGER, MPI_COMM_WORLD, &
                            r(7), ierr)
        call note_call('MPI_Iallgatherv')
        call MPI_Iallgatherv(s(:, 8), block, MPI_INTEGER, v(:, 8), counts, displs, MPI_INTEGER, &
                             MPI_COMM_WORLD, r(8), ierr)
        call note_call('MPI_Ialltoall')
        call MPI_Ialltoall(s(:, 9), block, MPI_INTEGER, v(:, 9), block, MPI_INTEGER, MPI_COMM_WORLD, &
                           r(9), ierr)
        call note_call('MPI_Ialltoallv')
        call MPI_Ialltoallv(s(:, 10), counts, displs, MPI_INTEGER, v(:, 10), counts, displs, &
                            MPI_INTEGER, MPI_COMM_WORLD, r(10), ierr)
        call note_call('MPI_Ialltoallw')
        call MPI_Ialltoallw(s(:, 11), counts, bytedispls, types, v(:, 11), counts, bytedispls, types, &
                            MPI_COMM_WORLD, r(11), ierr)
        call note_call('MPI_Ireduce')
        call MPI_Ireduce(s(:, 12), v(:, 12), block, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, r(12), ierr)
        call note_call('MPI_Iallreduce')
        call MPI_Iallreduce(s(:, 13), v(:, 13), block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, r(13), ierr)
        call note_call('MPI_Ireduce_scatter')
        call MPI_Ireduce_scatter(s(:, 14), v(:, 14), counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                 r(14), ierr)
        call note_call('MPI_Ireduce_scatter_block')
        call MPI_Ireduce_scatter_block(s(:, 15), v(:, 15), block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                       r(15), ierr)
        call note_call('MPI_Iscan')
        call MPI_Iscan(s(:, 16), v(:, 16), block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, r(16), ierr)
        call note_call('MPI_Iexscan')
        call MPI_Iexscan(s(:, 17), v(:, 17), block, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, r(17), ierr)
        call note_call('MPI_Waitall')
        call MPI_Waitall(nbc_count, r, MPI_STATUSES_IGNORE, ierr)
    end subroutine

    subroutine communicators()
        integer :: dup, same_parity, shared, world_group, lower_group, lower, inter, merged
        integer :: grid, column, ring, value, result, node, local_rank
        integer :: ranges(3, 1), dims(2), index(nranks), edges(2 * nranks)
        integer :: sent(2), got(2), counts(2), types(2), request
        integer :: suggested(2), coords(2), source, destination
        integer(kind=MPI_ADDRESS_KIND) :: byte_displs(2)
        logical :: periods(2), keep_rows(2)
        character(len=line_len) :: line
        character(len=12) :: word
        value = rank

        call note_call('MPI_Comm_dup')
        call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(value, result, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
        call note_members('members', 0, 1, nranks)

        call note_call('MPI_Comm_split')
        call MPI_Comm_split(MPI_COMM_WORLD, parity, rank, same_parity, ierr)
        call note_call('MPI_Bcast')
        call MPI_Bcast(value, 1, MPI_INTEGER, 0, same_parity, ierr)
        call note_members('members', parity, 2, half)

        call note_call('MPI_Comm_split_type')
        call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, shared, ierr)
        call note_call('MPI_Barrier')
        call MPI_Barrier(shared, ierr)
        call note_members('members', 0, 1, nranks)

        ranges(:, 1) = [0, half - 1, 1]
        call note_call('MPI_Comm_group')
        call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
        call note_call('MPI_Group_range_incl')
        call MPI_Group_range_incl(world_group, 1, ranges, lower_group, ierr)
        call note_call('MPI_Comm_create')
        call MPI_Comm_create(MPI_COMM_WORLD, lower_group, lower, ierr)
        if (rank < half) then
            call note_call('MPI_Allreduce')
            call MPI_Allreduce(value, result, 1, MPI_INTEGER, MPI_MIN, lower, ierr)
            call note_members('members', 0, 1, half)
            call note_call('MPI_Comm_free')
            call MPI_Comm_free(lower, ierr)
        end if
        call note_call('MPI_Group_free')
        call MPI_Group_free(lower_group, ierr)
        call note_call('MPI_Group_free')
        call MPI_Group_free(world_group, ierr)

        call note_call('MPI_Intercomm_create')
        call MPI_Intercomm_create(same_parity, 0, MPI_COMM_WORLD, 1 - parity, 77, inter, ierr)
        local_rank = rank / 2
        call note_call('MPI_Sendrecv')
        call MPI_Sendrecv(value, 1, MPI_INTEGER, local_rank, 50, result, 1, MPI_INTEGER, local_rank, 50, &
                          inter, MPI_STATUS_IGNORE, ierr)
        line = 'intercomm'
        do node = 0, half - 1
            write (word, '(I0)') parity + 2 * node
            line = trim(line) // ' ' // trim(word)
        end do
        line = trim(line) // ' |'
        do node = 0, half - 1
            write (word, '(I0)') 1 - parity + 2 * node
            line = trim(line) // ' ' // trim(word)
        end do
        call note(trim(line))
        call note_call('MPI_Intercomm_merge')
        call MPI_Intercomm_merge(inter, parity == 1, merged, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(value, result, 1, MPI_INTEGER, MPI_SUM, merged, ierr)
        line = 'members'
        do node = 0, nranks - 1
            write (word, '(I0)') mod(node, half) * 2 + node / half
            line = trim(line) // ' ' // trim(word)
        end do
        call note(trim(line))

        dims = [2, half]
        periods = [.false., .true.]
        keep_rows = [.true., .false.]
        call note_call('MPI_Cart_create')
        call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., grid, ierr)
        call note_call('MPI_Barrier')
        call MPI_Barrier(grid, ierr)
        call note_members('members', 0, 1, nranks)
        suggested = 0
        call note_call('MPI_Dims_create')
        call MPI_Dims_create(nranks, 2, suggested, ierr)
        call note_call('MPI_Cart_coords')
        call MPI_Cart_coords(grid, rank, 2, coords, ierr)
        call note_call('MPI_Cart_shift')
        call MPI_Cart_shift(grid, 1, 1, source, destination, ierr)
        if (suggested(1) * suggested(2) /= nranks .or. coords(1) /= rank / half .or. coords(2) /= mod(rank, half) &
            .or. destination /= coords(1) * half + mod(coords(2) + 1, half) &
            .or. source /= coords(1) * half + mod(coords(2) + half - 1, half)) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
        call note_call('MPI_Cart_sub')
        call MPI_Cart_sub(grid, keep_rows, column, ierr)
        call note_call('MPI_Bcast')
        call MPI_Bcast(value, 1, MPI_INTEGER, 1, column, ierr)
        call note_members('members', mod(rank, half), half, 2)

        do node = 0, nranks - 1
            index(node + 1) = 2 * (node + 1)
            edges(2 * node + 1) = mod(node + nranks - 1, nranks)
            edges(2 * node + 2) = mod(node + 1, nranks)
        end do
        call note_call('MPI_Graph_create')
        call MPI_Graph_create(MPI_COMM_WORLD, nranks, index, edges, .false., ring, ierr)
        call note_call('MPI_Allreduce')
        call MPI_Allreduce(value, result, 1, MPI_INTEGER, MPI_MAX, ring, ierr)
        call note_members('members', 0, 1, nranks)

        ! Neighbourhood collectives on the ring: both neighbours' ranks arrive.
        sent = rank
        got = -1
        counts = 1
        types = MPI_INTEGER
        byte_displs = [0_MPI_ADDRESS_KIND, int(storage_size(rank) / 8, MPI_ADDRESS_KIND)]
        call note_call('MPI_Neighbor_alltoall')
        call MPI_Neighbor_alltoall(sent, 1, MPI_INTEGER, got, 1, MPI_INTEGER, ring, ierr)
        if (got(1) /= left .or. got(2) /= right) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
        got = -1
        call note_call('MPI_Ineighbor_alltoallw')
        call MPI_Ineighbor_alltoallw(sent, counts, byte_displs, types, got, counts, byte_displs, types, ring, &
                                     request, ierr)
        call note_call('MPI_Wait')
        call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
        if (got(1) /= left .or. got(2) /= right) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)

        call note_call('MPI_Comm_free')
        call MPI_Comm_free(ring, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(column, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(grid, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(merged, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(inter, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(shared, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(same_parity, ierr)
        call note_call('MPI_Comm_free')
        call MPI_Comm_free(dup, ierr)
    end subroutine
end program
