! The user API of adaptrace for Fortran (docs/user-api.md): `use adaptrace`
! in programs of any MPI binding (mpif.h, `use mpi`, `use mpi_f08`); the
! module needs no MPI. The same calls as adaptrace.h, through
! ISO_C_BINDING: begin, end, pause and resume bind to the C functions
! directly; registration makes the C string of a Fortran one. Linked with
! libadaptrace_fortran.a and libadaptrace_user, every call does nothing
! unless adaptrace runs the program.
module adaptrace
  use, intrinsic :: iso_c_binding, only: c_int32_t, c_int64_t, c_double, c_char, c_null_char
  implicit none
  private
  public :: adaptrace_region_kind, adaptrace_region_register, adaptrace_phase_register, &
            adaptrace_region_begin, adaptrace_region_end, adaptrace_pause, adaptrace_resume, &
            adaptrace_parameter_register, adaptrace_parameter_int, adaptrace_metric_register, &
            adaptrace_metric_double

  ! A handle (adaptrace_region_t, a 32-bit unsigned integer in C: compare
  ! handles for equality only).
  integer, parameter :: adaptrace_region_kind = c_int32_t

  interface
    function c_region_register(name) bind(c, name='adaptrace_region_register') result(handle)
      import :: c_int32_t, c_char
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: handle
    end function c_region_register
    function c_phase_register(name) bind(c, name='adaptrace_phase_register') result(handle)
      import :: c_int32_t, c_char
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: handle
    end function c_phase_register
    subroutine adaptrace_region_begin(handle) bind(c, name='adaptrace_region_begin')
      import :: c_int32_t
      integer(c_int32_t), value, intent(in) :: handle
    end subroutine adaptrace_region_begin
    subroutine adaptrace_region_end(handle) bind(c, name='adaptrace_region_end')
      import :: c_int32_t
      integer(c_int32_t), value, intent(in) :: handle
    end subroutine adaptrace_region_end
    function c_parameter_register(name) bind(c, name='adaptrace_parameter_register') result(handle)
      import :: c_int32_t, c_char
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: handle
    end function c_parameter_register
    ! value: integer(kind=8) (c_int64_t).
    subroutine adaptrace_parameter_int(handle, value) bind(c, name='adaptrace_parameter_int')
      import :: c_int32_t, c_int64_t
      integer(c_int32_t), value, intent(in) :: handle
      integer(c_int64_t), value, intent(in) :: value
    end subroutine adaptrace_parameter_int
    function c_metric_register(name) bind(c, name='adaptrace_metric_register') result(handle)
      import :: c_int32_t, c_char
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int32_t) :: handle
    end function c_metric_register
    ! value: double precision (c_double).
    subroutine adaptrace_metric_double(handle, value) bind(c, name='adaptrace_metric_double')
      import :: c_int32_t, c_double
      integer(c_int32_t), value, intent(in) :: handle
      real(c_double), value, intent(in) :: value
    end subroutine adaptrace_metric_double
    subroutine adaptrace_pause() bind(c, name='adaptrace_pause')
    end subroutine adaptrace_pause
    subroutine adaptrace_resume() bind(c, name='adaptrace_resume')
    end subroutine adaptrace_resume
  end interface

contains

  ! Trailing blanks are not part of the name (Fortran's fixed-length strings).
  function adaptrace_region_register(name) result(handle)
    character(len=*), intent(in) :: name
    integer(adaptrace_region_kind) :: handle
    handle = c_region_register(trim(name) // c_null_char)
  end function adaptrace_region_register

  function adaptrace_phase_register(name) result(handle)
    character(len=*), intent(in) :: name
    integer(adaptrace_region_kind) :: handle
    handle = c_phase_register(trim(name) // c_null_char)
  end function adaptrace_phase_register

  function adaptrace_parameter_register(name) result(handle)
    character(len=*), intent(in) :: name
    integer(adaptrace_region_kind) :: handle
    handle = c_parameter_register(trim(name) // c_null_char)
  end function adaptrace_parameter_register

  function adaptrace_metric_register(name) result(handle)
    character(len=*), intent(in) :: name
    integer(adaptrace_region_kind) :: handle
    handle = c_metric_register(trim(name) // c_null_char)
  end function adaptrace_metric_register
end module adaptrace
