// The D&C tridiagonal solver (core/tridiagonal_dc) on the host backend against LAPACK's dstedc:
// eigenvalues, residual and orthogonality for T with little deflation (random, Toeplitz (1,2,1)),
// clusters (Wilkinson, glued Wilkinson, the pipelined paper's spectra), heavy deflation
// (identity-like), splits and tiny entries; leaf sizes that force deep trees and panels narrower
// than the merges.
#include <gtest/gtest.h>

#include <string>

#include "host/host_backend.hpp"
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

}  // namespace
}  // namespace pipevd
