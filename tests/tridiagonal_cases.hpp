// Symmetric tridiagonal test matrices for the eigenvalue solvers: (d, e) with e of length n - 1.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace pipevd::testing_tridiagonal {

struct Tridiagonal {
  std::vector<double> d, e;
};

inline Tridiagonal random_tridiagonal(long n, unsigned seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Tridiagonal t{std::vector<double>(n), std::vector<double>(std::max(0L, n - 1))};
  for (double& x : t.d) x = scale * u(gen);
  for (double& x : t.e) x = scale * u(gen);
  return t;
}

// Second difference matrix tridiag(-1, 2, -1): eigenvalues 2 - 2 cos(k pi / (n + 1)).
inline Tridiagonal toeplitz(long n) {
  return {std::vector<double>(n, 2.0), std::vector<double>(std::max(0L, n - 1), -1.0)};
}

// Wilkinson's W+: d_i = |i - (n - 1) / 2|, e = 1 (pairs of nearly equal eigenvalues).
inline Tridiagonal wilkinson(long n) {
  Tridiagonal t{std::vector<double>(n), std::vector<double>(std::max(0L, n - 1), 1.0)};
  for (long i = 0; i < n; ++i) t.d[i] = std::fabs(i - (n - 1) / 2.0);
  return t;
}

// Copies of W+_21 glued by `glue`: clusters of n / 21 nearly identical eigenvalues.
inline Tridiagonal glued_wilkinson(long n, double glue = 1e-10) {
  Tridiagonal t{std::vector<double>(n), std::vector<double>(std::max(0L, n - 1), 1.0)};
  for (long i = 0; i < n; ++i) t.d[i] = std::fabs(i % 21 - 10.0);
  for (long i = 0; i + 1 < n; ++i)
    if ((i + 1) % 21 == 0) t.e[i] = glue;
  return t;
}

// Entries graded from 1e-150 to 1e150 along the diagonal.
inline Tridiagonal graded(long n) {
  Tridiagonal t{std::vector<double>(n), std::vector<double>(std::max(0L, n - 1))};
  for (long i = 0; i < n; ++i) t.d[i] = std::pow(10.0, -150.0 + 300.0 * i / std::max(1L, n - 1));
  for (long i = 0; i + 1 < n; ++i) t.e[i] = 0.5 * std::sqrt(t.d[i] * t.d[i + 1]);
  return t;
}

inline Tridiagonal make_case(const std::string& kind, long n) {
  if (kind == "random") return random_tridiagonal(n, 7u + static_cast<unsigned>(n));
  if (kind == "random_1e-300") return random_tridiagonal(n, 11u, 1e-300);
  if (kind == "random_1e300") return random_tridiagonal(n, 13u, 1e300);
  if (kind == "random_1e308") {  // max|T| above 2^1023, the eigenvalues still below DBL_MAX
    Tridiagonal t = random_tridiagonal(n, 19u, 1.5e308);
    for (double& x : t.e) x *= 1.0 / 16;
    return t;
  }
  if (kind == "random_1e-310") return random_tridiagonal(n, 23u, 1e-310);  // subnormal entries
  if (kind == "toeplitz") return toeplitz(n);
  if (kind == "wilkinson") return wilkinson(n);
  if (kind == "glued_wilkinson") return glued_wilkinson(n);
  if (kind == "identical_diagonal")
    return {std::vector<double>(n, 3.25), std::vector<double>(std::max(0L, n - 1), 0.0)};
  if (kind == "zero_offdiagonal") {
    Tridiagonal t = random_tridiagonal(n, 17u);
    std::fill(t.e.begin(), t.e.end(), 0.0);
    return t;
  }
  if (kind == "graded") return graded(n);
  return {};
}

// max |T| over the Gershgorin discs, and a quarter of it (finite even where T's entries are near
// DBL_MAX and the norm itself overflows): bounds are formed as (c * eps * 4) * quarter.
inline double gershgorin_quarter(const Tridiagonal& t) {
  const long n = static_cast<long>(t.d.size());
  double m = 0;
  for (long i = 0; i < n; ++i)
    m = std::max(m, 0.25 * std::fabs(t.d[i]) + (i > 0 ? 0.25 * std::fabs(t.e[i - 1]) : 0.0) +
                        (i + 1 < n ? 0.25 * std::fabs(t.e[i]) : 0.0));
  return m;
}
inline double gershgorin_norm(const Tridiagonal& t) { return 4 * gershgorin_quarter(t); }

}  // namespace pipevd::testing_tridiagonal
