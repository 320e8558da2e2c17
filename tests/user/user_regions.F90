! tests/user/user_regions.c's balanced mode in Fortran through the module
! `adaptrace` (check_user.py checks both alike): phases "setup" and
! "iterate", three time steps of "solver" around "kernel" and an
! MPI_Allreduce (parameter "time step" and metric "residual" in "solver"),
! "tiny" in a hot loop, "by macro" twice. Preprocessed
! once per MPI binding: USE_MPI_F08 (use mpi_f08), else mpif.h.
program user_regions
#ifdef USE_MPI_F08
  use mpi_f08
#endif
  use adaptrace
  implicit none
#ifndef USE_MPI_F08
  include 'mpif.h'
#endif
  integer(adaptrace_region_kind) :: setup, iterate, solver, kernel, tiny, by_macro, time_step, residual
  integer :: rank, size, ierror, step, i
  integer(kind=8) :: result, local, total
  double precision :: sink

  call MPI_Init(ierror)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierror)
  setup = adaptrace_phase_register("setup")
  iterate = adaptrace_phase_register("iterate")
  solver = adaptrace_region_register("solver")
  kernel = adaptrace_region_register("kernel")
  tiny = adaptrace_region_register("tiny")
  by_macro = adaptrace_region_register("by macro   ")
  time_step = adaptrace_parameter_register("time step")
  residual = adaptrace_metric_register("residual")
  result = 0

  call adaptrace_region_begin(setup)
  sink = compute(0.05d0)
  result = result + rank + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierror)
  call adaptrace_region_end(setup)

  call adaptrace_region_begin(iterate)
  do step = 0, 2
    call adaptrace_region_begin(solver)
    call adaptrace_parameter_int(time_step, int(step, 8))
    call adaptrace_metric_double(residual, 1d0 / 2**step)
    call adaptrace_region_begin(kernel)
    sink = compute(0.1d0)
    call adaptrace_region_end(kernel)
    local = int(step + 1, 8) * (rank + 1)
    call MPI_Allreduce(local, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierror)
    result = result + total
    call adaptrace_region_end(solver)
  end do
  do i = 0, 999
    call adaptrace_region_begin(tiny)
    result = result + mod(i, 2)
    call adaptrace_region_end(tiny)
  end do
  call adaptrace_region_end(iterate)

  do i = 1, 2
    call adaptrace_region_begin(by_macro)
    result = result + 1
    call adaptrace_region_end(by_macro)
  end do

  call MPI_Reduce(result, total, 1, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD, ierror)
  if (rank == 0) print '(a, i0, a, i0)', 'balanced on ', size, ' ranks: ', total
  if (sink > 2d0) print *, sink
  call MPI_Finalize(ierror)

contains

  ! Arithmetic for at least `seconds` of CPU time, so that samples land inside.
  double precision function compute(seconds)
    double precision, intent(in) :: seconds
    real :: start, now
    double precision :: x
    integer :: k
    x = 0d0
    call cpu_time(start)
    do
      do k = 0, 999
        x = sin(x + k)
      end do
      call cpu_time(now)
      if (now - start >= seconds) exit
    end do
    compute = x
  end function compute
end program user_regions
