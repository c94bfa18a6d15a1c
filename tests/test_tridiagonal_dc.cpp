// The D&C tridiagonal solver (core/tridiagonal_dc) on the host backend against LAPACK's dstedc:
// eigenvalues, residual and orthogonality for T with little deflation (random, Toeplitz (1,2,1)),
// clusters (Wilkinson, glued Wilkinson, the pipelined paper's spectra), heavy deflation
// (identity-like), splits and tiny entries; leaf sizes that force deep trees and panels narrower
// than the merges. tridiagonal_dc_fold (its top merges left to the caller) against it.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "host/host_backend.hpp"
#include "tests/tridiagonal_cases.hpp"
#include "tests/tridiagonal_dc_check.hpp"

namespace pipevd {
namespace {

using test::TKind;

TEST(TridiagonalDc, AllKindsAgainstDstedc) {
  HostBackend be;
  for (TKind k : {TKind::Random, TKind::Toeplitz121, TKind::Wilkinson, TKind::GluedWilkinson,
                  TKind::Identity, TKind::Splits, TKind::Tiny})
    for (long n : {1L, 2L, 3L, 17L, 100L, 257L, 1000L}) {
      const test::Tridiagonal t = test::make_tridiagonal(k, n, 11 + static_cast<unsigned>(n));
      // Leaves of 8 and panels of 40 at small n, so every n above runs merges and panels.
      DcOptions opt;
      opt.leaf = n < 300 ? 8 : 64;
      opt.panel = n < 300 ? 40 : 256;
      opt.threads = 3;
      test::check_dc(be, t, opt, std::string(test::to_string(k)) + " n=" + std::to_string(n));
    }
}

TEST(TridiagonalDc, LargeDefaultOptions) {
  HostBackend be;
  for (TKind k : {TKind::Random, TKind::Toeplitz121, TKind::GluedWilkinson, TKind::Identity})
    test::check_dc(be, test::make_tridiagonal(k, 2000, 5), DcOptions{},
                   std::string(test::to_string(k)) + " n=2000");
}

TEST(TridiagonalDc, ClusteredSpectra) {
  HostBackend be;
  for (test::Spectrum s : test::kAllSpectra)
    for (long n : {100L, 300L}) {
      DcOptions opt;
      opt.leaf = 16;
      opt.panel = 64;
      test::check_dc(be, test::make_tridiagonal(TKind::Spectrum, n, 3, s), opt,
                     std::string(test::to_string(s)) + " n=" + std::to_string(n));
    }
}

TEST(TridiagonalDc, OneThreadEqualsManyThreads) {
  HostBackend be;
  const test::Tridiagonal t = test::make_tridiagonal(TKind::Random, 300, 9);
  DcOptions a, b;
  a.leaf = b.leaf = 16;
  a.threads = 1;
  b.threads = 4;
  std::vector<double> d1 = t.d, d2 = t.d;
  DeviceBuffer q1(be, 300 * 300), q2(be, 300 * 300);
  ASSERT_EQ(tridiagonal_dc(be, 300, d1.data(), t.e.data(), q1.get(), 300, a), 0);
  ASSERT_EQ(tridiagonal_dc(be, 300, d2.data(), t.e.data(), q2.get(), 300, b), 0);
  EXPECT_EQ(d1, d2);
  EXPECT_TRUE(std::equal(q1.get(), q1.get() + 300 * 300, q2.get()));
}

// The backend-merge path (roots by core/secular_root.hpp, z-hat and M by the backend's
// SecularMerge; the host backend runs the GPU kernels' formulas serially) against dstedc, and its
// eigenvalues against the host-merge path's (dlaed4) to a few ulps of ||T||.
TEST(TridiagonalDc, BackendMergeAgainstDstedcAndHostMerge) {
  HostBackend be;
  for (TKind k : {TKind::Random, TKind::Toeplitz121, TKind::GluedWilkinson, TKind::Identity,
                  TKind::Splits, TKind::Tiny})
    for (long n : {100L, 1000L}) {
      const std::string what = std::string(test::to_string(k)) + " n=" + std::to_string(n);
      const test::Tridiagonal t = test::make_tridiagonal(k, n, 21 + static_cast<unsigned>(n));
      DcOptions opt;
      opt.leaf = n < 300 ? 8 : 64;
      opt.panel = n < 300 ? 40 : 256;
      opt.merge_on_device = 1;
      opt.device_merge_min = 12;
      test::check_dc(be, t, opt, what + " (backend merge)");
      std::vector<double> dd = t.d, dh = t.d;
      DeviceBuffer qd(be, n * n), qh(be, n * n);
      DcStats sd, sh;
      ASSERT_EQ(tridiagonal_dc(be, n, dd.data(), t.e.data(), qd.get(), n, opt, &sd), 0) << what;
      opt.merge_on_device = 0;
      opt.pinned_staging = 1;  // the double-buffered staging logic (plain memory on the host)
      ASSERT_EQ(tridiagonal_dc(be, n, dh.data(), t.e.data(), qh.get(), n, opt, &sh), 0) << what;
      if (k != TKind::Splits && k != TKind::Tiny) EXPECT_GT(sd.device_merges, 0) << what;
      EXPECT_EQ(sh.device_merges, 0) << what;
      double tnorm = 0, diff = 0;
      for (long i = 0; i < n; ++i) {
        tnorm = std::max(tnorm, std::fabs(t.d[i]) + (i + 1 < n ? 2 * std::fabs(t.e[i]) : 0.0));
        diff = std::max(diff, std::fabs(dd[i] - dh[i]));
      }
      // A few ulps per merge, added up over the levels (glued Wilkinson at n = 4099: 9 ulps).
      EXPECT_LE(diff, 16 * DBL_EPSILON * tnorm) << what;
    }
}

// Merges that deflation leaves with two roots, one or none take the backend's path like any other
// of order >= device_merge_min (the host backend's SecularMerge), at odd n: T built so that every
// merge keeps exactly 0, 1 or 2 roots (one unreduced block, or several split by zeros), and T
// that deflates heavily without a plan (identity-like, glued Wilkinson, the clustered spectra).
// Against dstedc (eigenvalues to a few ulps of ||T||, residual, orthogonality) and the host
// merge's eigenvalues; every merge of order >= device_merge_min on the backend's path; the top
// merges folded (tridiagonal_dc_fold) against tridiagonal_dc.
TEST(TridiagonalDc, DeflatedMergesOnTheBackend) {
  HostBackend be;
  DcOptions opt;
  opt.leaf = 32;
  opt.panel = 256;
  opt.threads = 2;
  opt.merge_on_device = 1;
  // At n = 1001 the fourth level's merges are of orders 125 and 126: the one of 126 alone takes
  // the backend's path.
  opt.device_merge_min = 126;
  for (int roots : {0, 1, 2})
    for (const std::vector<long>& blocks :
         {std::vector<long>{1001}, std::vector<long>{1, 600, 1, 447}})
      EXPECT_TRUE(test::check_dc_deflating_blocks(be, blocks, opt, roots, 7));
  opt.leaf = 64;
  opt.device_merge_min = 200;
  for (int roots : {1, 2}) EXPECT_TRUE(test::check_dc_deflating_blocks(be, {2049}, opt, roots, 9));
  // Unplanned: a few ulps per merge, added up over the levels, as the host merge's.
  opt.leaf = 32;
  opt.device_merge_min = 100;
  for (TKind k : {TKind::Identity, TKind::GluedWilkinson}) {
    const std::string what = std::string(test::to_string(k)) + " n=1001";
    test::check_dc_deflated(be, test::make_tridiagonal(k, 1001, 5), opt, what, -1, 16);
  }
  for (test::Spectrum s : {test::Spectrum::Cluster0, test::Spectrum::Cluster1}) {
    const std::string what = std::string(test::to_string(s)) + " n=1001";
    test::check_dc_deflated(be, test::make_tridiagonal(TKind::Spectrum, 1001, 3, s), opt, what, -1,
                            16);
  }
}

// tridiagonal_dc_fold against tridiagonal_dc (Q_pre M equal to Q_d, the same eigenvalues) on both
// tables of tridiagonal cases: n from 1 through a leaf and one past it, odd and even, several
// unreduced blocks (splits, zero off-diagonals, tiny entries), clustered and deflating spectra,
// deep trees of small leaves, the host merge and the backend's.
TEST(TridiagonalDcFold, QPreTimesMEqualsTridiagonalDc) {
  HostBackend be;
  long folded = 0;
  const auto check = [&](const std::vector<double>& d, const std::vector<double>& e,
                         const DcOptions& opt, const std::string& what) {
    bool f = false;
    test::check_dc_fold(be, d, e, opt, what, &f);
    folded += f;
    return f;
  };
  for (int merge : {0, 1})
    for (TKind k : {TKind::Random, TKind::Toeplitz121, TKind::Wilkinson, TKind::GluedWilkinson,
                    TKind::Identity, TKind::Splits, TKind::Tiny})
      for (long n : {1L, 2L, 3L, 8L, 9L, 17L, 100L, 257L, 1000L}) {
        const test::Tridiagonal t = test::make_tridiagonal(k, n, 41 + static_cast<unsigned>(n));
        DcOptions opt;
        opt.leaf = n < 300 ? 8 : 64;
        opt.panel = n < 300 ? 40 : 256;
        opt.threads = 3;
        opt.merge_on_device = merge;
        opt.device_merge_min = 12;
        const std::string what = std::string(test::to_string(k)) + " n=" + std::to_string(n) +
                                 (merge ? " (backend merge)" : "");
        const bool f = check(t.d, t.e, opt, what);
        if (k == TKind::Random || k == TKind::Toeplitz121) EXPECT_EQ(f, n > opt.leaf) << what;
      }
  for (test::Spectrum s : test::kAllSpectra) {
    DcOptions opt;
    opt.leaf = 16;
    opt.panel = 64;
    const test::Tridiagonal t = test::make_tridiagonal(TKind::Spectrum, 301, 3, s);
    check(t.d, t.e, opt, std::string(test::to_string(s)) + " n=301");
  }
  // tridiagonal_cases.hpp's, default options: a leaf of 128 (nothing to fold), one past it.
  for (const char* kind :
       {"random", "random_1e-300", "random_1e300", "random_1e308", "random_1e-310", "toeplitz",
        "wilkinson", "glued_wilkinson", "identical_diagonal", "zero_offdiagonal", "graded"})
    for (long n : {1L, 128L, 129L, 301L}) {
      const testing_tridiagonal::Tridiagonal t = testing_tridiagonal::make_case(kind, n);
      check(t.d, t.e, DcOptions{}, std::string(kind) + " n=" + std::to_string(n));
    }
  // Zeros (one-by-one blocks, joined) wider than half of n ahead of a block that merges: Q_pre's
  // first block packs in row pieces.
  for (auto [zeros, rest] : {std::pair{250L, 200L}, std::pair{300L, 20L}}) {
    testing_tridiagonal::Tridiagonal t = testing_tridiagonal::random_tridiagonal(zeros + rest, 5);
    for (long i = 0; i < zeros; ++i) t.d[i] = t.e[i] = 0.0;
    DcOptions opt;
    opt.leaf = 8;
    EXPECT_TRUE(
        check(t.d, t.e, opt, "zeros " + std::to_string(zeros) + " then " + std::to_string(rest)));
  }
  EXPECT_GE(folded, 60);
}

}  // namespace
}  // namespace pipevd
