! The Fortran twin of world.c (issue #28, the MPMD launch): what
! MPI_COMM_WORLD is to a Fortran program, whose calls reach adaptrace's
! Fortran entry points with Fortran handles: through `use mpi` (the
! mpif.h entry points, mpi_x_), or with USE_MPI_F08 defined through the
! mpi_f08 module (its entry points, its
! handles derived types around a Fortran handle). Each rank writes what it found
! to OUT_DIR/rank<N>.txt; check_mpmd.py compares an untraced run's files
! with those of the program as the application of an MPMD launch.
!
! usage: online-world-fortran OUT_DIR (online-world-f08 OUT_DIR)
program world_fortran
#ifdef USE_MPI_F08
    use mpi_f08
#else
    use mpi
#endif
    implicit none
#ifdef USE_MPI_F08
    type(MPI_Comm) :: dup, half, cart
    type(MPI_Group) :: world_group
    type(MPI_Errhandler) :: handler
    type(MPI_Status) :: status
#else
    integer :: dup, half, cart, world_group, handler
    integer :: status(MPI_STATUS_SIZE)
#endif
    integer :: ierr, rank, nranks, total, last, from_left, half_size, same, congruent
    integer :: group_size, error, error_class, cart_size, name_length
    integer(kind=MPI_ADDRESS_KIND) :: appnum
    logical :: has_appnum
    character(len=MPI_MAX_OBJECT_NAME) :: name
    character(len=4096) :: out_dir, path

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
    call get_command_argument(1, out_dir)
    write (path, '(A,A,I0,A)') trim(out_dir), '/rank', rank, '.txt'
    open (unit=10, file=trim(path), status='replace', action='write')
    write (10, '(A,I0,A,I0)') 'size ', nranks, ' rank ', rank

    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    last = -1
    if (rank == nranks - 1) last = 42
    call MPI_Bcast(last, 1, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, ierr)
    call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, nranks), 7, from_left, 1, MPI_INTEGER, &
                      mod(rank + nranks - 1, nranks), 7, MPI_COMM_WORLD, status, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    write (10, '(A,I0,A,I0,A,I0)') 'allreduce ', total, ' bcast ', last, ' sendrecv ', from_left

    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, same, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, dup, congruent, ierr)
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
    call MPI_Comm_size(half, half_size, ierr)
    call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
    call MPI_Group_size(world_group, group_size, ierr)
    write (10, '(A,L1,A,L1,A,I0,A,I0)') 'compare world ident ', same == MPI_IDENT, ' dup congruent ', &
        congruent == MPI_CONGRUENT, ' split size ', half_size, ' group size ', group_size

    call MPI_Comm_get_name(MPI_COMM_WORLD, name, name_length, ierr)
    call MPI_Cart_create(MPI_COMM_WORLD, 1, [nranks], [.true.], .false., cart, ierr)
    call MPI_Comm_size(cart, cart_size, ierr)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, appnum, has_appnum, ierr)
    if (.not. has_appnum) appnum = -1
    write (10, '(A,A,A,I0,A,I0)') 'name ', name(1:name_length), ' cart size ', cart_size, ' appnum ', appnum

    ! A send to rank nranks (no such rank in the world) returns an error
    ! once the world's error handler returns errors.
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Comm_get_errhandler(MPI_COMM_WORLD, handler, ierr)
    call MPI_Send(rank, 1, MPI_INTEGER, nranks, 0, MPI_COMM_WORLD, error)
    call MPI_Error_class(error, error_class, ierr)
    write (10, '(A,L1,A,L1)') 'errors return ', handler == MPI_ERRORS_RETURN, ' send to rank size: MPI_ERR_RANK ', &
        error_class == MPI_ERR_RANK
    close (10)

    call MPI_Comm_free(cart, ierr)
    call MPI_Group_free(world_group, ierr)
    call MPI_Comm_free(half, ierr)
    call MPI_Comm_free(dup, ierr)
    call MPI_Finalize(ierr)
end program world_fortran
