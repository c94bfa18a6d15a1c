// Bulge chasing on the host: the reference for the GPU kernel of issue 6.
//
// The band is copied into a working lower band storage wide enough for the bulge (2b - 1
// subdiagonals: a bulge fills the b x b block just below the band). Step (s,t) does what LAPACK
// dsb2st's kernels do for the lower triangle:
//   1. generate H(s,t) (dlarfg) from column c of the rows J = [first_row, first_row + length):
//      c = s for t = 0, the bulge's first column first_row - b for t >= 1;
//   2. apply H from the left to the rest of the bulge in rows J (columns c+1 .. first_row-1);
//   3. apply H from both sides to the diagonal block B(J, J);
//   4. apply H from the right to the rows below J (this creates the next bulge).
#include "host/bulge_chasing.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" void dlarfg_(const int* n, double* alpha, double* x, const int* incx, double* tau);

namespace pipevd::host {

BulgeBand::BulgeBand(const ReflectorLayout& layout, const double* ab, long ldab)
    : ld_(std::max(2L, 2 * layout.b)), a_(static_cast<std::size_t>(layout.n * ld_), 0.0) {
  const long n = layout.n;
  for (long j = 0; j < n; ++j)
    for (long i = j; i <= std::min(n - 1, j + layout.b); ++i)
      (*this)(i, j) = ab[(i - j) + j * ldab];
}

void chase_step(BulgeBand& a, const ReflectorLayout& layout, long s, long t, double* v,
                double& tau) {
  const long b = layout.b;
  const long first = layout.first_row(s, t);
  const long len = layout.length(s, t);
  const long c = t == 0 ? s : first - b;
  const long n = layout.n;
  std::vector<double> w(static_cast<std::size_t>(len));

  // 1. The reflector that annihilates B(first+1 .. first+len-1, c); column c of the band storage
  // is contiguous, so dlarfg works on it in place.
  const int ilen = static_cast<int>(len), one = 1;
  dlarfg_(&ilen, &a(first, c), &a(first + 1, c), &one, &tau);
  v[0] = 1.0;
  for (long i = 1; i < len; ++i) {
    v[i] = a(first + i, c);
    a(first + i, c) = 0.0;
  }
  for (long i = len; i < b; ++i) v[i] = 0.0;

  // 2. Left: the rest of the bulge, B(J, c+1 .. first-1) := H B(J, c+1 .. first-1).
  for (long j = c + 1; j < first; ++j) {
    double dot = 0.0;
    for (long i = 0; i < len; ++i) dot += v[i] * a(first + i, j);
    dot *= tau;
    for (long i = 0; i < len; ++i) a(first + i, j) -= dot * v[i];
  }

  // 3. Both sides: B(J,J) := H B(J,J) H = B - v w^T - w v^T with p = tau B v,
  // w = p - (tau/2)(v^T p) v (dlarfy's formula); only the lower triangle is stored.
  double vp = 0.0;
  for (long k = 0; k < len; ++k) {
    double p = 0.0;
    for (long i = 0; i < len; ++i) p += a.sym(first + k, first + i) * v[i];
    w[k] = tau * p;
    vp += v[k] * w[k];
  }
  const double alpha = -0.5 * tau * vp;
  for (long k = 0; k < len; ++k) w[k] += alpha * v[k];
  for (long j = 0; j < len; ++j)
    for (long i = j; i < len; ++i) a(first + i, first + j) -= v[i] * w[j] + w[i] * v[j];

  // 4. Right: rows below J, B(K, J) := B(K, J) H; it fills the b x len block (the next bulge).
  const long kend = std::min(n, first + len + b);
  for (long r = first + len; r < kend; ++r) {
    double dot = 0.0;
    for (long i = 0; i < len; ++i) dot += a(r, first + i) * v[i];
    dot *= tau;
    for (long i = 0; i < len; ++i) a(r, first + i) -= dot * v[i];
  }
}

namespace {

// Bulge chasing sweep after sweep; the reflectors go to U when given, else are dropped.
void chase_all(long n, long b, const double* ab, long ldab, double* d, double* e,
               ReflectorStore* U) {
  // A bandwidth past n-1 is the full lower triangle; the reflector layout uses the clamped one.
  const long bw = std::max(0L, std::min(b, n - 1));
  if (n < 0 || b < 0 || ldab < bw + 1)
    throw std::invalid_argument("bulge_chase: n = " + std::to_string(n) +
                                ", b = " + std::to_string(b) + ", ldab = " + std::to_string(ldab));
  const ReflectorLayout layout{n, bw};
  if (U) *U = ReflectorStore(n, bw);
  if (n == 0) return;

  BulgeBand a(layout, ab, ldab);
  std::vector<double> v(static_cast<std::size_t>(std::max(1L, bw)));
  double tau = 0.0;
  for (long s = 0; s < layout.sweeps(); ++s)
    for (long t = 0; t < layout.steps(s); ++t)
      if (U)
        chase_step(a, layout, s, t, U->vector(s, t), U->tau_of(s, t));
      else
        chase_step(a, layout, s, t, v.data(), tau);

  for (long i = 0; i < n; ++i) d[i] = a(i, i);
  for (long i = 0; i + 1 < n; ++i) e[i] = bw >= 1 ? a(i + 1, i) : 0.0;
}

}  // namespace

void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                 ReflectorStore& U) {
  chase_all(n, b, ab, ldab, d, e, &U);
}

void bulge_chase_values(long n, long b, const double* ab, long ldab, double* d, double* e) {
  chase_all(n, b, ab, ldab, d, e, nullptr);
}

}  // namespace pipevd::host
