! The complex twin of pdsyevd_app.f90: a ScaLAPACK application in the style of VASP with k-points
! and BerkeleyGW, unchanged by pipevd. It builds a BLACS grid, describes a block-cyclic Hermitian
! matrix with DESCINIT, fills its local part itself, asks PZHEEVD for its workspace, calls PZHEEVD
! and checks the residual itself.
!
! The build links this one object file twice: pzheevd_app_scalapack (ScaLAPACK only) and
! pzheevd_app_pipevd (-lpipevd ahead of ScaLAPACK). Nothing in the source knows about pipevd.
!
! Usage: mpiexec -n P pzheevd_app_* [n] [nb] [eigenvalue file]
!   prints residual ||A Z - Z W||_F / (||A||_F n eps) and orthogonality ||Z^H Z - I||_F / (n eps)
!   (ScaLAPACK's tester passes below 100); exits non-zero when INFO /= 0 or either fails.
program pzheevd_app
  use mpi
  implicit none
  integer, external :: numroc
  double precision, external :: pzlange
  complex(kind(1.0d0)), parameter :: zero = (0.0d0, 0.0d0), one = (1.0d0, 0.0d0)
  integer :: ierr, nprocs, iam, nprow, npcol, ictxt, myrow, mycol
  integer :: n, nb, mloc, nloc, lld, info, lwork, lrwork, liwork, il, jl, ig, jg, i
  integer :: desca(9), descz(9), iwork_query(1)
  complex(kind(1.0d0)) :: work_query(1)
  double precision :: rwork_query(1), anorm, rnorm, onorm, residual, orthogonality, t0, seconds
  complex(kind(1.0d0)), allocatable :: a(:,:), a0(:,:), z(:,:), r(:,:), work(:)
  double precision, allocatable :: w(:), rwork(:), norm_work(:)
  integer, allocatable :: iwork(:)
  logical :: ok, all_ok
  character(len=256) :: arg, eigenvalue_file

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, iam, ierr)
  n = 400
  nb = 32
  eigenvalue_file = ''
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) nb
  end if
  if (command_argument_count() >= 3) call get_command_argument(3, eigenvalue_file)

  ! The most nearly square grid the ranks make, rows <= columns.
  nprow = int(sqrt(dble(nprocs)))
  do while (mod(nprocs, nprow) /= 0)
    nprow = nprow - 1
  end do
  npcol = nprocs / nprow
  call BLACS_GET(-1, 0, ictxt)
  call BLACS_GRIDINIT(ictxt, 'Row-major', nprow, npcol)
  call BLACS_GRIDINFO(ictxt, nprow, npcol, myrow, mycol)

  mloc = numroc(n, nb, myrow, 0, nprow)
  nloc = numroc(n, nb, mycol, 0, npcol)
  lld = max(1, mloc)
  call DESCINIT(desca, n, n, nb, nb, 0, 0, ictxt, lld, info)
  call DESCINIT(descz, n, n, nb, nb, 0, 0, ictxt, lld, info)
  allocate (a(lld, max(1, nloc)), a0(lld, max(1, nloc)), z(lld, max(1, nloc)), &
            r(lld, max(1, nloc)), w(n), norm_work(max(1, 2 * nloc)))

  ! The application's own block-cyclic fill: local (il, jl) holds global (ig, jg).
  do jl = 1, nloc
    jg = ((jl - 1) / nb) * npcol * nb + mycol * nb + mod(jl - 1, nb) + 1
    do il = 1, mloc
      ig = ((il - 1) / nb) * nprow * nb + myrow * nb + mod(il - 1, nb) + 1
      a(il, jl) = entry(ig, jg, n)
    end do
  end do
  a0 = a

  ! Workspace query, then the solve.
  call PZHEEVD('V', 'U', n, a, 1, 1, desca, w, z, 1, 1, descz, work_query, -1, rwork_query, -1, &
               iwork_query, -1, info)
  lwork = int(dble(work_query(1)))
  lrwork = int(rwork_query(1))
  liwork = iwork_query(1)
  allocate (work(lwork), rwork(lrwork), iwork(liwork))
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  call PZHEEVD('V', 'U', n, a, 1, 1, desca, w, z, 1, 1, descz, work, lwork, rwork, lrwork, &
               iwork, liwork, info)
  seconds = MPI_Wtime() - t0

  ! R = A0 Z - Z diag(W)
  do jl = 1, nloc
    jg = ((jl - 1) / nb) * npcol * nb + mycol * nb + mod(jl - 1, nb) + 1
    r(1:mloc, jl) = z(1:mloc, jl) * w(jg)
  end do
  call PZGEMM('N', 'N', n, n, n, one, a0, 1, 1, desca, z, 1, 1, descz, -one, r, 1, 1, descz)
  rnorm = pzlange('F', n, n, r, 1, 1, descz, norm_work)
  anorm = pzlange('F', n, n, a0, 1, 1, desca, norm_work)
  ! R = Z^H Z - I
  call PZLASET('A', n, n, zero, -one, r, 1, 1, descz)
  call PZGEMM('C', 'N', n, n, n, one, z, 1, 1, descz, z, 1, 1, descz, one, r, 1, 1, descz)
  onorm = pzlange('F', n, n, r, 1, 1, descz, norm_work)
  residual = rnorm / (anorm * n * epsilon(1.0d0))
  orthogonality = onorm / (n * epsilon(1.0d0))
  ok = info == 0 .and. residual < 100.0d0 .and. orthogonality < 100.0d0
  call MPI_Allreduce(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)

  if (iam == 0) then
    write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,es10.3,a,es10.3,a,f0.3,a)') 'pzheevd_app n=', n, &
      ' nb=', nb, ' grid=', nprow, 'x', npcol, ' info=', info, ' residual=', residual, &
      ' orthogonality=', orthogonality, ' time=', seconds, ' s'
    if (len_trim(eigenvalue_file) > 0) then
      open (unit=10, file=trim(eigenvalue_file), status='replace', action='write')
      do i = 1, n
        write (10, '(es25.17e3)') w(i)
      end do
      close (10)
    end if
  end if
  call BLACS_GRIDEXIT(ictxt)
  call MPI_Finalize(ierr)
  if (.not. all_ok) stop 1

contains

  ! A Hermitian entry of the test matrix: pdsyevd_app's symmetric real part (smooth coupling plus a
  ! spread diagonal) and an antisymmetric imaginary part, zero on the diagonal.
  pure complex(kind(1.0d0)) function entry(i, j, n)
    integer, intent(in) :: i, j, n
    double precision :: re, im
    re = sin(0.37d0 * dble(i) * dble(j) + 0.1d0 * dble(i + j)) / sqrt(dble(n))
    if (i == j) re = re + dble(i) / dble(n)
    im = sin(0.21d0 * dble(i - j)) * cos(0.13d0 * dble(i) * dble(j)) / sqrt(dble(n))
    entry = cmplx(re, im, kind(1.0d0))
  end function entry

end program pzheevd_app
