// BC-back on the host: the reference for the BLAS2 BC-back kernel (pipelined paper §4.3).
//
// Each reflector is applied with plain loops whose arithmetic for one row (right side) or one
// column (left side) does not depend on how many rows/columns are processed, so a row block gives
// bitwise the rows of the whole product and every valid order gives bitwise the same result.
#include "host/bc_back.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/scalar.hpp"

namespace pipevd::host {
namespace {

// X(:, first .. first+len-1) := X(:, first ..) * (I - tau v v^H), X m rows; w holds m elements.
template <class T>
void apply_right(long m, long first, long len, const T* v, T tau, T* x, long ldx, T* w) {
  if (tau == 0.0) return;
  const T* x0 = x + first * ldx;
  for (long r = 0; r < m; ++r) w[r] = x0[r];  // v[0] = 1
  for (long i = 1; i < len; ++i) {
    const T* xi = x0 + i * ldx;
    const T vi = v[i];
    for (long r = 0; r < m; ++r) w[r] += vi * xi[r];
  }
  for (long i = 0; i < len; ++i) {
    T* xi = x + (first + i) * ldx;
    const T c = tau * conjugate(v[i]);
    for (long r = 0; r < m; ++r) xi[r] -= c * w[r];
  }
}

// X(first .. first+len-1, :) := (I - tau v v^T) X(first .., :), X with m columns.
void apply_left(long m, long first, long len, const double* v, double tau, double* x, long ldx) {
  if (tau == 0.0) return;
  for (long col = 0; col < m; ++col) {
    double* xc = x + col * ldx + first;
    double dot = xc[0];
    for (long i = 1; i < len; ++i) dot += v[i] * xc[i];
    dot *= tau;
    for (long i = 0; i < len; ++i) xc[i] -= dot * v[i];
  }
}

template <class T>
void apply_reflectors(const BasicReflectorStore<T>& U, long m, T* x, long ldx, long group) {
  const ReflectorLayout& layout = U.layout;
  if (m < 0 || (m > 0 && ldx < m))
    throw std::invalid_argument("apply_bc_back: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx));
  if (m == 0 || layout.count() == 0) return;
  if (group <= 0) group = layout.b;
  std::vector<T> w(static_cast<size_t>(m));
  for_each_in_bc_back_order(layout, group, [&](long s, long t) {
    apply_right(m, layout.first_row(s, t), layout.length(s, t), U.vector(s, t), U.tau_of(s, t), x,
                ldx, w.data());
  });
}

}  // namespace

void apply_bc_back(const ReflectorStore& U, long m, double* x, long ldx, long group) {
  apply_reflectors(U, m, x, ldx, group);
}

void apply_bc_back(const ComplexReflectorStore& U, long m, Complex* x, long ldx, long group) {
  apply_reflectors(U, m, x, ldx, group);
  if (m <= 0 || U.phase.empty()) return;
  for (long j = 0; j < U.layout.n; ++j)
    for (long r = 0; r < m; ++r) x[r + j * ldx] *= U.phase[static_cast<std::size_t>(j)];
}

void apply_bc_back_left(const ReflectorStore& U, long m, double* x, long ldx) {
  const ReflectorLayout& layout = U.layout;
  if (m < 0 || (m > 0 && ldx < std::max(1L, layout.n)))
    throw std::invalid_argument("apply_bc_back_left: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx));
  if (m == 0) return;
  // Q_b X = H(0,0) (H(0,1) (... (H_last X))): the last generated reflector first.
  for (long s = layout.sweeps() - 1; s >= 0; --s)
    for (long t = layout.steps(s) - 1; t >= 0; --t)
      apply_left(m, layout.first_row(s, t), layout.length(s, t), U.vector(s, t), U.tau_of(s, t), x,
                 ldx);
}

}  // namespace pipevd::host
