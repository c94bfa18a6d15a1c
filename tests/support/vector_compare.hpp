// Host vectors for the GPU-against-host tests: random inputs, and the comparisons they make
// (largest entry, largest difference to rounding, bitwise equality of a result computed twice).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

inline double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::fabs(v));
  return m;
}

// max |x_i - y_i|; x and y must be of one size.
inline double max_abs_diff(const std::vector<double>& x, const std::vector<double>& y) {
  EXPECT_EQ(x.size(), y.size());
  double d = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

inline bool bitwise_equal(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
}

}  // namespace pipevd::test
