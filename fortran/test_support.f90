! What the Fortran test programs share: the frame of a run (MPI started, this rank's solves and
! failures counted; at the end their sums printed as "solves=K failures=F", which the driver
! tests/scripts/expect_routed_solves.sh reads, MPI ended, and the program failed where F > 0), and
! the block-cyclic index map their loops over local elements use.
module test_support
  use mpi
  implicit none
  private
  public :: iam, nprocs, solves, failures, start_run, finish_run, global_index

  integer :: iam = 0, nprocs = 1, solves = 0, failures = 0

contains

  subroutine start_run()
    integer :: ierr
    call MPI_Init(ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, iam, ierr)
    failures = 0
    solves = 0
  end subroutine start_run

  subroutine finish_run()
    integer :: ierr, total_failures
    call MPI_Allreduce(failures, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (iam == 0) write (*, '(a,i0,a,i0)') 'solves=', solves, ' failures=', total_failures
    call MPI_Finalize(ierr)
    if (total_failures /= 0) stop 1
  end subroutine finish_run

  ! Global index of local index l (1-based) in a block-cyclic dimension.
  pure integer function global_index(l, nb, p, src, np)
    integer, intent(in) :: l, nb, p, src, np
    global_index = ((l - 1) / nb) * np * nb + mod(np + p - src, np) * nb + mod(l - 1, nb) + 1
  end function global_index

end module test_support
