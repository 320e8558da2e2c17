! The C side of the mixed-language test programs (mixed.f90, mixed_f08.f90):
! mixed_halo.c's functions and the C expectation log, through bind(C).
module mixed_c
    use iso_c_binding
    implicit none
    interface
        subroutine expect_note_call_c(name) bind(C, name='expect_note_call')
            import :: c_char
            character(kind=c_char), intent(in) :: name(*)
        end subroutine
        subroutine expect_note_members(keyword, first, step, count) bind(C, name='expect_note_members')
            import :: c_char, c_int
            character(kind=c_char), intent(in) :: keyword(*)
            integer(c_int), value :: first, step, count
        end subroutine
        subroutine expect_write(directory, rank) bind(C, name='expect_write')
            import :: c_char, c_int
            character(kind=c_char), intent(in) :: directory(*)
            integer(c_int), value :: rank
        end subroutine
        real(c_double) function mixed_halo_exchange(comm) bind(C, name='mixed_halo_exchange')
            import :: c_double, c_int
            integer(c_int), value :: comm
        end function
        integer(c_int) function mixed_reduce_ranks(comm) bind(C, name='mixed_reduce_ranks')
            import :: c_int
            integer(c_int), value :: comm
        end function
        integer(c_int) function mixed_duplicate(comm) bind(C, name='mixed_duplicate')
            import :: c_int
            integer(c_int), value :: comm
        end function
    end interface
contains
    subroutine note_call(name)
        character(len=*), intent(in) :: name
        call expect_note_call_c(name // c_null_char)
    end subroutine

    subroutine note_members(first, step, count)
        integer, intent(in) :: first, step, count
        call expect_note_members('members' // c_null_char, first, step, count)
    end subroutine
end module
