// Bulge chasing on the host: the reference for the GPU kernel of issue 6.
//
// The band is copied into a working lower band storage wide enough for the bulge (2b - 1
// subdiagonals: a bulge fills the b x b block just below the band). Step (s,t) does what LAPACK
// dsb2st's (zhb2st's) kernels do for the lower triangle:
//   1. generate H(s,t) (dlarfg, zlarfg) from column c of the rows J = [first_row, first_row +
//      length): c = s for t = 0, the bulge's first column first_row - b for t >= 1;
//   2. apply H^H from the left to the rest of the bulge in rows J (columns c+1 .. first_row-1);
//   3. apply H^H B H to the diagonal block B(J, J);
//   4. apply H from the right to the rows below J (this creates the next bulge).
// For real T, conjugate() is the identity and the arithmetic is exactly the real algorithm's.
#include "host/bulge_chasing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/scalar.hpp"

extern "C" void dlarfg_(const int* n, double* alpha, double* x, const int* incx, double* tau);
extern "C" void zlarfg_(const int* n, std::complex<double>* alpha, std::complex<double>* x,
                        const int* incx, std::complex<double>* tau);

namespace pipevd::host {
namespace {

void larfg(int n, double* alpha, double* x, double* tau) {
  const int one = 1;
  dlarfg_(&n, alpha, x, &one, tau);
}
void larfg(int n, Complex* alpha, Complex* x, Complex* tau) {
  const int one = 1;
  zlarfg_(&n, alpha, x, &one, tau);
}

// A Hermitian matrix's diagonal is real: rounding's imaginary parts are dropped (as zhetrd does).
double real_part(double x) { return x; }
Complex real_part(Complex x) { return x.real(); }

}  // namespace

template <class T>
BasicBulgeBand<T>::BasicBulgeBand(const ReflectorLayout& layout, const T* ab, long ldab)
    : ld_(std::max(2L, 2 * layout.b)), a_(static_cast<std::size_t>(layout.n * ld_), T(0)) {
  const long n = layout.n;
  for (long j = 0; j < n; ++j) {
    (*this)(j, j) = real_part(ab[j * ldab]);
    for (long i = j + 1; i <= std::min(n - 1, j + layout.b); ++i)
      (*this)(i, j) = ab[(i - j) + j * ldab];
  }
}

template <class T>
T BasicBulgeBand<T>::herm(long i, long j) const {
  const auto at = [&](long r, long c) { return a_[static_cast<std::size_t>((r - c) + c * ld_)]; };
  return i >= j ? at(i, j) : conjugate(at(j, i));
}

template <class T>
void chase_step(BasicBulgeBand<T>& a, const ReflectorLayout& layout, long s, long t, T* v, T& tau) {
  const long b = layout.b;
  const long first = layout.first_row(s, t);
  const long len = layout.length(s, t);
  const long c = t == 0 ? s : first - b;
  const long n = layout.n;
  std::vector<T> w(static_cast<std::size_t>(len));

  // 1. The reflector that annihilates B(first+1 .. first+len-1, c); column c of the band storage
  // is contiguous, so larfg works on it in place (beta real for complex T).
  larfg(static_cast<int>(len), &a(first, c), &a(first + 1, c), &tau);
  v[0] = 1.0;
  for (long i = 1; i < len; ++i) {
    v[i] = a(first + i, c);
    a(first + i, c) = 0.0;
  }
  for (long i = len; i < b; ++i) v[i] = 0.0;

  // 2. Left: the rest of the bulge, B(J, c+1 .. first-1) := H^H B(J, c+1 .. first-1).
  const T tau_h = conjugate(tau);
  for (long j = c + 1; j < first; ++j) {
    T dot = 0.0;
    for (long i = 0; i < len; ++i) dot += conjugate(v[i]) * a(first + i, j);
    dot *= tau_h;
    for (long i = 0; i < len; ++i) a(first + i, j) -= dot * v[i];
  }

  // 3. Both sides: B(J,J) := H^H B(J,J) H = B - v w^H - w v^H with p = tau B v,
  // w = p - (conj(tau)/2)(v^H p) v (dlarfy's formula, zlarfy's with tau conjugated); only the
  // lower triangle is stored.
  T vp = 0.0;
  for (long k = 0; k < len; ++k) {
    T p = 0.0;
    for (long i = 0; i < len; ++i) p += a.herm(first + k, first + i) * v[i];
    w[k] = tau * p;
    vp += conjugate(v[k]) * w[k];
  }
  const T alpha = -0.5 * tau_h * vp;
  for (long k = 0; k < len; ++k) w[k] += alpha * v[k];
  for (long j = 0; j < len; ++j)
    for (long i = j; i < len; ++i)
      a(first + i, first + j) -= v[i] * conjugate(w[j]) + w[i] * conjugate(v[j]);
  if constexpr (is_complex_v<T>)
    for (long j = 0; j < len; ++j) a(first + j, first + j) = real_part(a(first + j, first + j));

  // 4. Right: rows below J, B(K, J) := B(K, J) H; it fills the b x len block (the next bulge).
  const long kend = std::min(n, first + len + b);
  for (long r = first + len; r < kend; ++r) {
    T dot = 0.0;
    for (long i = 0; i < len; ++i) dot += a(r, first + i) * v[i];
    dot *= tau;
    for (long i = 0; i < len; ++i) a(r, first + i) -= dot * conjugate(v[i]);
  }
}

template class BasicBulgeBand<double>;
template class BasicBulgeBand<Complex>;
template void chase_step(BasicBulgeBand<double>&, const ReflectorLayout&, long, long, double*,
                         double&);
template void chase_step(BasicBulgeBand<Complex>&, const ReflectorLayout&, long, long, Complex*,
                         Complex&);

namespace {

// T's subdiagonal from the chased band: real T keeps its entries (signs included); a Hermitian
// one's are made real by D (phase, when given): D(0,0) = 1, D(j+1,j+1) = D(j,j) e_j / |e_j|, so
// that (D^H T D)(j+1, j) = |e_j|.
void subdiagonal(BasicBulgeBand<double>& a, long n, long bw, double* e, std::vector<double>*) {
  for (long i = 0; i + 1 < n; ++i) e[i] = bw >= 1 ? a(i + 1, i) : 0.0;
}
void subdiagonal(BasicBulgeBand<Complex>& a, long n, long bw, double* e,
                 std::vector<Complex>* phase) {
  if (phase) phase->assign(static_cast<std::size_t>(n), Complex(1.0));
  for (long i = 0; i + 1 < n; ++i) {
    const Complex ei = bw >= 1 ? a(i + 1, i) : 0.0;
    e[i] = std::abs(ei);
    if (phase) (*phase)[i + 1] = e[i] == 0.0 ? (*phase)[i] : (*phase)[i] * (ei / e[i]);
  }
}

// Bulge chasing sweep after sweep; the reflectors go to U when given, else are dropped.
template <class T>
void chase_all(long n, long b, const T* ab, long ldab, double* d, double* e,
               BasicReflectorStore<T>* U) {
  // A bandwidth past n-1 is the full lower triangle; the reflector layout uses the clamped one.
  const long bw = std::max(0L, std::min(b, n - 1));
  if (n < 0 || b < 0 || ldab < bw + 1)
    throw std::invalid_argument("bulge_chase: n = " + std::to_string(n) +
                                ", b = " + std::to_string(b) + ", ldab = " + std::to_string(ldab));
  const ReflectorLayout layout{n, bw};
  if (U) *U = BasicReflectorStore<T>(n, bw);
  if (n == 0) return;

  BasicBulgeBand<T> a(layout, ab, ldab);
  std::vector<T> v(static_cast<std::size_t>(std::max(1L, bw)));
  T tau = 0.0;
  for (long s = 0; s < layout.sweeps(); ++s)
    for (long t = 0; t < layout.steps(s); ++t)
      if (U)
        chase_step(a, layout, s, t, U->vector(s, t), U->tau_of(s, t));
      else
        chase_step(a, layout, s, t, v.data(), tau);

  for (long i = 0; i < n; ++i) d[i] = std::real(a(i, i));
  subdiagonal(a, n, bw, e, U ? &U->phase : nullptr);
}

}  // namespace

void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                 ReflectorStore& U) {
  chase_all(n, b, ab, ldab, d, e, &U);
}

void bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                 ComplexReflectorStore& U) {
  chase_all(n, b, ab, ldab, d, e, &U);
}

void bulge_chase_values(long n, long b, const double* ab, long ldab, double* d, double* e) {
  chase_all<double>(n, b, ab, ldab, d, e, nullptr);
}

}  // namespace pipevd::host
