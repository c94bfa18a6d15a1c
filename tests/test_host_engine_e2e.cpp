// pdsyevd_ end to end on the host engine (PIPEVD_BACKEND=host): block-cyclic input on several
// grids -> redistribution -> DBBR, bulge chasing, D&C, back transformations, GEMM -> Z in DESCZ.
// Eigenvalues equal ScaLAPACK's PDSYEVD to 1e-12 (relative to the spectrum's norm); residual and
// orthogonality stay under ScaLAPACK's test threshold; random matrices, the six spectra of the
// pipelined paper's Table 2, degenerate eigenvalues, the zero matrix, the identity, n = 1, 2, 3,
// tiny and huge norms (ScaLAPACK's scaling), submatrices, and JOBZ = 'N'. The same cases run the
// one-stage path (PIPEVD_ENGINE_PATH=one_stage) and, as test_gpu_engine_e2e, the GPU engine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "include/pipevd.h"
#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/e2e_pdsyevd_check.hpp"
#include "tests/support/interposed_pdsyevd.hpp"
#include "tests/support/spectra.hpp"

namespace pipevd::test {
namespace {

struct Case {
  std::string what;  // "random", a spectrum's name, "degenerate", "zero", "identity"
  int n, nb;
  char uplo;
  char shape;          // 's': squarest grid, 'r': 1 x P, 'c': P x 1 (column-major BLACS order)
  double scale = 1.0;  // multiplies the matrix (tiny/huge norms)
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s =
      c.what + "_n" + std::to_string(c.n) + "_nb" + std::to_string(c.nb) + "_" + c.uplo + c.shape;
  if (c.scale != 1.0) s += c.scale < 1 ? "_tiny" : "_huge";
  return s;
}

// The full symmetric matrix of a case (column-major, n x n).
std::vector<double> matrix_of(const Case& c) {
  const long n = c.n;
  std::vector<double> a(n * n, 0.0);
  if (c.what == "random") {
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < n; ++i) a[i + j * n] = random_symmetric_entry(i, j, 23);
  } else if (c.what == "identity") {
    for (long i = 0; i < n; ++i) a[i + i * n] = 1;
  } else if (c.what == "degenerate") {
    std::vector<double> lambda(n);
    for (long i = 0; i < n; ++i) lambda[i] = static_cast<double>(i % 4) - 1.5;  // 4 values
    a = matrix_with_eigenvalues(lambda, 29);
  } else if (c.what != "zero") {
    for (Spectrum s : kAllSpectra)
      if (c.what == to_string(s)) a = matrix_with_eigenvalues(eigenvalues_of(s, n, 31), 37);
  }
  for (double& v : a) v *= c.scale;
  return a;
}

class HostEngineE2E : public testing::TestWithParam<Case> {};

TEST_P(HostEngineE2E, EqualsScalapackAndIsAccurate) {
  const Case c = GetParam();
  expect_pdsyevd_matches_scalapack(c.shape, c.n, c.nb, c.uplo, matrix_of(c), c.scale);
}

std::vector<Case> cases() {
  std::vector<Case> v = {{"random", 1, 4, 'L', 's'},        {"random", 2, 1, 'U', 's'},
                         {"random", 3, 2, 'L', 'r'},        {"random", 37, 8, 'L', 's'},
                         {"random", 37, 8, 'U', 'r'},       {"random", 100, 7, 'L', 'c'},
                         {"random", 131, 16, 'U', 's'},     {"random", 97, 3, 'L', 'r'},
                         {"random", 250, 32, 'L', 's'},     {"random", 64, 5, 'U', 'c'},
                         {"degenerate", 90, 8, 'L', 's'},   {"zero", 45, 8, 'U', 's'},
                         {"identity", 45, 8, 'L', 'c'},     {"random", 60, 8, 'L', 's', 1e-300},
                         {"random", 60, 8, 'U', 'r', 1e300}};
  for (Spectrum s : kAllSpectra) v.push_back({to_string(s), 150, 12, 'L', 's'});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Matrices, HostEngineE2E, testing::ValuesIn(cases()), case_name);

// LLD = n and NaN in the other triangle: on one rank (grid 1 x 1) the engine reads the caller's
// array and mirrors its triangle itself, and writes Z into the caller's; on more ranks the same
// inputs go through the redistribution. (n = 2 only on one rank: with nb = 8 the other ranks hold
// nothing, LLD = 1, and the reference PDSYEVD returned unsorted, wrong W on them.)
TEST(HostEngineE2EDirect, TightLeadingDimensionAndNanOtherTriangle) {
  for (int n : {1, 2, 37, 131})
    for (char uplo : {'L', 'U'}) {
      if (n == 2 && world_size() > 1) continue;
      SCOPED_TRACE("n=" + std::to_string(n) + " uplo=" + uplo);
      const std::vector<double> full = matrix_of(Case{"random", n, 8, uplo, 's'});
      expect_pdsyevd_matches_scalapack('s', n, 8, uplo, full, 1.0, /*lld_extra=*/0,
                                       /*nan_other=*/true);
    }
}

// Tiny and huge norms (PDSYEVD's scaling) with LLD = N: on one rank the one-stage path's upload
// finds the norm (the entry scan left to it) and the call goes the general path, which scales a
// copy; the results as ScaLAPACK's.
TEST(HostEngineE2EDirect, TinyAndHugeNormsAreScaled) {
  for (double scale : {1e-300, 1e300})
    for (char uplo : {'L', 'U'}) {
      SCOPED_TRACE("scale=" + std::to_string(scale) + " uplo=" + uplo);
      const std::vector<double> full = matrix_of(Case{"random", 60, 8, uplo, 's', scale});
      expect_pdsyevd_matches_scalapack('s', 60, 8, uplo, full, scale, /*lld_extra=*/0,
                                       /*nan_other=*/true);
    }
}

// A submatrix (IA, JA, IZ, JZ > 1): only Z's submatrix is written, and it is an eigenbasis.
TEST(HostEngineE2ESubmatrix, OffsetsOnlyTouchTheSubmatrix) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int n = 70, nb = 6, off = 12, big = n + 2 * off;  // PDSYEVD: offsets aligned to nb
  const BlockCyclicLayout outer{big, big, nb, nb, 0, 0, 0};
  DistributedMatrix a(grid, outer), z(grid, outer);
  auto entry = [&](long i, long j) { return random_symmetric_entry(i - off, j - off, 41); };
  a.fill(entry);
  const double sentinel = -777.25;
  z.fill([&](long, long) { return sentinel; });
  std::vector<double> w(n);
  ASSERT_EQ(call_pdsyevd('V', 'U', n, a.data(), off + 1, off + 1, a.desc, w.data(), z.data(),
                         off + 1, off + 1, z.desc),
            0);
  std::vector<double> sub(static_cast<size_t>(n) * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) sub[i + j * n] = entry(i + off, j + off);
  EXPECT_LE(eigenvalue_difference(w, lapack_eigenvalues(n, sub)), 1e-12);
  const std::vector<double> zf = z.gather(grid);
  std::vector<double> zs(sub.size());
  long touched_outside = 0;
  for (long j = 0; j < big; ++j)
    for (long i = 0; i < big; ++i) {
      const bool inside = i >= off && i < off + n && j >= off && j < off + n;
      if (inside)
        zs[(i - off) + (j - off) * n] = zf[i + j * big];
      else
        touched_outside += zf[i + j * big] != sentinel;
    }
  EXPECT_EQ(touched_outside, 0);
  EXPECT_LT(residual(n, sub, zs, w), kScalapackThreshold);
  EXPECT_LT(orthogonality(n, zs), kScalapackThreshold);
}

// pipevd_last_path() names the path each call took (PIPEVD_TEST_EXPECT_PATH, where the run sets
// it: two_stage, one_stage), for both JOBZ.
TEST(EngineE2EPath, LastPathNamesThePathTaken) {
  const char* expect = std::getenv("PIPEVD_TEST_EXPECT_PATH");
  if (!expect) GTEST_SKIP() << "PIPEVD_TEST_EXPECT_PATH unset";
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int n = 37, nb = 8;
  for (char jobz : {'V', 'N'}) {
    DistributedMatrix a(grid, {n, n, nb, nb}), z(grid, {n, n, nb, nb});
    a.fill([](long i, long j) { return random_symmetric_entry(i, j, 43); });
    std::vector<double> w(n);
    ASSERT_EQ(call_pdsyevd(jobz, 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc),
              0);
    EXPECT_STREQ(pipevd_last_path(), expect) << jobz;
  }
}

}  // namespace
}  // namespace pipevd::test
