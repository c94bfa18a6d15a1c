#include "bench/peers/scalapack/scalapack_reference.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace pipevd::test {

namespace {

void* scalapack_symbol(const char* name) {
  void* lib = dlopen(PIPEVD_SCALAPACK_LIBRARY_FILE, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  if (!lib) lib = dlopen(PIPEVD_SCALAPACK_LIBRARY_FILE, RTLD_NOW | RTLD_GLOBAL);
  void* sym = lib ? dlsym(lib, name) : nullptr;
  if (!sym) {
    std::fprintf(stderr, "cannot load ScaLAPACK's %s from %s\n", name,
                 PIPEVD_SCALAPACK_LIBRARY_FILE);
    std::abort();
  }
  return sym;
}

// The number of elements of a matrix's local array that a process owns (LLD_ * (columns - 1) +
// rows: the last column need not be LLD_ long); zero off the grid.
long local_elements(const int* desc) {
  using namespace scalapack;
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  blacs_gridinfo_(&desc[CTXT_], &nprow, &npcol, &myrow, &mycol);
  if (myrow < 0 || mycol < 0) return 0;
  const long rows = numroc_(&desc[M_], &desc[MB_], &myrow, &desc[RSRC_], &nprow);
  const long cols = numroc_(&desc[N_], &desc[NB_], &mycol, &desc[CSRC_], &npcol);
  return rows > 0 && cols > 0 ? static_cast<long>(desc[LLD_]) * (cols - 1) + rows : 0;
}

}  // namespace

pdsyevd_fn scalapack_pdsyevd() {
  static pdsyevd_fn fn = reinterpret_cast<pdsyevd_fn>(scalapack_symbol("pdsyevd_"));
  return fn;
}

pzheevd_fn scalapack_pzheevd() {
  static pzheevd_fn fn = reinterpret_cast<pzheevd_fn>(scalapack_symbol("pzheevd_"));
  return fn;
}

int call_scalapack_pzheevd(char jobz, char uplo, int n, std::complex<double>* a, int ia, int ja,
                           const int* desca, double* w, std::complex<double>* z, int iz, int jz,
                           const int* descz) {
  const pzheevd_fn fn = scalapack_pzheevd();
  int info = 0, lwork = -1, lrwork = -1, liwork = -1, iwq = 0;
  std::complex<double> wq = 0;
  double rwq = 0;
  fn(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, &wq, &lwork, &rwq, &lrwork, &iwq,
     &liwork, &info, 1, 1);
  if (info != 0) return info;
  lwork = std::max(1, static_cast<int>(wq.real()));
  lrwork = std::max(1, static_cast<int>(rwq));
  liwork = std::max(1, iwq);
  std::vector<std::complex<double>> work(lwork);
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(liwork);
  // PZHEEVD runs on a copy of A's local array followed by one spare column (LLD_ elements), copied
  // back afterwards. OpenBLAS's x86_64 ZGEMV kernel for TRANS = 'N' (zgemv_n_4.c) as GCC 12 or
  // later vectorizes it reads X(1 + N*INCX), one stride past the last element of X, when M mod 4 =
  // 2: OpenMathLib/OpenBLAS#4013, in 0.3.21 (Debian 12's) to 0.3.23, fixed in 0.3.24 by #4014.
  // With UPLO = 'U', PZLATRD (under PZHETRD; ScaLAPACK 2.2.1's pzlatrd.f, its second PZGEMV of
  // the upper loop) passes a row of sub(A) that ends in A's last local column as X, so that read
  // lands up to LLD_ elements past the local array, and where no page is mapped there the reference
  // dies with SIGSEGV. WORK, RWORK, IWORK and Z are not read past.
  const long elements = local_elements(desca);
  std::vector<std::complex<double>> a_padded(elements + std::max(1, desca[scalapack::LLD_]));
  std::copy(a, a + elements, a_padded.begin());
  fn(&jobz, &uplo, &n, a_padded.data(), &ia, &ja, desca, w, z, &iz, &jz, descz, work.data(), &lwork,
     rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
  std::copy(a_padded.begin(), a_padded.begin() + elements, a);
  return info;
}

int call_scalapack_pdsyevd(char jobz, char uplo, int n, double* a, int ia, int ja, const int* desca,
                           double* w, double* z, int iz, int jz, const int* descz) {
  const pdsyevd_fn fn = scalapack_pdsyevd();
  int info = 0, lwork = -1, liwork = 1, iwq = 0;
  double wq = 0;
  fn(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, &wq, &lwork, &iwq, &liwork, &info,
     1, 1);
  if (info != 0) return info;
  lwork = static_cast<int>(wq);
  liwork = std::max(1, iwq);
  std::vector<double> work(std::max(1, lwork));
  std::vector<int> iwork(liwork);
  fn(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, work.data(), &lwork, iwork.data(),
     &liwork, &info, 1, 1);
  return info;
}

}  // namespace pipevd::test
