! The expectation log of the Fortran test programs (format in
! expect_notes.h): note every MPI call before making it, write the log
! before the run ends.
module notes
    implicit none
    integer, parameter :: line_len = 256
    ! Grows: how often a polling loop (MPI_Test until done) runs depends on
    ! the load of the machine.
    character(len=line_len), allocatable :: note_lines(:)
    integer :: note_count = 0
contains
    subroutine note(line)
        character(len=*), intent(in) :: line
        character(len=line_len), allocatable :: grown(:)
        if (.not. allocated(note_lines)) allocate(note_lines(1024))
        if (note_count == size(note_lines)) then
            allocate(grown(2 * size(note_lines)))
            grown(1:note_count) = note_lines(1:note_count)
            call move_alloc(grown, note_lines)
        end if
        note_count = note_count + 1
        note_lines(note_count) = line
    end subroutine

    subroutine note_call(name)
        character(len=*), intent(in) :: name
        call note('call ' // name)
    end subroutine

    ! "members" line for world ranks first, first + step, ... (count of them).
    subroutine note_members(keyword, first, step, count)
        character(len=*), intent(in) :: keyword
        integer, intent(in) :: first, step, count
        character(len=line_len) :: line
        character(len=12) :: word
        integer :: i
        line = keyword
        do i = 0, count - 1
            write (word, '(I0)') first + i * step
            line = trim(line) // ' ' // trim(word)
        end do
        call note(trim(line))
    end subroutine

    ! Written under another name and renamed into place: a log that exists
    ! is complete (wait_for_every_log relies on it).
    subroutine write_expectations(directory, rank)
        character(len=*), intent(in) :: directory
        integer, intent(in) :: rank
        character(len=4096) :: path
        integer :: unit, i
        write (path, '(A,A,I0,A)') trim(directory), '/rank.', rank, '.txt'
        open (newunit=unit, file=trim(path)//'.partial', status='replace', action='write')
        do i = 1, note_count
            write (unit, '(A)') trim(note_lines(i))
        end do
        close (unit)
        call rename(trim(path)//'.partial', trim(path))
    end subroutine

    ! Waits until every rank's log is in directory, a minute at most: a
    ! rank that ends the job (without MPI_Finalize, with MPI_Abort) lets
    ! mpirun kill the others, which must have written theirs by then.
    subroutine wait_for_every_log(directory, nranks)
        character(len=*), intent(in) :: directory
        integer, intent(in) :: nranks
        character(len=4096) :: path
        integer :: r, tries
        logical :: there
        r = 0
        tries = 0
        do while (r < nranks .and. tries < 60)
            write (path, '(A,A,I0,A)') trim(directory), '/rank.', r, '.txt'
            inquire (file=trim(path), exist=there)
            if (there) then
                r = r + 1
            else
                call sleep(1)
                tries = tries + 1
            end if
        end do
    end subroutine
end module
