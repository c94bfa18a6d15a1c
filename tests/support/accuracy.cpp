#include "tests/support/accuracy.hpp"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, size_t, size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
             const int*, int*, const int*, int*, size_t, size_t);
}

namespace pipevd::test {
namespace {

double frobenius(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

}  // namespace

double residual(int n, const std::vector<double>& a, const std::vector<double>& z,
                const std::vector<double>& w) {
  if (n == 0) return 0;
  std::vector<double> r(static_cast<size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) r[i + size_t(j) * n] = z[i + size_t(j) * n] * w[j];
  const double one = 1, minus_one = -1;
  dgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, z.data(), &n, &minus_one, r.data(), &n, 1, 1);
  const double anorm = std::max(frobenius(a), DBL_MIN);
  return frobenius(r) / (anorm * n * DBL_EPSILON);
}

double orthogonality(int n, const std::vector<double>& z) {
  if (n == 0) return 0;
  std::vector<double> r(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) r[i + size_t(i) * n] = -1;
  const double one = 1;
  dgemm_("T", "N", &n, &n, &n, &one, z.data(), &n, z.data(), &n, &one, r.data(), &n, 1, 1);
  return frobenius(r) / (n * DBL_EPSILON);
}

double eigenvalue_difference(const std::vector<double>& w, const std::vector<double>& v) {
  double diff = 0, scale = DBL_MIN;
  for (size_t i = 0; i < v.size(); ++i) {
    diff = std::max(diff, std::fabs(w[i] - v[i]));
    scale = std::max(scale, std::fabs(v[i]));
  }
  if (w.size() != v.size()) return INFINITY;
  return diff / scale;
}

std::vector<double> symmetrize(int n, const std::vector<double>& a, char uplo) {
  const bool lower = std::toupper(static_cast<unsigned char>(uplo)) == 'L';
  std::vector<double> s(a.size());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool stored = lower ? i >= j : i <= j;
      s[i + size_t(j) * n] = stored ? a[i + size_t(j) * n] : a[j + size_t(i) * n];
    }
  return s;
}

std::vector<double> lapack_eigenvalues(int n, std::vector<double> a) {
  std::vector<double> w(n);
  if (n == 0) return w;
  int lwork = -1, liwork = -1, info = 0, iw = 0;
  double wq = 0;
  dsyevd_("N", "L", &n, a.data(), &n, w.data(), &wq, &lwork, &iw, &liwork, &info, 1, 1);
  lwork = static_cast<int>(wq);
  liwork = std::max(1, iw);
  std::vector<double> work(std::max(1, lwork));
  std::vector<int> iwork(liwork);
  dsyevd_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info,
          1, 1);
  return w;
}

}  // namespace pipevd::test
