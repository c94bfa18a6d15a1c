// The models' check: Q = I - Y T Y^T from a panel's reflectors (Y unit lower trapezoidal from the
// factored panel s, T upper triangular kk x kk), applied as Q then Q^T to each column y of Y;
// max |Q^T Q y - y| / max(|y|, 1) over the columns, and the column where it is largest.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

inline double orthogonality_loss(const std::vector<double>& s, const std::vector<double>& t, long m,
                                 int kk, int* worst_column) {
  using V = std::vector<double>;
  V y(m * kk, 0.0);
  for (int c = 0; c < kk; ++c)
    for (long i = 0; i < m; ++i) y[i + c * m] = i > c ? s[i + c * m] : (i == c ? 1 : 0);
  auto apply_q = [&](V& x, bool trans) {
    V a(kk), b(kk);
    for (int c = 0; c < kk; ++c) {
      double d = 0;
      for (long i = 0; i < m; ++i) d += y[i + c * m] * x[i];
      a[c] = d;
    }
    for (int r = 0; r < kk; ++r) {
      double d = 0;
      for (int c = 0; c < kk; ++c) d += (trans ? t[c + r * kk] : t[r + c * kk]) * a[c];
      b[r] = d;
    }
    for (long i = 0; i < m; ++i) {
      double d = 0;
      for (int c = 0; c < kk; ++c) d += y[i + c * m] * b[c];
      x[i] -= d;
    }
  };
  double worst = 0;
  *worst_column = -1;
  for (int c = 0; c < kk; ++c) {
    V x(y.begin() + c * m, y.begin() + (c + 1) * m);
    const V x0 = x;
    double nx = 0;
    for (double v : x0) nx += v * v;
    nx = std::sqrt(nx);
    apply_q(x, false);
    apply_q(x, true);
    double d = 0;
    for (long i = 0; i < m; ++i) d = std::fmax(d, std::fabs(x[i] - x0[i]));
    d /= std::max(nx, 1.0);
    if (d > worst) {
      worst = d;
      *worst_column = c;
    }
  }
  return worst;
}
