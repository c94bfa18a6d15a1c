// The host implementation of the parallel bisection (core/tridiagonal_bisection.hpp, the function
// the GPU kernel runs) against LAPACK dsterf on random, Toeplitz, Wilkinson, glued Wilkinson,
// identical-diagonal, diagonal, graded and tiny/huge-scaled tridiagonals, n from 1 to 3000:
// every eigenvalue within a few eps * ||T|| of dsterf's (both are backward stable to O(eps ||T||),
// the accuracy class of ScaLAPACK PDSYEVD's eigenvalues), ascending order, exact answers where
// known, and the host backend's JOBZ = 'N' path through it.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/tridiagonal_bisection.hpp"
#include "core/tridiagonal_solver.hpp"
#include "host/host_backend.hpp"
#include "tests/tridiagonal_cases.hpp"

namespace pipevd {
namespace {

using namespace testing_tridiagonal;

std::vector<double> dsterf_values(const Tridiagonal& t) {
  const long n = static_cast<long>(t.d.size());
  std::vector<double> w(std::max(1L, n));
  EXPECT_EQ(tridiagonal_eigenvalues_copy(n, t.d.data(), t.e.data(), w.data()), 0);
  w.resize(n);
  return w;
}

// Both solvers err by p(n) eps ||T|| absolutely. Bisection stops within eps ||T|| / 2 of a
// backward-stable count's answer; dsterf's implicit QL/QR accumulates with n: at Wilkinson's W+
// n = 3000 it is 274 eps ||T|| off (bisection 0.7 eps ||T||, against a long-double bisection).
double bound(const Tridiagonal& t) {
  const double n = static_cast<double>(t.d.size());
  // Subnormal eigenvalues are quantised to DBL_TRUE_MIN: both answers round once there.
  return (8.0 + 0.25 * n) * DBL_EPSILON * 4 * gershgorin_quarter(t) + 4 * DBL_TRUE_MIN;
}

class BisectionVsDsterf : public testing::TestWithParam<std::tuple<std::string, long>> {};

TEST_P(BisectionVsDsterf, EigenvaluesAgree) {
  const auto [kind, n] = GetParam();
  const Tridiagonal t = make_case(kind, n);
  const std::vector<double> d0 = t.d, e0 = t.e;
  std::vector<double> w(n);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), w.data(), 2), 0);
  EXPECT_EQ(t.d, d0);  // inputs untouched
  EXPECT_EQ(t.e, e0);
  const std::vector<double> ref = dsterf_values(t);
  const double tol = bound(t);
  double worst = 0;
  for (long i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(w[i])) << i;
    worst = std::max(worst, std::fabs(w[i] - ref[i]));
    if (i > 0) ASSERT_LE(w[i - 1], w[i]) << "not ascending at " << i;
  }
  EXPECT_LE(worst, tol) << kind << " n=" << n << ": max |w - dsterf| = " << worst << " = "
                        << worst / (DBL_EPSILON * gershgorin_norm(t)) << " eps ||T||";
  // Where the spectrum is known exactly.
  if (kind == "identical_diagonal")
    for (long i = 0; i < n; ++i) EXPECT_LE(std::fabs(w[i] - 3.25), 4 * DBL_EPSILON * 3.25);
  if (kind == "toeplitz")
    for (long i = 0; i < n; ++i)
      EXPECT_NEAR(w[i], 2 - 2 * std::cos((i + 1) * M_PI / (n + 1)), 16 * DBL_EPSILON * 4);
}

std::vector<std::tuple<std::string, long>> cases() {
  std::vector<std::tuple<std::string, long>> c;
  for (const char* kind : {"random", "toeplitz", "wilkinson", "glued_wilkinson",
                           "identical_diagonal", "zero_offdiagonal", "graded", "random_1e-300",
                           "random_1e300", "random_1e308", "random_1e-310"})
    for (long n : {1L, 2L, 3L, 10L, 100L, 1001L, 3000L}) {
      // n = 3000 (seconds each on 2 threads) where size matters most: clusters and random.
      const std::string k = kind;
      if (n == 3000 && k != "random" && k != "wilkinson" && k != "glued_wilkinson") continue;
      c.emplace_back(kind, n);
    }
  return c;
}

INSTANTIATE_TEST_SUITE_P(Spectra, BisectionVsDsterf, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<std::tuple<std::string, long>>& info) {
                           std::string k = std::get<0>(info.param);
                           for (char& ch : k)
                             if (ch == '-') ch = 'm';
                           return k + "_n" + std::to_string(std::get<1>(info.param));
                         });

// Glued Wilkinson with a glue below eps: clusters of identical eigenvalues to working precision;
// each cluster's members must all be found (the count of eigenvalues in a window around each
// cluster equals dsterf's).
TEST(Bisection, TightClustersAreAllFound) {
  const long n = 21 * 40;
  const Tridiagonal t = glued_wilkinson(n, 1e-300);
  std::vector<double> w(n);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), w.data(), 2), 0);
  const std::vector<double> ref = dsterf_values(t);
  for (long i = 0; i < n; ++i) EXPECT_LE(std::fabs(w[i] - ref[i]), bound(t)) << i;
  // 40 copies of each of W21's eigenvalues.
  for (long i = 0; i < n; i += 40) EXPECT_LE(w[i + 39] - w[i], 4 * DBL_EPSILON * 10.75) << i;
}

// Diagonal T: the eigenvalues are the sorted diagonal, to within the bisection tolerance.
TEST(Bisection, DiagonalMatrixGivesSortedDiagonal) {
  const long n = 500;
  Tridiagonal t = random_tridiagonal(n, 5u);
  std::fill(t.e.begin(), t.e.end(), 0.0);
  std::vector<double> w(n), s = t.d;
  std::sort(s.begin(), s.end());
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), w.data(), 2), 0);
  for (long i = 0; i < n; ++i) EXPECT_LE(std::fabs(w[i] - s[i]), DBL_EPSILON) << i;
}

TEST(Bisection, ZeroMatrixAndNonFiniteEntries) {
  std::vector<double> d(7, 0.0), e(6, 0.0), w(7, 1.0);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(7, d.data(), e.data(), w.data()), 0);
  for (double x : w) EXPECT_EQ(x, 0.0);
  e[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_GT(tridiagonal_eigenvalues_bisection(7, d.data(), e.data(), w.data()), 0);
  e[3] = std::numeric_limits<double>::infinity();
  EXPECT_GT(tridiagonal_eigenvalues_bisection(7, d.data(), e.data(), w.data()), 0);
}

// Thread count does not change a single bit (each eigenvalue's bisection is independent).
TEST(Bisection, ThreadCountDoesNotChangeResults) {
  const long n = 777;
  const Tridiagonal t = random_tridiagonal(n, 3u);
  std::vector<double> w1(n), w4(n);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), w1.data(), 1), 0);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), w4.data(), 4), 0);
  EXPECT_EQ(w1, w4);
}

// The host backend: dsterf by default (bitwise LAPACK's), bisection when asked.
TEST(Bisection, HostBackendChoosesTheSolver) {
  const long n = 300;
  const Tridiagonal t = random_tridiagonal(n, 9u);
  const std::vector<double> ref = dsterf_values(t);
  HostBackend be;
  std::vector<double> w(n);
  ASSERT_EQ(be.tridiagonal_eigenvalues(n, t.d.data(), t.e.data(), w.data()), 0);
  EXPECT_EQ(w, ref);
  be.use_bisection(true);
  std::vector<double> wb(n), direct(n);
  ASSERT_EQ(be.tridiagonal_eigenvalues(n, t.d.data(), t.e.data(), wb.data()), 0);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), direct.data()), 0);
  EXPECT_EQ(wb, direct);
}

// The engine's JOBZ = 'N' path through the backend: the host backend's bisection gives the
// eigenvalues of its default dsterf to the bound, on one rank.
TEST(Bisection, EngineEigenvaluesOnlyThroughTheBackend) {
  const long n = 203;
  std::mt19937_64 gen(21);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = j; i < n; ++i) a[i + j * n] = a[j + i * n] = u(gen);
  const EngineLayout L = plan_engine_layout(n, 1, 16);
  EngineOptions opt;
  opt.b = 16;
  opt.k = 64;
  opt.want_vectors = false;
  std::vector<double> w_ref(n), w_bis(n), z(1);
  HostBackend reference, bisection;
  bisection.use_bisection(true);
  ASSERT_EQ(run_engine(reference, MPI_COMM_SELF, L, a.data(), w_ref.data(), z.data(), opt, nullptr),
            0);
  ASSERT_EQ(run_engine(bisection, MPI_COMM_SELF, L, a.data(), w_bis.data(), z.data(), opt, nullptr),
            0);
  double anorm = 0;
  for (double x : a) anorm = std::max(anorm, std::fabs(x));
  for (long i = 0; i < n; ++i)
    EXPECT_LE(std::fabs(w_bis[i] - w_ref[i]), 64 * n * DBL_EPSILON * anorm) << i;
  EXPECT_NE(w_bis, w_ref);  // a different solver did run
}

}  // namespace
}  // namespace pipevd
