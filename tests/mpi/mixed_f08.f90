! mixed.f90 through the mpi_f08 module: the Fortran main program's calls go
! through adaptrace's mpi_x_f08_ entry points (half of them without ierror),
! the C library's (mixed_halo.c) through the C ones, on communicators passed
! across as MPI_VAL. One expectation log in call order. Any number of ranks
! from 2 on.
!
! usage: mpi-mixed-f08 EXPECT_DIR
program mixed_f08
    use mpi_f08
    use mixed_c
    implicit none
    integer, parameter :: tag_ring = 70
    integer :: ierr, rank, nranks, left, right, parity, half
    type(MPI_Comm) :: same_parity, duplicate
    type(MPI_Request) :: requests(2)
    integer :: rank_sum, value, total
    double precision :: halo_sum, out(4), in(4)
    character(len=4096) :: expect_dir

    if (command_argument_count() /= 1) error stop 'usage: mpi-mixed-f08 EXPECT_DIR'
    call get_command_argument(1, expect_dir)

    call note_call('MPI_Init')
    call MPI_Init()
    call note_call('MPI_Comm_rank')
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call note_call('MPI_Comm_size')
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    left = mod(rank + nranks - 1, nranks)
    right = mod(rank + 1, nranks)
    parity = mod(rank, 2)
    half = (nranks + 1 - parity) / 2

    ! Fortran point-to-point around the ring, blocking and nonblocking.
    out = rank
    call note_call('MPI_Sendrecv')
    call MPI_Sendrecv(out, 4, MPI_DOUBLE_PRECISION, right, tag_ring, in, 4, &
                      MPI_DOUBLE_PRECISION, left, tag_ring, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call note_call('MPI_Irecv')
    call MPI_Irecv(in, 2, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, tag_ring + 1, MPI_COMM_WORLD, &
                   requests(1), ierr)
    call note_call('MPI_Isend')
    call MPI_Isend(out, 2, MPI_DOUBLE_PRECISION, right, tag_ring + 1, MPI_COMM_WORLD, &
                   requests(2), ierr)
    call note_call('MPI_Waitall')
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)

    ! The C library on MPI_COMM_WORLD.
    halo_sum = mixed_halo_exchange(MPI_COMM_WORLD%MPI_VAL)
    call note_members(0, 1, nranks)
    if (nint(halo_sum) /= 3 * nranks * (nranks - 1) / 2) error stop 'mpi-mixed-f08: wrong halo sum'

    ! A communicator made in Fortran, used from C and then from Fortran.
    call note_call('MPI_Comm_split')
    call MPI_Comm_split(MPI_COMM_WORLD, parity, rank, same_parity, ierr)
    rank_sum = mixed_reduce_ranks(same_parity%MPI_VAL)
    if (rank < 2 .and. rank_sum /= half * (half - 1) / 2) error stop 'mpi-mixed-f08: wrong rank sum'
    value = rank
    call note_call('MPI_Bcast')
    call MPI_Bcast(value, 1, MPI_INTEGER, 0, same_parity)
    call note_members(parity, 2, half)
    if (value /= parity) error stop 'mpi-mixed-f08: wrong broadcast value'

    ! A communicator made in C, used and freed from Fortran.
    duplicate%MPI_VAL = mixed_duplicate(MPI_COMM_WORLD%MPI_VAL)
    call note_call('MPI_Allreduce')
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, duplicate, ierr)
    call note_members(0, 1, nranks)
    if (total /= nranks * (nranks - 1) / 2) error stop 'mpi-mixed-f08: wrong allreduce total'
    call note_call('MPI_Comm_free')
    call MPI_Comm_free(duplicate)

    call note_call('MPI_Barrier')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call note_call('MPI_Comm_free')
    call MPI_Comm_free(same_parity, ierr)

    call note_call('MPI_Finalize')
    call expect_write(trim(expect_dir) // c_null_char, rank)
    call MPI_Finalize(ierr)
end program
