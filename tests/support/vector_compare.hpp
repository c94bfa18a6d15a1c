// Host vectors for the tests: random inputs, and the comparisons they make (largest entry,
// largest difference to rounding, bitwise equality of a result computed twice).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

namespace pipevd::test {

// count values uniform in (-1, 1) from std::mt19937_64(seed); count < 0 gives none.
inline std::vector<double> random_vector(long count, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(std::max(0L, count)));
  for (double& x : v) x = u(gen);
  return v;
}

// count complex values, real and imaginary parts the pairs of random_vector(2 count, seed).
inline std::vector<std::complex<double>> random_complex_vector(long count, unsigned seed) {
  const std::vector<double> parts = random_vector(2 * count, seed);
  std::vector<std::complex<double>> v(static_cast<size_t>(std::max(0L, count)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = {parts[2 * i], parts[2 * i + 1]};
  return v;
}

// n x n symmetric in an ld x n array, random_vector(ld * n, seed) with its lower triangle
// mirrored (rows past n random too: they must stay untouched).
inline std::vector<double> random_symmetric(long n, long ld, unsigned seed) {
  std::vector<double> a = random_vector(ld * n, seed);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < j; ++i) a[i + j * ld] = a[j + i * ld];
  return a;
}

// max |x_i| (the modulus for complex entries).
template <class T>
double max_abs(const std::vector<T>& x) {
  double m = 0;
  for (const T& v : x) m = std::max(m, std::abs(v));
  return m;
}

// The Frobenius norm of the entries (real or complex).
template <class T>
double frobenius(const std::vector<T>& x) {
  double s = 0;
  for (const T& v : x) s += std::norm(v);
  return std::sqrt(s);
}

// max |x_i - y_i| (the modulus for complex entries); x and y must be of one size.
template <class T>
double max_abs_diff(const std::vector<T>& x, const std::vector<T>& y) {
  EXPECT_EQ(x.size(), y.size());
  double d = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}

// The same bits (operator== would call +0 and -0 equal, and NaN unequal to itself). An empty
// vector's data() may be null, which memcmp may not be given even for no bytes.
template <class T>
bool bitwise_equal(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

}  // namespace pipevd::test
