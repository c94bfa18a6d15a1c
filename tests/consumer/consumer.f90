! Consumer of an installed pipevd (Fortran): `use pipevd` and a plain CALL PDSYEVD on a 1x1 grid
! for tridiag(-1, 2, -1) (eigenvalues 2 - 2 cos(k pi / (n + 1))). Stops with 1 unless both calls
! give INFO = 0 and those eigenvalues.
program consumer_f
  use mpi
  use pipevd
  use, intrinsic :: iso_c_binding, only: c_char, c_f_pointer, c_ptr
  implicit none
  integer, parameter :: n = 12, nb = 4
  integer :: ierr, ictxt, desc(9), info, info2, lwork, liwork, iwq(1), k
  double precision :: a(n, n), a2(n, n), z(n, n), w(n), w2(n), wq(1), worst
  double precision, allocatable :: work(:)
  integer, allocatable :: iwork(:)
  character(kind=c_char), pointer :: version(:)

  call MPI_Init(ierr)
  call BLACS_GET(-1, 0, ictxt)
  call BLACS_GRIDINIT(ictxt, 'R', 1, 1)
  call DESCINIT(desc, n, n, nb, nb, 0, 0, ictxt, n, info)
  a = 0
  do k = 1, n
    a(k, k) = 2
    if (k < n) a(k + 1, k) = -1
  end do
  a2 = a
  call pipevd_pdsyevd('Vectors', 'Lower', n, a, 1, 1, desc, w, z, 1, 1, desc, wq, -1, iwq, -1, info)
  lwork = int(wq(1))
  liwork = iwq(1)
  allocate (work(lwork), iwork(liwork))
  call pipevd_pdsyevd('Vectors', 'Lower', n, a, 1, 1, desc, w, z, 1, 1, desc, work, lwork, iwork, &
                      liwork, info)
  call PDSYEVD('v', 'l', n, a2, 1, 1, desc, w2, z, 1, 1, desc, work, lwork, iwork, liwork, info2)
  worst = 0
  do k = 1, n
    worst = max(worst, abs(w(k) - (2 - 2 * cos(k * acos(-1.0d0) / (n + 1)))), abs(w2(k) - w(k)))
  end do
  call c_f_pointer(pipevd_version(), version, [16])
  write (*, '(a,16a)', advance='no') 'consumer_f: pipevd ', version(1:index_nul(version) - 1)
  write (*, '(a,i0,a,i0,a,es9.2)') ' info=', info, ' info(PDSYEVD)=', info2, ' max error=', worst
  call BLACS_GRIDEXIT(ictxt)
  call MPI_Finalize(ierr)
  if (info /= 0 .or. info2 /= 0 .or. worst > 1d-13) stop 1

contains

  pure integer function index_nul(s)
    character(kind=c_char), intent(in) :: s(:)
    do index_nul = 1, size(s)
      if (s(index_nul) == achar(0)) return
    end do
  end function index_nul

end program consumer_f
