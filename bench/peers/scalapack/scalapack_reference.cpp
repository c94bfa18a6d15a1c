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
  fn(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, work.data(), &lwork, rwork.data(),
     &lrwork, iwork.data(), &liwork, &info, 1, 1);
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
