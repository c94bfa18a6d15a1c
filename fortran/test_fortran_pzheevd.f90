! Fortran callers of pipevd's PZHEEVD: through `use pipevd` (bind(C) interface) and through a plain
! `CALL PZHEEVD(...)` (Fortran ABI, hidden character lengths) in a program linked with -lpipevd
! ahead of ScaLAPACK, on P x 1 and 1 x P grids, sub(A) and sub(Z) at (1, 1) and inside a larger
! matrix, JOBZ/UPLO spelled as Fortran codes spell them.
!
! Checked per solve: INFO = 0; eigenvalues equal LAPACK's ZHEEV on the whole matrix; Z unitary and
! A Z = Z W to 100 n eps (on the gathered Z); the triangle UPLO does not name never read (it holds
! garbage). Prints "solves=K" so that the driver can check that K calls went through pipevd.
program test_fortran_pzheevd
  use mpi
  use pipevd
  use test_support
  implicit none

  call start_run()
  call run_grid(nprocs, 1)
  if (nprocs > 1) call run_grid(1, nprocs)
  call finish_run()

contains

  subroutine run_grid(nprow, npcol)
    integer, intent(in) :: nprow, npcol
    integer :: ictxt
    call BLACS_GET(-1, 0, ictxt)
    call BLACS_GRIDINIT(ictxt, 'Row-major', nprow, npcol)
    !                          module   jobz       uplo     n  nb  offset
    call solve_case(ictxt, .true.,  'V',       'L',      27, 4,  0)
    call solve_case(ictxt, .true.,  'vectors', 'upper',  27, 4,  8)
    call solve_case(ictxt, .false., 'v',       'l',      27, 4,  4)
    call solve_case(ictxt, .false., 'Vectors', 'U',      33, 5,  0)
    call BLACS_GRIDEXIT(ictxt)
  end subroutine run_grid

  ! The Hermitian test matrix (global indices within the submatrix).
  pure complex(kind(1d0)) function entry(i, j, n)
    integer, intent(in) :: i, j, n
    double precision :: re, im
    re = cos(0.61d0 * dble(min(i, j)) * dble(max(i, j)) + 0.3d0 * dble(i + j)) / sqrt(dble(n))
    im = sin(0.37d0 * dble(i - j)) / sqrt(dble(n))
    entry = cmplx(re, im, kind(1d0))
    if (i == j) entry = cmplx(re + 2.0d0 * dble(i) / dble(n), 0d0, kind(1d0))
  end function entry

  subroutine solve_case(ictxt, via_module, jobz, uplo, n, nb, offset)
    integer, intent(in) :: ictxt, n, nb, offset
    logical, intent(in) :: via_module
    character(len=*), intent(in) :: jobz, uplo
    integer :: nprow, npcol, myrow, mycol, m, mloc, nloc, lld, info, i, j, il, jl, gi, gj, ierr
    integer :: desca(9), lwork, lrwork, liwork, iwq(1), numroc, lower
    complex(kind(1d0)), allocatable :: a(:, :), z(:, :), work(:), full(:, :), zfull(:, :)
    complex(kind(1d0)), allocatable :: r(:, :), lwork_z(:)
    double precision, allocatable :: w(:), wref(:), rwork(:)
    complex(kind(1d0)) :: wq(1)
    double precision :: rwq(1), res, orth, eps, anorm
    external :: numroc

    call BLACS_GRIDINFO(ictxt, nprow, npcol, myrow, mycol)
    m = n + offset
    mloc = numroc(m, nb, myrow, 0, nprow)
    nloc = numroc(m, nb, mycol, 0, npcol)
    lld = max(1, mloc)
    call DESCINIT(desca, m, m, nb, nb, 0, 0, ictxt, lld, info)
    allocate (a(lld, max(1, nloc)), z(lld, max(1, nloc)), w(n), wref(n))
    lower = 0
    if (uplo(1:1) == 'L' .or. uplo(1:1) == 'l') lower = 1
    do jl = 1, nloc
      gj = global_index(jl, nb, mycol, 0, npcol) - offset
      do il = 1, mloc
        gi = global_index(il, nb, myrow, 0, nprow) - offset
        a(il, jl) = (99d0, -99d0)
        if (gi >= 1 .and. gj >= 1 .and. gi <= n .and. gj <= n) then
          a(il, jl) = entry(gi, gj, n)
          ! The other triangle holds garbage: never to be read.
          if ((lower == 1 .and. gi < gj) .or. (lower == 0 .and. gi > gj)) &
            a(il, jl) = cmplx(huge(1d0), -huge(1d0), kind(1d0))
        end if
      end do
    end do
    z = (0d0, 0d0)

    lwork = -1
    lrwork = -1
    liwork = -1
    call call_pzheevd(via_module, jobz, uplo, n, a, offset, desca, w, z, wq, lwork, rwq, lrwork, &
                      iwq, liwork, info)
    if (info /= 0) then
      failures = failures + 1
      return
    end if
    lwork = int(real(wq(1)))
    lrwork = int(rwq(1))
    liwork = iwq(1)
    allocate (work(lwork), rwork(lrwork))
    block
      integer, allocatable :: iwork(:)
      allocate (iwork(liwork))
      call call_pzheevd(via_module, jobz, uplo, n, a, offset, desca, w, z, work, lwork, rwork, &
                        lrwork, iwork, liwork, info)
    end block
    solves = solves + 1
    if (info /= 0) then
      failures = failures + 1
      return
    end if

    ! The reference: LAPACK's ZHEEV on the whole matrix; Z gathered by a sum over the ranks.
    allocate (full(n, n), zfull(n, n), r(n, n))
    do j = 1, n
      do i = 1, n
        full(i, j) = entry(i, j, n)
      end do
    end do
    zfull = (0d0, 0d0)
    do jl = 1, nloc
      gj = global_index(jl, nb, mycol, 0, npcol) - offset
      do il = 1, mloc
        gi = global_index(il, nb, myrow, 0, nprow) - offset
        if (gi >= 1 .and. gj >= 1 .and. gi <= n .and. gj <= n) zfull(gi, gj) = z(il, jl)
      end do
    end do
    call MPI_Allreduce(MPI_IN_PLACE, zfull, n * n, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, &
                       ierr)
    r = full
    allocate (lwork_z(4 * n))
    deallocate (rwork)
    allocate (rwork(3 * n))
    call ZHEEV('N', 'L', n, r, n, wref, lwork_z, 4 * n, rwork, info)
    eps = epsilon(1d0)
    anorm = sqrt(sum(abs(full)**2))
    if (maxval(abs(w - wref)) > 1d-12 * maxval(abs(wref))) failures = failures + 1
    r = matmul(full, zfull)
    do j = 1, n
      r(:, j) = r(:, j) - w(j) * zfull(:, j)
    end do
    res = sqrt(sum(abs(r)**2)) / (anorm * n * eps)
    r = matmul(conjg(transpose(zfull)), zfull)
    do j = 1, n
      r(j, j) = r(j, j) - 1
    end do
    orth = sqrt(sum(abs(r)**2)) / (n * eps)
    if (res > 100 .or. orth > 100) failures = failures + 1

  end subroutine solve_case

  ! PZHEEVD on sub(A) and sub(Z) at (offset + 1, offset + 1) of desca, through the module
  ! (via_module) or through the plain call.
  subroutine call_pzheevd(via_module, jobz, uplo, n, a, offset, desca, w, z, work, lwork, rwork, &
                          lrwork, iwork, liwork, info)
    logical, intent(in) :: via_module
    character(len=*), intent(in) :: jobz, uplo
    integer, intent(in) :: n, offset, desca(9), lwork, lrwork, liwork
    complex(kind(1d0)), intent(inout) :: a(*), z(*), work(*)
    double precision, intent(inout) :: w(*), rwork(*)
    integer, intent(inout) :: iwork(*)
    integer, intent(out) :: info
    if (via_module) then
      call pipevd_pzheevd(jobz, uplo, n, a, offset + 1, offset + 1, desca, w, z, offset + 1, &
                          offset + 1, desca, work, lwork, rwork, lrwork, iwork, liwork, info)
    else
      call PZHEEVD(jobz, uplo, n, a, offset + 1, offset + 1, desca, w, z, offset + 1, &
                   offset + 1, desca, work, lwork, rwork, lrwork, iwork, liwork, info)
    end if
  end subroutine call_pzheevd

end program test_fortran_pzheevd
