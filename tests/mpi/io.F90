! MPI-IO from Fortran, one source compiled twice: with USE_MPI_F08 through the
! mpi_f08 module (mpi-io-f08), without through `use mpi` (mpi-io-fortran,
! the mpif.h entry points). A file shared by all ranks and one file per
! rank, written and read through explicit offsets, the individual and the
! shared file pointer, blocking, collective, nonblocking and split
! collective calls with known byte counts. File names are passed with
! their trailing blanks, as Fortran programs do. Notes every call
! (EXPECT_DIR/rank.<r>.txt, format in expect_notes.h) and the I/O records
! each call must write (EXPECT_DIR/io.<r>.txt, format in io.c, checked by
! io_check.py).
!
! usage: mpi-io-f08|mpi-io-fortran EXPECT_DIR
#ifdef USE_MPI_F08
#define FILE_HANDLE type(MPI_File)
#define REQUEST_HANDLE type(MPI_Request)
#define STATUS_OBJECT type(MPI_Status)
#else
#define FILE_HANDLE integer
#define REQUEST_HANDLE integer
#define STATUS_OBJECT integer, dimension(MPI_STATUS_SIZE)
#endif
program io_fortran
#ifdef USE_MPI_F08
    use mpi_f08
#else
    use mpi
#endif
    use notes
    use noted_start
    implicit none
    integer, parameter :: ints = 4, block = 4 * ints
    integer :: ierr, rank, nranks, io_unit
    character(len=4096) :: arguments(1), expect_dir, path, shared_name, own_name

    call start_noted('mpi-io-f08|mpi-io-fortran EXPECT_DIR', arguments, rank, nranks)
    expect_dir = arguments(1)
    write (path, '(A,A,I0,A)') trim(expect_dir), '/io.', rank, '.txt'
    open (newunit=io_unit, file=trim(path), status='replace', action='write')
    shared_name = trim(expect_dir) // '/shared_f.dat'
    write (own_name, '(A,A,I0,A)') trim(expect_dir), '/rank_f', rank, '.dat'

    call shared_file()
    call own_file()
    call note_call('MPI_Barrier')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        call note_call('MPI_File_delete')
        call MPI_File_delete(shared_name, MPI_INFO_NULL, ierr)
        call io_note('MPI_File_delete delete ' // trim(shared_name))
    end if

    close (io_unit)
    call note_call('MPI_Finalize')
    call write_expectations(expect_dir, rank)
    call MPI_Finalize(ierr)

contains

    subroutine io_note(line)
        character(len=*), intent(in) :: line
        write (io_unit, '(A)') line
    end subroutine

    function text(value)
        integer(kind=MPI_OFFSET_KIND), intent(in) :: value
        character(len=24) :: text
        write (text, '(I0)') value
    end function

    ! A blocking operation: its begin and complete in the same call.
    subroutine blocking(call_name, file, mode, flags, asked, done)
        character(len=*), intent(in) :: call_name, file, mode, flags
        integer, intent(in) :: asked, done
        call io_note(call_name // ' begin ' // trim(file) // ' ' // mode // ' ' // flags // ' ' // &
                     trim(text(int(asked, MPI_OFFSET_KIND))))
        call io_note(call_name // ' complete ' // trim(file) // ' ' // trim(text(int(done, MPI_OFFSET_KIND))))
    end subroutine

    subroutine shared_file()
        FILE_HANDLE :: fh
        REQUEST_HANDLE :: request
        STATUS_OBJECT :: status
        integer :: values(2 * ints), back(2 * ints), i
        integer(kind=MPI_OFFSET_KIND) :: mine, behind, zero
        character(len=12) :: word
        do i = 1, 2 * ints
            values(i) = rank * 100 + i
        end do
        mine = int(rank, MPI_OFFSET_KIND) * block
        behind = int(nranks, MPI_OFFSET_KIND) * block + 2 * mine
        zero = 0
        write (word, '(I0)') nranks

        call note_call('MPI_File_open')
        call MPI_File_open(MPI_COMM_WORLD, shared_name, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
        call io_note('MPI_File_open create ' // trim(shared_name) // ' READ_WRITE ' // trim(word))
        call note_call('MPI_File_write_at')
        call MPI_File_write_at(fh, mine, values, ints, MPI_INTEGER, status, ierr)
        call blocking('MPI_File_write_at', shared_name, 'WRITE', 'NONE', block, block)
        call note_call('MPI_File_write_at_all')
        call MPI_File_write_at_all(fh, behind, values, 2 * ints, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
        call blocking('MPI_File_write_at_all', shared_name, 'WRITE', 'COLLECTIVE', 2 * block, 2 * block)
        call note_call('MPI_File_sync')
        call MPI_File_sync(fh, ierr)
        call io_note('MPI_File_sync begin ' // trim(shared_name) // ' FLUSH COLLECTIVE -')
        call io_note('MPI_File_sync complete ' // trim(shared_name) // ' -')
        call note_call('MPI_Barrier')
        call MPI_Barrier(MPI_COMM_WORLD, ierr)

        call note_call('MPI_File_iread_at')
        call MPI_File_iread_at(fh, mine, back, ints, MPI_INTEGER, request, ierr)
        call io_note('MPI_File_iread_at begin ' // trim(shared_name) // ' READ NON_BLOCKING 16')
        call io_note('MPI_File_iread_at issued ' // trim(shared_name))
        call note_call('MPI_Wait')
        call MPI_Wait(request, status, ierr)
        call io_note('MPI_Wait complete ' // trim(shared_name) // ' 16')
        if (back(1) /= rank * 100 + 1) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)

        call note_call('MPI_File_seek')
        call MPI_File_seek(fh, mine, MPI_SEEK_SET, ierr)
        call io_note('MPI_File_seek seek ' // trim(shared_name) // ' ' // trim(text(mine)) // ' FROM_START ' // &
                     trim(text(mine)))
        call note_call('MPI_File_read')
        call MPI_File_read(fh, back, ints / 2, MPI_INTEGER, status, ierr)
        call blocking('MPI_File_read', shared_name, 'READ', 'NONE', block / 2, block / 2)
        call note_call('MPI_File_read_all_begin')
        call MPI_File_read_all_begin(fh, back, ints / 2, MPI_INTEGER, ierr)
        call io_note('MPI_File_read_all_begin begin ' // trim(shared_name) // ' READ NON_BLOCKING|COLLECTIVE 8')
        call io_note('MPI_File_read_all_begin issued ' // trim(shared_name))
        call note_call('MPI_File_read_all_end')
        call MPI_File_read_all_end(fh, back, status, ierr)
        call io_note('MPI_File_read_all_end complete ' // trim(shared_name) // ' 8')
        call note_call('MPI_File_seek')
        call MPI_File_seek(fh, zero, MPI_SEEK_CUR, ierr)
        call io_note('MPI_File_seek seek ' // trim(shared_name) // ' 0 FROM_CURRENT ' // trim(text(mine + block)))

        call note_call('MPI_File_seek_shared')
        call MPI_File_seek_shared(fh, zero, MPI_SEEK_SET, ierr)
        call io_note('MPI_File_seek_shared seek ' // trim(shared_name) // ' 0 FROM_START 0')
        ! Writes each rank's block again where MPI_File_write_at put it (a
        ! read through the shared pointer is not reliable with Open MPI
        ! 4.1's sharedfp/sm on a loaded machine, see io.c).
        call note_call('MPI_File_write_ordered')
        call MPI_File_write_ordered(fh, values, ints, MPI_INTEGER, status, ierr)
        call blocking('MPI_File_write_ordered', shared_name, 'WRITE', 'COLLECTIVE', block, block)

        call note_call('MPI_File_close')
        call MPI_File_close(fh, ierr)
        call io_note('MPI_File_close destroy ' // trim(shared_name))
    end subroutine

    subroutine own_file()
        FILE_HANDLE :: fh
        REQUEST_HANDLE :: request
        character(len=8) :: letters = 'adaptrac'
        call note_call('MPI_File_open')
        call MPI_File_open(MPI_COMM_SELF, own_name, MPI_MODE_CREATE + MPI_MODE_WRONLY + MPI_MODE_DELETE_ON_CLOSE, &
                           MPI_INFO_NULL, fh, ierr)
        call io_note('MPI_File_open create ' // trim(own_name) // ' WRITE_ONLY 1')
        call note_call('MPI_File_write')
        call MPI_File_write(fh, letters, 3, MPI_CHARACTER, MPI_STATUS_IGNORE, ierr)
        call blocking('MPI_File_write', own_name, 'WRITE', 'NONE', 3, 3)
        call note_call('MPI_File_iwrite_shared')
        call MPI_File_iwrite_shared(fh, letters, 5, MPI_CHARACTER, request, ierr)
        call io_note('MPI_File_iwrite_shared begin ' // trim(own_name) // ' WRITE NON_BLOCKING 5')
        call io_note('MPI_File_iwrite_shared issued ' // trim(own_name))
        call note_call('MPI_Wait')
        call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
        call io_note('MPI_Wait complete ' // trim(own_name) // ' 5')
        call note_call('MPI_File_close')
        call MPI_File_close(fh, ierr)
        call io_note('MPI_File_close destroy ' // trim(own_name))
    end subroutine
end program
