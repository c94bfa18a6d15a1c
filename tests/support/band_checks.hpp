// Checks of a DBBR run read back to the host (band_readback.hpp), on the host backend: Q_s formed
// from its panels, and how far Q_s^H A Q_s is from the band.
#pragma once
#include <algorithm>
#include <cfloat>
#include <vector>

#include "core/scalar.hpp"
#include "host/host_backend.hpp"
#include "tests/support/band_readback.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd::test {

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
