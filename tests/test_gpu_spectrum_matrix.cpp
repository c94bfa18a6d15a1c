// pipevd-bench's GPU formation of a prescribed spectrum's matrix (bench/gpu_spectrum_matrix)
// against what it must be: exactly symmetric (Hermitian with a real diagonal), its eigenvalues by
// LAPACK (dsyevd, zheevd) the spectrum, its Frobenius norm the spectrum's; the same seed the same
// bits, another seed other bits. Real and complex, at even and odd n.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <tuple>
#include <vector>

#include "bench/gpu_spectrum_matrix.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/fresh_seed.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/spectra.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd::test {
namespace {

using Case = std::tuple<Spectrum, long>;

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

long double sum_of_squares(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += static_cast<long double>(x) * x;
  return s;
}
long double sum_of_squares(const std::vector<Complex>& v) {
  long double s = 0;
  for (const Complex& x : v) s += static_cast<long double>(std::norm(x));
  return s;
}

// The LAPACK eigenvalues (ascending) of `a` against the sorted spectrum, to 1e-12 max |lambda|;
// ||A||_F^2 against sum lambda^2, to 1e-12 relative.
template <class T>
void expect_spectrum(const std::vector<T>& a, const std::vector<double>& w,
                     const std::vector<double>& lambda) {
  const double scale = max_abs(lambda);
  ASSERT_EQ(w.size(), lambda.size());
  double worst = 0;
  for (std::size_t i = 0; i < w.size(); ++i) worst = std::max(worst, std::abs(w[i] - lambda[i]));
  EXPECT_LE(worst, 1e-12 * scale) << "largest eigenvalue error, max |lambda| = " << scale;
  const long double want = sum_of_squares(lambda), got = sum_of_squares(a);
  EXPECT_LE(std::abs(static_cast<double>((got - want) / want)), 1e-12)
      << "||A||_F^2 = " << static_cast<double>(got)
      << ", sum lambda^2 = " << static_cast<double>(want);
}

class GpuSpectrumMatrix : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    seed_ = static_cast<unsigned>(fresh_seed());
    n_ = std::get<1>(GetParam());
    lambda_ = eigenvalues_of(std::get<0>(GetParam()), n_, seed_);  // ascending
  }
  unsigned seed_ = 0;
  long n_ = 0;
  std::vector<double> lambda_;
};

TEST_P(GpuSpectrumMatrix, RealIsExactlySymmetricWithTheSpectrum) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const std::vector<double> a = bench::gpu_matrix_with_eigenvalues(lambda_, seed_);
  ASSERT_EQ(static_cast<long>(a.size()), n_ * n_);
  long asymmetric = 0, non_finite = 0;
  for (long j = 0; j < n_; ++j)
    for (long i = 0; i < n_; ++i) {
      non_finite += !std::isfinite(a[i + j * n_]);
      asymmetric += a[i + j * n_] != a[j + i * n_];
    }
  ASSERT_EQ(non_finite, 0);
  EXPECT_EQ(asymmetric, 0) << "entries with A(i, j) != A(j, i)";
  expect_spectrum(a, lapack_eigenvalues(static_cast<int>(n_), a), lambda_);
}

TEST_P(GpuSpectrumMatrix, ComplexIsExactlyHermitianWithTheSpectrum) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const std::vector<Complex> a = bench::gpu_hermitian_with_eigenvalues(lambda_, seed_);
  ASSERT_EQ(static_cast<long>(a.size()), n_ * n_);
  long non_hermitian = 0, non_finite = 0, complex_diagonal = 0;
  for (long j = 0; j < n_; ++j) {
    complex_diagonal += a[j + j * n_].imag() != 0.0;
    for (long i = 0; i < n_; ++i) {
      non_finite += !std::isfinite(a[i + j * n_].real()) || !std::isfinite(a[i + j * n_].imag());
      non_hermitian += a[i + j * n_] != std::conj(a[j + i * n_]);
    }
  }
  ASSERT_EQ(non_finite, 0);
  EXPECT_EQ(non_hermitian, 0) << "entries with A(i, j) != conj(A(j, i))";
  EXPECT_EQ(complex_diagonal, 0) << "diagonal entries with a nonzero imaginary part";
  expect_spectrum(a, lapack_hermitian_eigenvalues(static_cast<int>(n_), a), lambda_);
}

INSTANTIATE_TEST_SUITE_P(Spectra, GpuSpectrumMatrix,
                         ::testing::Combine(::testing::Values(Spectrum::Cluster0, Spectrum::Uniform,
                                                              Spectrum::Geometric),
                                            ::testing::Values(300L, 1001L, 2000L)),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_n" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(GpuSpectrumMatrixSeed, SameSeedSameBitsOtherSeedOtherBits) {
  const unsigned seed = static_cast<unsigned>(fresh_seed());
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> lambda = eigenvalues_of(Spectrum::Uniform, 1001, seed);
  const std::vector<double> a = bench::gpu_matrix_with_eigenvalues(lambda, seed);
  EXPECT_TRUE(bitwise_equal(a, bench::gpu_matrix_with_eigenvalues(lambda, seed)));
  EXPECT_FALSE(bitwise_equal(a, bench::gpu_matrix_with_eigenvalues(lambda, seed + 1)));
  const std::vector<Complex> h = bench::gpu_hermitian_with_eigenvalues(lambda, seed);
  EXPECT_TRUE(bitwise_equal(h, bench::gpu_hermitian_with_eigenvalues(lambda, seed)));
  EXPECT_FALSE(bitwise_equal(h, bench::gpu_hermitian_with_eigenvalues(lambda, seed + 1)));
}

TEST(GpuSpectrumMatrixSeed, EmptySpectrumGivesEmptyMatrix) {
  EXPECT_TRUE(bench::gpu_matrix_with_eigenvalues({}, 1).empty());
  EXPECT_TRUE(bench::gpu_hermitian_with_eigenvalues({}, 1).empty());
}

}  // namespace
}  // namespace pipevd::test
