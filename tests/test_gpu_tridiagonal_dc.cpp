// core/tridiagonal_dc on the GPU backend (merge GEMMs by cuBLAS on a companion stream) against
// LAPACK's dstedc: eigenvalues, residual and orthogonality at n = 1000 and 2051 (deep trees,
// panels narrower than the merges, splits and heavy deflation), repeated runs bitwise identical;
// the device-merge path (roots and M in kernels) against dstedc and the host-merge path, also on
// merges that deflate to two roots, one or none; the top merges folded (Q_pre M) against the
// unfolded result. The engine with stage 3 by dc runs in
// test_engine_stages's Gpu/ instance.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/gpu_backend.hpp"
#include "tests/support/gpu_mpi_environment.hpp"
#include "tests/support/test_size_limit.hpp"
#include "tests/tridiagonal_dc_check.hpp"

namespace pipevd {
namespace {

using test::TKind;

TEST(GpuTridiagonalDc, AgainstDstedc) {
  gpu::GpuBackend main_be;
  const auto be = main_be.companion(/*urgent=*/true);  // as the engine runs it
  for (long n : {1000L, 2051L})
    for (TKind k : {TKind::Toeplitz121, TKind::Random, TKind::GluedWilkinson, TKind::Identity,
                    TKind::Splits, TKind::Tiny}) {
      if (test::over_test_order(n)) continue;
      DcOptions opt;
      if (n > 2000) {  // levels of small merges, then merges in 512-column panels
        opt.leaf = 64;
        opt.panel = 512;
      }
      test::check_dc(*be, test::make_tridiagonal(k, n, 31), opt,
                     std::string(test::to_string(k)) + " n=" + std::to_string(n));
    }
  for (test::Spectrum s : test::kAllSpectra)
    test::check_dc(*be, test::make_tridiagonal(TKind::Spectrum, 1000, 4, s), DcOptions{},
                   std::string(test::to_string(s)) + " n=1000");
}

TEST(GpuTridiagonalDc, RepeatedRunsAreBitwiseIdentical) {
  gpu::GpuBackend be;
  const long n = 3001;
  const test::Tridiagonal t = test::make_tridiagonal(TKind::Toeplitz121, n, 1);
  DcOptions opt;
  opt.panel = 700;
  std::vector<std::vector<double>> q(2, std::vector<double>(n * n)), d(2, t.d);
  for (int r = 0; r < 2; ++r) {
    DeviceBuffer qd(be, n * n);
    ASSERT_EQ(tridiagonal_dc(be, n, d[r].data(), t.e.data(), qd.get(), n, opt), 0);
    be.copy_to_host(qd.get(), q[r].data(), n * n);
  }
  EXPECT_EQ(0, std::memcmp(d[0].data(), d[1].data(), sizeof(double) * n));
  EXPECT_EQ(0, std::memcmp(q[0].data(), q[1].data(), sizeof(double) * n * n));
}

// Residual max_j ||T q_j - lambda_j q_j||_1 / (n eps ||T||) on the host and orthogonality
// ||Q^T Q - I||_1 / (n eps) by a GEMM on the device (n too large for the host reference's dgemm).
void device_check(EngineBackend& be, const test::Tridiagonal& t, const std::vector<double>& d,
                  const std::vector<double>& q, const double* qd, const std::string& what) {
  const long n = static_cast<long>(t.d.size());
  double tnorm = DBL_MIN, res = 0, orth = 0;
  for (long i = 0; i < n; ++i)
    tnorm = std::max(tnorm, std::fabs(t.d[i]) + (i > 0 ? std::fabs(t.e[i - 1]) : 0.0) +
                                (i + 1 < n ? std::fabs(t.e[i]) : 0.0));
  for (long j = 0; j < n; ++j) {
    const double* x = q.data() + j * n;
    double col = 0;
    for (long i = 0; i < n; ++i) {
      double tq = t.d[i] * x[i] - d[j] * x[i];
      if (i > 0) tq += t.e[i - 1] * x[i - 1];
      if (i + 1 < n) tq += t.e[i] * x[i + 1];
      col += std::fabs(tq);
    }
    res = std::max(res, col);
  }
  DeviceBuffer g(be, n * n);
  be.gemm('T', 'N', n, n, n, 1.0, qd, n, qd, n, 0.0, g.get(), n);
  std::vector<double> hg(n * n);
  be.copy_to_host(g.get(), hg.data(), n * n);
  for (long j = 0; j < n; ++j) {
    double col = 0;
    for (long i = 0; i < n; ++i) col += std::fabs(hg[i + j * n] - (i == j ? 1.0 : 0.0));
    orth = std::max(orth, col);
  }
  const double ne = n * DBL_EPSILON;
  EXPECT_LT(res / (ne * tnorm), 10.0) << what << ": residual";
  EXPECT_LT(orth / ne, 10.0) << what << ": orthogonality";
}

// The device-merge path (secular roots, z-hat and M made by gpu/secular_merge.cu, M never on the
// host) against dstedc (eigenvalues, residual, orthogonality), against the host-merge path (dlaed4
// and M uploaded: eigenvalues to a few ulps of ||T||), and bitwise repeatable.
TEST(GpuTridiagonalDc, DeviceMergeAgainstHostMerge) {
  gpu::GpuBackend main_be;
  const auto be = main_be.companion(/*urgent=*/true);
  for (long n : {1000L, 4099L, 10007L})
    for (TKind k : {TKind::Toeplitz121, TKind::Random, TKind::GluedWilkinson, TKind::Splits}) {
      if ((n > 5000 && k != TKind::Toeplitz121 && k != TKind::Random) || test::over_test_order(n))
        continue;
      const std::string what = std::string(test::to_string(k)) + " n=" + std::to_string(n);
      const test::Tridiagonal t = test::make_tridiagonal(k, n, 17);
      DcOptions opt;
      opt.merge_on_device = 1;
      opt.device_merge_min = n > 2000 ? 512 : 100;
      if (n > 2000) opt.panel = 1024;  // several panels per merge
      if (n < 2000) test::check_dc(*be, t, opt, what + " (device merge)");
      std::vector<std::vector<double>> d(4, t.d), q(4, std::vector<double>(n * n));
      DcStats st[4];
      // device, device again, host merge, host merge from pinned staging (asynchronous uploads)
      for (int r = 0; r < 4; ++r) {
        opt.merge_on_device = r < 2 ? 1 : 0;
        opt.pinned_staging = r == 3 ? 1 : 0;
        DeviceBuffer qd(*be, n * n);
        ASSERT_EQ(tridiagonal_dc(*be, n, d[r].data(), t.e.data(), qd.get(), n, opt, &st[r]), 0)
            << what;
        be->copy_to_host(qd.get(), q[r].data(), n * n);
        if (n > 5000 && (r == 0 || r == 2))
          device_check(*be, t, d[r], q[r], qd.get(), what + (r ? " (host merge)" : " (device)"));
      }
      if (k != TKind::Splits) EXPECT_GT(st[0].device_merges, 0) << what;
      EXPECT_EQ(st[2].device_merges, 0) << what;
      EXPECT_EQ(0, std::memcmp(d[0].data(), d[1].data(), sizeof(double) * n)) << what;
      EXPECT_EQ(0, std::memcmp(q[0].data(), q[1].data(), sizeof(double) * n * n)) << what;
      // The same M through pinned, double-buffered uploads: bitwise the synchronous path's.
      EXPECT_EQ(0, std::memcmp(d[2].data(), d[3].data(), sizeof(double) * n)) << what;
      EXPECT_EQ(0, std::memcmp(q[2].data(), q[3].data(), sizeof(double) * n * n)) << what;
      double tnorm = 0, diff = 0;
      for (long i = 0; i < n; ++i) {
        tnorm = std::max(tnorm, std::fabs(t.d[i]) + (i + 1 < n ? 2 * std::fabs(t.e[i]) : 0.0));
        diff = std::max(diff, std::fabs(d[0][i] - d[2][i]));
      }
      // A few ulps per merge, added up over the levels (glued Wilkinson at n = 4099: 9 ulps).
      EXPECT_LE(diff, 16 * DBL_EPSILON * tnorm) << what;
      std::printf(
          "%s: device merges %ld of %ld, max |lambda_dev - lambda_host| = %.2f eps ||T||; "
          "device merge %.3f s, host merge %.3f s + upload %.3f s\n",
          what.c_str(), st[0].device_merges, st[0].merges, diff / (DBL_EPSILON * tnorm),
          st[0].device_merge, st[2].host_merge, st[2].upload);
    }
}

// Merges that deflation leaves with two roots, one or none (no kernel launch for the roots) on
// the device path like any other of order >= device_merge_min, at odd n: T built so that every
// merge keeps exactly 0, 1 or 2 roots (one unreduced block, or several split by zeros), and T that
// deflates heavily without a plan (identity-like, glued Wilkinson, the clustered spectra).
// Against dstedc (eigenvalues to a few ulps of ||T||, residual, orthogonality) and the host
// merge's eigenvalues; every merge of order >= device_merge_min on the device path, nothing
// uploaded for them; the top merges folded against tridiagonal_dc.
TEST(GpuTridiagonalDc, DeflatedMergesOnTheDevice) {
  gpu::GpuBackend main_be;
  const auto be = main_be.companion(/*urgent=*/true);
  DcOptions opt;
  opt.merge_on_device = 1;
  for (long n : {2049L, 4097L}) {
    if (test::over_test_order(n)) continue;
    opt.panel = n > 4000 ? 512 : 2048;  // several panels per merge, or one
    for (int roots : {0, 1, 2})
      for (const std::vector<long>& blocks :
           {std::vector<long>{n}, std::vector<long>{1, n / 2, 1, n - n / 2 - 2}})
        EXPECT_TRUE(test::check_dc_deflating_blocks(*be, blocks, opt, roots, 3));
  }
  // Unplanned: a few ulps per merge, added up over the levels, as the host merge's.
  const long n = 2049;
  if (test::over_test_order(n)) return;
  opt.panel = 2048;
  for (TKind k : {TKind::Identity, TKind::GluedWilkinson})
    test::check_dc_deflated(*be, test::make_tridiagonal(k, n, 5), opt,
                            std::string(test::to_string(k)) + " n=2049", -1, 16);
  for (test::Spectrum s : {test::Spectrum::Cluster0, test::Spectrum::Cluster1})
    test::check_dc_deflated(*be, test::make_tridiagonal(TKind::Spectrum, n, 3, s), opt,
                            std::string(test::to_string(s)) + " n=2049", -1, 16);
}

// tridiagonal_dc_fold on the GPU (the top merges' M kept in device memory, Q_pre packed in place)
// against tridiagonal_dc there: the same eigenvalues bitwise, Q_pre M equal to Q_d to rounding;
// the device merge and the host merge, splits and heavy deflation.
TEST(GpuTridiagonalDc, FoldEqualsTridiagonalDc) {
  gpu::GpuBackend main_be;
  const auto be = main_be.companion(/*urgent=*/true);
  for (long n : {1000L, 2051L})
    for (TKind k : {TKind::Toeplitz121, TKind::Random, TKind::GluedWilkinson, TKind::Identity,
                    TKind::Splits, TKind::Tiny})
      for (int merge : {1, 0}) {
        if (test::over_test_order(n)) continue;
        const std::string what = std::string(test::to_string(k)) + " n=" + std::to_string(n) +
                                 (merge ? "" : " (host merge)");
        const test::Tridiagonal t = test::make_tridiagonal(k, n, 43);
        DcOptions opt;
        opt.merge_on_device = merge;
        opt.panel = n > 2000 ? 512 : 2048;
        bool folded = false;
        test::check_dc_fold(*be, t.d, t.e, opt, what, &folded);
        if (k == TKind::Toeplitz121 || k == TKind::Random) EXPECT_TRUE(folded) << what;
      }
}

}  // namespace
}  // namespace pipevd
