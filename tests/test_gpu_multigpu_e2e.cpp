// pdsyevd_ end to end on the multi-GPU engine (PIPEVD_BACKEND=gpu, one engine rank per GPU,
// NCCL between them): block-cyclic input on several caller grids, n divisible by nothing
// (1999 is prime, 4099 too), eigenvalues equal to ScaLAPACK's PDSYEVD to 1e-12 relative to the
// spectrum's norm, residual and orthogonality of the gathered Z under ScaLAPACK's threshold.
// Registered at 2 ranks (2 GPUs), at 4 ranks with PIPEVD_ENGINE_RANKS=2 (caller ranks > engine
// ranks) and at 4 ranks on 4 GPUs (skipped where fewer are visible).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/distributed_matrix.hpp"
#include "tests/support/e2e_pdsyevd_check.hpp"
#include "tests/support/spectra.hpp"

namespace pipevd::test {
namespace {

struct Case {
  std::string what;  // "random" or a spectrum's name
  int n, nb;
  char uplo;
  char shape;  // 's': squarest grid, 'r': 1 x P, 'c': P x 1 (column-major BLACS order)
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return c.what + "_n" + std::to_string(c.n) + "_nb" + std::to_string(c.nb) + "_" + c.uplo +
         c.shape;
}

std::vector<double> matrix_of(const Case& c) {
  const long n = c.n;
  std::vector<double> a(n * n, 0.0);
  if (c.what == "random") {
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < n; ++i) a[i + j * n] = random_symmetric_entry(i, j, 53);
    return a;
  }
  for (Spectrum s : kAllSpectra)
    if (c.what == to_string(s)) return matrix_with_eigenvalues(eigenvalues_of(s, n, 59), 61);
  ADD_FAILURE() << "unknown case " << c.what;
  return a;
}

class MultiGpuE2E : public testing::TestWithParam<Case> {};

TEST_P(MultiGpuE2E, EqualsScalapackAndIsAccurate) {
  const Case c = GetParam();
  expect_pdsyevd_matches_scalapack(c.shape, c.n, c.nb, c.uplo, matrix_of(c));
}

std::vector<Case> cases() {
  return {{"random", 1999, 64, 'L', 's'},  {"random", 1999, 37, 'U', 'r'},
          {"random", 1999, 100, 'L', 'c'}, {"random", 257, 16, 'U', 's'},
          {"random", 4099, 96, 'L', 's'},  {to_string(kAllSpectra[0]), 1999, 32, 'U', 's'}};
}

INSTANTIATE_TEST_SUITE_P(Matrices, MultiGpuE2E, testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace pipevd::test
