// Checks of a band matrix and of a DBBR run read back to the host (band_readback.hpp): the band's
// eigenvalues by LAPACK, and on the host backend Q_s formed from the run's panels and how far
// Q_s^H A Q_s is from the band.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <complex>
#include <cstddef>
#include <vector>

#include "core/scalar.hpp"
#include "host/host_backend.hpp"
#include "tests/support/band_readback.hpp"
#include "tests/support/vector_compare.hpp"

extern "C" {
void dsbev_(const char*, const char*, const int*, const int*, double*, const int*, double*, double*,
            const int*, double*, int*, std::size_t, std::size_t);
void zhbev_(const char*, const char*, const int*, const int*, std::complex<double>*, const int*,
            double*, std::complex<double>*, const int*, std::complex<double>*, double*, int*,
            std::size_t, std::size_t);
}

namespace pipevd::test {

// The eigenvalues, ascending, of the n x n band matrix of bandwidth kd in LAPACK's lower band
// storage `ab` (leading dimension ldab), by its band solver.
inline std::vector<double> band_eigenvalues(long n, long kd, long ldab, std::vector<double> ab) {
  const int ni = static_cast<int>(n), k = static_cast<int>(kd), ld = static_cast<int>(ldab);
  const int one = 1;
  std::vector<double> w(n), work(std::max(1L, 3 * n - 2));
  int info = 0;
  double z = 0;
  dsbev_("N", "L", &ni, &k, ab.data(), &ld, w.data(), &z, &one, work.data(), &info, 1, 1);
  EXPECT_EQ(info, 0);
  return w;
}
inline std::vector<double> band_eigenvalues(long n, long kd, long ldab,
                                            std::vector<std::complex<double>> ab) {
  const int ni = static_cast<int>(n), k = static_cast<int>(kd), ld = static_cast<int>(ldab);
  const int one = 1;
  std::vector<double> w(n), rwork(std::max(1L, 3 * n - 2));
  std::vector<std::complex<double>> work(n);
  int info = 0;
  std::complex<double> z = 0;
  zhbev_("N", "L", &ni, &k, ab.data(), &ld, w.data(), &z, &one, work.data(), rwork.data(), &info, 1,
         1);
  EXPECT_EQ(info, 0);
  return w;
}

// Q_s = I (I - W_0 Y_0^H) (I - W_1 Y_1^H) ..., panel by panel.
template <class T>
std::vector<T> q_of(HostBackend& be, long n, const BandReadback<T>& r) {
  std::vector<T> q(n * n, T(0)), t(n * r.b);
  for (long i = 0; i < n; ++i) q[i + i * n] = 1.0;
  for (std::size_t p = 0; p < r.w.size(); ++p) {
    const long row0 = r.row0[p], m = n - row0;
    be.gemm('N', 'N', n, r.b, m, 1.0, q.data() + row0 * n, n, r.w[p].data(), m, 0.0, t.data(), n);
    be.gemm('N', Scalar<T>::adjoint, n, m, r.b, -1.0, t.data(), n, r.y[p].data(), m, 1.0,
            q.data() + row0 * n, n);
  }
  return q;
}

// ||Q^H A Q - B||_F / (||A||_F n eps), B from the band storage (lower band, Hermitian).
template <class T>
double band_residual(HostBackend& be, long n, const std::vector<T>& a, const BandReadback<T>& r,
                     const std::vector<T>& q) {
  std::vector<T> aq(n * n), c(n * n);
  be.gemm('N', 'N', n, n, n, 1.0, a.data(), n, q.data(), n, 0.0, aq.data(), n);
  be.gemm(Scalar<T>::adjoint, 'N', n, n, n, 1.0, q.data(), n, aq.data(), n, 0.0, c.data(), n);
  const long ldab = r.b + 1;
  for (long j = 0; j < n; ++j)
    for (long i = j; i <= std::min(n - 1, j + r.b); ++i) {
      const T v = r.band[(i - j) + j * ldab];
      c[i + j * n] -= v;
      if (i != j) c[j + i * n] -= conjugate(v);
    }
  return frobenius(c) / (frobenius(a) * n * DBL_EPSILON);
}

}  // namespace pipevd::test
