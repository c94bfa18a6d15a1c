! pipevd: Fortran interfaces to the C API of include/pipevd.h (use pipevd).
!
! Interfaces only: the module holds no code or data, so `use pipevd` plus -lpipevd ahead of
! ScaLAPACK on the link line is all a code needs. Arguments are PDSYEVD's (PZHEEVD's), with its semantics
! (1-based IA/JA/IZ/JZ, 9-integer BLACS descriptors, LWORK = -1 / LIWORK = -1 queries, INFO).
! Only the first character of JOBZ and UPLO is read, as LSAME does, so 'v', 'Vectors' and
! 'Lower' are accepted the way ScaLAPACK accepts them. Integers are C int (default INTEGER of
! gfortran without -fdefault-integer-8).
!
! A code that keeps its plain `CALL PDSYEVD(...)` or `CALL PZHEEVD(...)` needs neither this module
! nor any source change: the library exports pdsyevd_ and pzheevd_ itself.
module pipevd
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_double, c_double_complex, c_ptr
  implicit none
  private
  public :: pipevd_pdsyevd, pipevd_pzheevd, pipevd_version, pipevd_last_path, pipevd_release

  interface
    ! PDSYEVD through pipevd; the same call a plain `CALL PDSYEVD(...)` reaches after relinking.
    subroutine pipevd_pdsyevd(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, &
                              lwork, iwork, liwork, info) bind(c, name='pipevd_pdsyevd')
      import :: c_char, c_int, c_double
      ! Scalar length-1 dummies: a longer actual argument ('Vectors') passes its first character.
      character(kind=c_char, len=1), intent(in) :: jobz, uplo
      integer(c_int), intent(in) :: n, ia, ja, iz, jz, lwork, liwork
      integer(c_int), intent(in) :: desca(9), descz(9)
      real(c_double), intent(inout) :: a(*)
      real(c_double), intent(out) :: w(*)
      real(c_double), intent(inout) :: z(*)
      real(c_double), intent(inout) :: work(*)
      integer(c_int), intent(inout) :: iwork(*)
      integer(c_int), intent(out) :: info
    end subroutine pipevd_pdsyevd

    ! PZHEEVD through pipevd (PZHEEVD's arguments: COMPLEX*16 A, Z and WORK, the real RWORK); the
    ! same call a plain `CALL PZHEEVD(...)` reaches after relinking.
    subroutine pipevd_pzheevd(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, &
                              lwork, rwork, lrwork, iwork, liwork, info) bind(c, name='pipevd_pzheevd')
      import :: c_char, c_int, c_double, c_double_complex
      character(kind=c_char, len=1), intent(in) :: jobz, uplo
      integer(c_int), intent(in) :: n, ia, ja, iz, jz, lwork, lrwork, liwork
      integer(c_int), intent(in) :: desca(9), descz(9)
      complex(c_double_complex), intent(inout) :: a(*)
      real(c_double), intent(out) :: w(*)
      complex(c_double_complex), intent(inout) :: z(*)
      complex(c_double_complex), intent(inout) :: work(*)
      real(c_double), intent(inout) :: rwork(*)
      integer(c_int), intent(inout) :: iwork(*)
      integer(c_int), intent(out) :: info
    end subroutine pipevd_pzheevd

    ! The library's version as a NUL-terminated C string (c_f_pointer it to read it).
    function pipevd_version() bind(c, name='pipevd_version') result(version)
      import :: c_ptr
      type(c_ptr) :: version
    end function pipevd_version

    ! What this process's last call computed with: "two_stage", "one_stage", "scalapack" or ""
    ! (see pipevd.h), a NUL-terminated C string as pipevd_version's.
    function pipevd_last_path() bind(c, name='pipevd_last_path') result(path)
      import :: c_ptr
      type(c_ptr) :: path
    end function pipevd_last_path

    ! Frees what pipevd keeps between calls (host buffers, the node window, NCCL, device pools);
    ! collective: every process that made calls calls it, between calls (see pipevd.h).
    subroutine pipevd_release() bind(c, name='pipevd_release')
    end subroutine pipevd_release
  end interface
end module pipevd
