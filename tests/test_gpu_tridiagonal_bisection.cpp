// The GPU's eigenvalues-only solver (GpuBackend::tridiagonal_eigenvalues, the bisection kernel)
// against the host implementation of the same function: bitwise identical eigenvalues (the count
// uses only subtraction and IEEE division, the products are __dmul_rn, so there is no FMA
// contraction to differ by), and within the dsterf bound of LAPACK's at the smallest size.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "core/tridiagonal_bisection.hpp"
#include "core/tridiagonal_solver.hpp"
#include "gpu/gpu_backend.hpp"
#include "tests/tridiagonal_cases.hpp"

namespace pipevd {
namespace {

using namespace testing_tridiagonal;

void expect_bitwise(const std::string& kind, long n) {
  const Tridiagonal t = make_case(kind, n);
  std::vector<double> host(n), dev(n);
  ASSERT_EQ(tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), host.data()), 0);
  gpu::GpuBackend be;
  ASSERT_EQ(be.tridiagonal_eigenvalues(n, t.d.data(), t.e.data(), dev.data()), 0);
  long differ = 0;
  double worst = 0;
  for (long i = 0; i < n; ++i) {
    if (dev[i] != host[i]) ++differ;
    worst = std::max(worst, std::fabs(dev[i] - host[i]));
  }
  EXPECT_EQ(differ, 0) << kind << " n=" << n << ": " << differ << " eigenvalues differ, max by "
                       << worst / (DBL_EPSILON * gershgorin_norm(t)) << " eps ||T||";
  if (n <= 1000) {  // and LAPACK's dsterf
    std::vector<double> ref(n);
    ASSERT_EQ(tridiagonal_eigenvalues_copy(n, t.d.data(), t.e.data(), ref.data()), 0);
    const double tol =
        (8.0 + 0.25 * n) * DBL_EPSILON * 4 * gershgorin_quarter(t) + 4 * DBL_TRUE_MIN;
    for (long i = 0; i < n; ++i) ASSERT_LE(std::fabs(dev[i] - ref[i]), tol) << i;
  }
}

TEST(GpuBisection, RandomBitwiseAsHost) {
  for (long n : {1000L, 4099L, 20000L}) expect_bitwise("random", n);
}

TEST(GpuBisection, ClustersAndScalesBitwiseAsHost) {
  for (const char* kind :
       {"glued_wilkinson", "wilkinson", "graded", "random_1e-300", "random_1e300", "random_1e308",
        "random_1e-310", "zero_offdiagonal", "identical_diagonal"})
    for (long n : {1000L, 4099L}) expect_bitwise(kind, n);
}

TEST(GpuBisection, SmallSizes) {
  for (long n : {1L, 2L, 3L, 10L, 127L, 129L}) expect_bitwise("random", n);
}

}  // namespace
}  // namespace pipevd
