// pdsyevd_ as a relinked application reaches it (libpipevd ahead of ScaLAPACK): include only in
// tests linked with pipevd::pipevd.
#pragma once
#include <cstddef>
#include <vector>

extern "C" void pdsyevd_(const char*, const char*, const int*, double*, const int*, const int*,
                         const int*, double*, double*, const int*, const int*, const int*, double*,
                         const int*, int*, const int*, int*, size_t, size_t);

namespace pipevd::test {

// The interposed pdsyevd_ with a workspace query first; returns INFO.
inline int call_pdsyevd(char jobz, char uplo, int n, double* a, int ia, int ja, const int* desca,
                        double* w, double* z, int iz, int jz, const int* descz) {
  int info = 0, lwork = -1, liwork = 1, iwq = 0;
  double wq = 0;
  pdsyevd_(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, &wq, &lwork, &iwq, &liwork,
           &info, 1, 1);
  if (info != 0) return info;
  lwork = static_cast<int>(wq);
  liwork = iwq;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  pdsyevd_(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, work.data(), &lwork,
           iwork.data(), &liwork, &info, 1, 1);
  return info;
}

}  // namespace pipevd::test
