// The dense solvers of the one-stage path on the host (core/dense_eigensolver.hpp): from either
// triangle, eigenvalues to the known spectrum, and nothing read past the array they are given.
// With UPLO = 'U', LAPACK's zheevd over OpenBLAS's x86_64 ZGEMV reads up to lda elements past A
// (see dense_eigensolver.cpp): A here ends where nothing can be read, so such a read faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <string>
#include <vector>

#include "core/dense_eigensolver.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/guarded_array.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/spectra.hpp"

namespace pipevd {
namespace {

using Complex = std::complex<double>;

TEST(DenseEigensolver, HermitianFromEitherTriangleReadsNothingPastA) {
  for (const long n : {62L, 66L, 130L, 203L})
    for (const char uplo : {'U', 'L', 'u'}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " uplo=" + uplo);
      std::vector<double> lambda = test::eigenvalues_of(test::Spectrum::Normal, n, 3);
      const std::vector<Complex> h = test::hermitian_with_eigenvalues(lambda, 9);
      const test::GuardedArray<Complex> a(static_cast<std::size_t>(n * n),
                                          static_cast<std::size_t>(n) * sizeof(Complex));
      std::copy(h.begin(), h.end(), a.data());
      std::vector<double> w(n);
      ASSERT_EQ(dense_hermitian_eigenpairs(true, uplo, n, a.data(), n, w.data()), 0);
      std::sort(lambda.begin(), lambda.end());
      EXPECT_LE(test::eigenvalue_difference(w, lambda), 1e-12);
    }
}

}  // namespace
}  // namespace pipevd
