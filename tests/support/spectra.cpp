#include "tests/support/spectra.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>

extern "C" {
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*,
             const int*, int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, std::size_t, std::size_t);
}

namespace pipevd::test {

const char* to_string(Spectrum s) {
  switch (s) {
    case Spectrum::Cluster0:
      return "cluster0";
    case Spectrum::Cluster1:
      return "cluster1";
    case Spectrum::Geometric:
      return "geometric";
    case Spectrum::Arithmetic:
      return "arithmetic";
    case Spectrum::Normal:
      return "normal";
    case Spectrum::Uniform:
      return "uniform";
  }
  return "?";
}

std::vector<double> eigenvalues_of(Spectrum s, long n, unsigned seed, double cond, double max) {
  std::vector<double> d(n);
  std::mt19937_64 gen(seed);
  for (long i = 0; i < n; ++i) {
    const double x = n > 1 ? static_cast<double>(i) / (n - 1) : 0.0;
    switch (s) {
      case Spectrum::Cluster0:
        d[i] = i == 0 ? max : max / cond;
        break;
      case Spectrum::Cluster1:
        d[i] = i == n - 1 ? max / cond : max;
        break;
      case Spectrum::Geometric:
        d[i] = max * std::pow(cond, -x);
        break;
      case Spectrum::Arithmetic:
        d[i] = max * (1 - x * (1 - 1 / cond));
        break;
      case Spectrum::Normal:
        d[i] = std::normal_distribution<double>(0, 1)(gen);
        break;
      case Spectrum::Uniform:
        d[i] = std::uniform_real_distribution<double>(0, 1)(gen);
        break;
    }
  }
  std::sort(d.begin(), d.end());
  return d;
}

std::vector<double> matrix_with_eigenvalues(const std::vector<double>& lambda, unsigned seed) {
  const int n = static_cast<int>(lambda.size());
  std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0);
  if (n == 0) return a;
  // Q from the QR factorization of a matrix with independent N(0, 1) entries.
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + 1);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> q(a.size()), tau(n);
  for (double& v : q) v = normal(gen);
  int info = 0, lwork = -1;
  double query = 0;
  dgeqrf_(&n, &n, q.data(), &n, tau.data(), &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(lwork);
  dgeqrf_(&n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  lwork = -1;
  dorgqr_(&n, &n, &n, q.data(), &n, tau.data(), &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(query));
  work.assign(lwork, 0.0);
  dorgqr_(&n, &n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  // A = (Q diag(lambda)) Q^T, then exactly symmetric.
  std::vector<double> ql(q);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) ql[i + static_cast<std::size_t>(j) * n] *= lambda[j];
  const double one = 1, zero = 0;
  dgemm_("N", "T", &n, &n, &n, &one, ql.data(), &n, q.data(), &n, &zero, a.data(), &n, 1, 1);
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i) {
      const std::size_t lo = i + static_cast<std::size_t>(j) * n,
                        up = j + static_cast<std::size_t>(i) * n;
      a[lo] = a[up] = 0.5 * (a[lo] + a[up]);
    }
  return a;
}

}  // namespace pipevd::test
