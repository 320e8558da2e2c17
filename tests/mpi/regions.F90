! The functions that adaptrace records as regions only, called from Fortran:
! the arguments a Fortran binding passes differently from C (strings with
! their hidden lengths, callbacks, address-sized integers, MPI_PCONTROL
! without ierror). Compiled twice: with USE_MPI_F08 through the mpi_f08
! module, otherwise through the mpi module (the mpif.h entry points). The
! program checks what the calls return, so an argument passed on wrongly
! fails the run. Notes each call before making it and writes
! EXPECT_DIR/rank.<r>.txt (format in expect_notes.h) before MPI_Finalize.
!
! usage: mpi-regions-fortran|mpi-regions-f08 EXPECT_DIR
#ifdef USE_MPI_F08
#define MPI_MODULE mpi_f08
#define COMM_HANDLE type(MPI_Comm)
#define DATATYPE_HANDLE type(MPI_Datatype)
#define INFO_HANDLE type(MPI_Info)
#else
#define MPI_MODULE mpi
#define COMM_HANDLE integer
#define DATATYPE_HANDLE integer
#define INFO_HANDLE integer
#endif
program regions
    use MPI_MODULE
    use notes
    use noted_start
    implicit none
    integer :: ierr, rank, nranks
    character(len=4096) :: arguments(1), expect_dir

    call start_noted('mpi-regions-fortran|mpi-regions-f08 EXPECT_DIR', arguments, rank, nranks)
    expect_dir = arguments(1)

    call datatypes()
    call info_objects()
    call attributes()
    call names_and_control()

    call note_call('MPI_Finalize')
    call write_expectations(expect_dir, rank)
    call MPI_Finalize(ierr)

contains

    subroutine check(condition, what)
        logical, intent(in) :: condition
        character(len=*), intent(in) :: what
        if (.not. condition) then
            write (0, '(A,I0,A,A)') 'mpi-regions: rank ', rank, ': ', what
            call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
        end if
    end subroutine

    subroutine datatypes()
        DATATYPE_HANDLE :: pair
        integer :: type_size, length
        character(len=MPI_MAX_OBJECT_NAME) :: name
        call note_call('MPI_Type_contiguous')
        call MPI_Type_contiguous(2, MPI_INTEGER, pair, ierr)
        call note_call('MPI_Type_commit')
        call MPI_Type_commit(pair, ierr)
        call note_call('MPI_Type_size')
        call MPI_Type_size(pair, type_size, ierr)
        call check(type_size == 8, 'MPI_Type_size')
        call note_call('MPI_Type_set_name')
        call MPI_Type_set_name(pair, 'integer pair', ierr)
        call note_call('MPI_Type_get_name')
        call MPI_Type_get_name(pair, name, length, ierr)
        call check(name == 'integer pair' .and. length == 12, 'MPI_Type_get_name')
        call note_call('MPI_Type_free')
        call MPI_Type_free(pair, ierr)
    end subroutine

    ! Two strings in one call: their lengths follow all other arguments.
    subroutine info_objects()
        INFO_HANDLE :: info
        character(len=32) :: value, key
        logical :: found
        integer :: keys
        call note_call('MPI_Info_create')
        call MPI_Info_create(info, ierr)
        call note_call('MPI_Info_set')
        call MPI_Info_set(info, 'adaptrace_key', 'fortran value', ierr)
        call note_call('MPI_Info_get')
        call MPI_Info_get(info, 'adaptrace_key', len(value), value, found, ierr)
        call check(found .and. value == 'fortran value', 'MPI_Info_get')
        call note_call('MPI_Info_get_nkeys')
        call MPI_Info_get_nkeys(info, keys, ierr)
        call note_call('MPI_Info_get_nthkey')
        call MPI_Info_get_nthkey(info, 0, key, ierr)
        call check(keys == 1 .and. key == 'adaptrace_key', 'MPI_Info_get_nthkey')
        call note_call('MPI_Info_free')
        call MPI_Info_free(info, ierr)
    end subroutine

    ! Callbacks are procedures; the attribute value an address-sized integer.
    subroutine attributes()
        integer :: keyval
        integer(kind=MPI_ADDRESS_KIND) :: extra_state, cached, value
        logical :: found
        extra_state = 0
        cached = 4242
        call note_call('MPI_Comm_create_keyval')
        call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, extra_state, ierr)
        call note_call('MPI_Comm_set_attr')
        call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, cached, ierr)
        call note_call('MPI_Comm_get_attr')
        call MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, value, found, ierr)
        call check(found .and. value == 4242, 'MPI_Comm_get_attr')
        call note_call('MPI_Comm_delete_attr')
        call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval, ierr)
        call note_call('MPI_Comm_free_keyval')
        call MPI_Comm_free_keyval(keyval, ierr)
    end subroutine

    subroutine names_and_control()
        character(len=MPI_MAX_OBJECT_NAME) :: name
        character(len=MPI_MAX_ERROR_STRING) :: text
        integer :: length
        COMM_HANDLE :: parent
        call note_call('MPI_Comm_get_name')
        call MPI_Comm_get_name(MPI_COMM_WORLD, name, length, ierr)
        call check(name == 'MPI_COMM_WORLD' .and. length == 14, 'MPI_Comm_get_name')
        call note_call('MPI_Error_string')
        call MPI_Error_string(MPI_ERR_TAG, text, length, ierr)
        call check(length > 0 .and. length <= len(text), 'MPI_Error_string')
        call note_call('MPI_Comm_get_parent')
        call MPI_Comm_get_parent(parent, ierr)
        call check(parent == MPI_COMM_NULL, 'MPI_Comm_get_parent')
        call note_call('MPI_Pcontrol')
        call MPI_Pcontrol(1)
    end subroutine

end program
