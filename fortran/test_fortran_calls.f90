! Fortran callers of pipevd: PDSYEVD reached through `use pipevd` (bind(C) interface) and through a
! plain `CALL PDSYEVD(...)` (Fortran ABI, hidden character lengths) in a program linked with
! -lpipevd ahead of ScaLAPACK. Each solve works on a submatrix (IA/JA/IZ/JZ > 1, IA /= JA) of a
! larger block-cyclic matrix on a non-square grid (P x 1 and 1 x P), with JOBZ/UPLO spelled as
! Fortran codes spell them ('v', 'Vectors', 'lower', ...).
!
! Checked per solve: INFO = 0; eigenvalues equal LAPACK's DSYEV on the whole matrix; residual and
! orthogonality below 100 n eps; nothing outside the submatrices of A and Z touched; the triangle
! UPLO does not name is never read (it holds garbage). Then invalid JOBZ/UPLO give INFO = -1/-2
! on both paths and the two paths answer the same workspace query.
! Prints "solves=K" so that the driver can check that K calls went through pipevd.
program test_fortran_calls
  use pipevd
  use test_support
  implicit none

  call start_run()
  call run_grid(nprocs, 1)
  if (nprocs > 1) call run_grid(1, nprocs)
  call pipevd_release()  ! the kept host memory back, through the module's interface
  call run_grid(nprocs, 1)  ! and calls after it still work
  call finish_run()

contains

  subroutine run_grid(nprow, npcol)
    integer, intent(in) :: nprow, npcol
    integer :: ictxt
    call BLACS_GET(-1, 0, ictxt)
    call BLACS_GRIDINIT(ictxt, 'Row-major', nprow, npcol)
    !                          path      jobz       uplo     n  nb  ia  ja  iz  jz  rsrc/csrc
    call solve_case(ictxt, .true.,  'V',       'U',      29, 4,  1,  1,  1,  1, 0, 0)
    call solve_case(ictxt, .true.,  'v',       'l',      29, 4,  5,  9,  9,  5, 0, 0)
    call solve_case(ictxt, .true.,  'Vectors', 'Lower',  29, 4,  9,  5,  5,  9, 0, 0)
    call solve_case(ictxt, .false., 'vectors', 'upper',  29, 4,  5,  9,  9,  5, 0, 0)
    call solve_case(ictxt, .false., 'Vectors', 'Lower',  31, 3,  4,  7,  7,  4, nprow - 1, npcol - 1)
    call check_bad_arguments_and_query(ictxt)
    call BLACS_GRIDEXIT(ictxt)
  end subroutine run_grid

  ! The symmetric test matrix (global indices within the submatrix).
  pure double precision function entry(i, j, n)
    integer, intent(in) :: i, j, n
    entry = cos(0.61d0 * dble(i) * dble(j) + 0.3d0 * dble(i + j)) / sqrt(dble(n))
    if (i == j) entry = entry + 2.0d0 * dble(i) / dble(n)
  end function entry

  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (*, '(a,i0,a,a)') 'FAIL (rank ', iam, '): ', what
    failures = failures + 1
  end subroutine fail

  subroutine solve_case(ictxt, through_module, jobz, uplo, n, nb, ia, ja, iz, jz, rsrc, csrc)
    integer, intent(in) :: ictxt, n, nb, ia, ja, iz, jz, rsrc, csrc
    logical, intent(in) :: through_module
    character(len=*), intent(in) :: jobz, uplo
    integer, external :: numroc
    double precision, external :: pdlange
    double precision, allocatable :: a(:,:), a0(:,:), z(:,:), z_before(:,:), r(:,:), w(:)
    double precision, allocatable :: work(:), norm_work(:), full(:,:), wref(:)
    integer, allocatable :: iwork(:)
    integer :: nprow, npcol, myrow, mycol, m, mloc, nloc, lld, info, lwork, liwork
    integer :: desca(9), descz(9), il, jl, ig, jg, i, j, iwork_query(1)
    double precision :: work_query(1), eps, anorm, rnorm, onorm, scale
    logical :: lower, inside
    character(len=64) :: label

    write (label, '(a,a,a,a,a,a,i0,a,i0)') merge('module', 'plain ', through_module), ' ', &
      jobz, '/', uplo, ' ia=', ia, ' ja=', ja
    call BLACS_GRIDINFO(ictxt, nprow, npcol, myrow, mycol)
    lower = uplo(1:1) == 'L' .or. uplo(1:1) == 'l'
    m = max(ia, ja, iz, jz) + n - 1
    mloc = numroc(m, nb, myrow, rsrc, nprow)
    nloc = numroc(m, nb, mycol, csrc, npcol)
    lld = max(1, mloc)
    call DESCINIT(desca, m, m, nb, nb, rsrc, csrc, ictxt, lld, info)
    call DESCINIT(descz, m, m, nb, nb, rsrc, csrc, ictxt, lld, info)
    allocate (a(lld, max(1, nloc)), a0(lld, max(1, nloc)), z(lld, max(1, nloc)), &
              z_before(lld, max(1, nloc)), r(lld, max(1, nloc)), w(n), &
              norm_work(2 * (mloc + nloc) + 4 * nb + 16))

    ! A: the test matrix in A(ia:, ja:), garbage in the triangle UPLO does not name, sentinels
    ! elsewhere; Z: sentinels outside Z(iz:, jz:).
    do jl = 1, nloc
      jg = global_index(jl, nb, mycol, csrc, npcol)
      do il = 1, mloc
        ig = global_index(il, nb, myrow, rsrc, nprow)
        i = ig - ia + 1
        j = jg - ja + 1
        inside = i >= 1 .and. i <= n .and. j >= 1 .and. j <= n
        if (inside) then
          a0(il, jl) = entry(i, j, n)
          a(il, jl) = a0(il, jl)
          if ((lower .and. i < j) .or. (.not. lower .and. i > j)) a(il, jl) = 1.0d3 + i - j
        else
          a0(il, jl) = -3.0d0 - ig - 0.5d0 * jg
          a(il, jl) = a0(il, jl)
        end if
        z(il, jl) = -5.0d0 - 0.25d0 * ig + jg
      end do
    end do
    z_before = z

    call call_pdsyevd(through_module, jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, &
                      work_query, -1, iwork_query, -1, info)
    if (info /= 0) call fail(trim(label)//': workspace query INFO /= 0')
    lwork = int(work_query(1))
    liwork = iwork_query(1)
    allocate (work(max(1, lwork)), iwork(max(1, liwork)))
    call call_pdsyevd(through_module, jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, &
                      work, lwork, iwork, liwork, info)
    solves = solves + 1
    if (info /= 0) then
      call fail(trim(label)//': INFO /= 0')
      return
    end if
    if (.not. last_path_known()) call fail(trim(label)//': pipevd_last_path names no path')

    ! Nothing outside the submatrices changed (A inside is destroyed, as PDSYEVD allows).
    do jl = 1, nloc
      jg = global_index(jl, nb, mycol, csrc, npcol)
      do il = 1, mloc
        ig = global_index(il, nb, myrow, rsrc, nprow)
        inside = ig >= ia .and. ig < ia + n .and. jg >= ja .and. jg < ja + n
        if (.not. inside .and. a(il, jl) /= a0(il, jl)) then
          call fail(trim(label)//': A changed outside A(ia:, ja:)')
          exit
        end if
        inside = ig >= iz .and. ig < iz + n .and. jg >= jz .and. jg < jz + n
        if (.not. inside .and. z(il, jl) /= z_before(il, jl)) then
          call fail(trim(label)//': Z changed outside Z(iz:, jz:)')
          exit
        end if
      end do
    end do

    ! Eigenvalues against LAPACK on the whole symmetric matrix (every rank has all of it).
    allocate (full(n, n), wref(n))
    do j = 1, n
      do i = 1, n
        full(i, j) = entry(i, j, n)
      end do
    end do
    deallocate (work)
    allocate (work(max(1, 3 * n)))
    call DSYEV('N', 'U', n, full, n, wref, work, 3 * n, info)
    eps = epsilon(1.0d0)
    scale = maxval(abs(wref))
    if (maxval(abs(w - wref)) > 100.0d0 * n * eps * scale) &
      call fail(trim(label)//': eigenvalues differ from LAPACK DSYEV')

    ! Residual ||A Z - Z W||_F / (||A||_F n eps) and orthogonality ||Z^T Z - I||_F / (n eps).
    r = z
    do jl = 1, nloc
      jg = global_index(jl, nb, mycol, csrc, npcol)
      if (jg >= jz .and. jg < jz + n) r(1:mloc, jl) = z(1:mloc, jl) * w(jg - jz + 1)
    end do
    call PDGEMM('N', 'N', n, n, n, 1.0d0, a0, ia, ja, desca, z, iz, jz, descz, -1.0d0, r, iz, jz, &
                descz)
    rnorm = pdlange('F', n, n, r, iz, jz, descz, norm_work)
    anorm = pdlange('F', n, n, a0, ia, ja, desca, norm_work)
    call PDLASET('A', n, n, 0.0d0, -1.0d0, r, iz, jz, descz)
    call PDGEMM('T', 'N', n, n, n, 1.0d0, z, iz, jz, descz, z, iz, jz, descz, 1.0d0, r, iz, jz, &
                descz)
    onorm = pdlange('F', n, n, r, iz, jz, descz, norm_work)
    if (rnorm / (anorm * n * eps) >= 100.0d0) call fail(trim(label)//': residual')
    if (onorm / (n * eps) >= 100.0d0) call fail(trim(label)//': orthogonality')
    if (iam == 0) write (*, '(a,a,i0,a,i0,a,es9.2,a,es9.2)') trim(label), ' grid=', nprow, 'x', &
      npcol, ' residual=', rnorm / (anorm * n * eps), ' orthogonality=', onorm / (n * eps)
  end subroutine solve_case

  ! PDSYEVD through the module (through_module) or through the plain call.
  subroutine call_pdsyevd(through_module, jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, &
                          work, lwork, iwork, liwork, info)
    logical, intent(in) :: through_module
    character(len=*), intent(in) :: jobz, uplo
    integer, intent(in) :: n, ia, ja, iz, jz, desca(9), descz(9), lwork, liwork
    double precision, intent(inout) :: a(*), w(*), z(*), work(*)
    integer, intent(inout) :: iwork(*)
    integer, intent(out) :: info
    if (through_module) then
      call pipevd_pdsyevd(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, &
                          iwork, liwork, info)
    else
      call PDSYEVD(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, &
                   liwork, info)
    end if
  end subroutine call_pdsyevd

  ! Invalid JOBZ/UPLO: INFO = -1/-2 on both paths ('x' is no JOBZ even though 'vectors' is). The
  ! workspace query answers the same through the module and through the plain call.
  subroutine check_bad_arguments_and_query(ictxt)
    integer, intent(in) :: ictxt
    integer, external :: numroc
    integer :: nprow, npcol, myrow, mycol, n, nb, lld, info, desc(9), iwork(1), iwork2(1)
    double precision :: a(64), z(64), w(8), work(1), work2(1)

    call BLACS_GRIDINFO(ictxt, nprow, npcol, myrow, mycol)
    n = 8
    nb = 2
    lld = max(1, numroc(n, nb, myrow, 0, nprow))
    call DESCINIT(desc, n, n, nb, nb, 0, 0, ictxt, lld, info)
    a = 0
    call pipevd_pdsyevd('x', 'Upper', n, a, 1, 1, desc, w, z, 1, 1, desc, work, -1, iwork, -1, info)
    if (info /= -1) call fail('module JOBZ=''x'': INFO /= -1')
    call PDSYEVD('Xylophone', 'U', n, a, 1, 1, desc, w, z, 1, 1, desc, work, -1, iwork, -1, info)
    if (info /= -1) call fail('plain JOBZ=''Xylophone'': INFO /= -1')
    call pipevd_pdsyevd('Vectors', 'Q', n, a, 1, 1, desc, w, z, 1, 1, desc, work, -1, iwork, -1, info)
    if (info /= -2) call fail('module UPLO=''Q'': INFO /= -2')
    call PDSYEVD('v', 'diagonal', n, a, 1, 1, desc, w, z, 1, 1, desc, work, -1, iwork, -1, info)
    if (info /= -2) call fail('plain UPLO=''diagonal'': INFO /= -2')

    call pipevd_pdsyevd('v', 'u', n, a, 1, 1, desc, w, z, 1, 1, desc, work, -1, iwork, -1, info)
    call PDSYEVD('Vectors', 'Upper', n, a, 1, 1, desc, w, z, 1, 1, desc, work2, -1, iwork2, -1, info)
    if (work(1) /= work2(1) .or. iwork(1) /= iwork2(1) .or. work(1) < 1) &
      call fail('workspace query differs between the module and the plain call')
  end subroutine check_bad_arguments_and_query

  ! The module's pipevd_last_path after a solve: one of the paths pipevd.h names (a query or a
  ! refused call leaves it empty).
  logical function last_path_known()
    use, intrinsic :: iso_c_binding, only: c_char, c_f_pointer, c_null_char
    character(kind=c_char), pointer :: s(:)
    character(len=16) :: path
    integer :: i
    call c_f_pointer(pipevd_last_path(), s, [16])
    path = ''
    do i = 1, 16
      if (s(i) == c_null_char) exit
      path(i:i) = s(i)
    end do
    last_path_known = path == 'two_stage' .or. path == 'one_stage' .or. path == 'scalapack'
    if (.not. last_path_known) write (*, '(a)') 'pipevd_last_path: unexpected "' // trim(path) // '"'
  end function last_path_known

end program test_fortran_calls
