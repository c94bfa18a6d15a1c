// The GPU backend's operations against the host backend (the oracle), on fresh random inputs at
// several sizes including odd ones: copies, row-run copies and fills (exact), gemm, panel_qr (same
// W, Y, R to rounding, and A = (I - W Y^T) R), merge_reflector_blocks, bc_back (X Q_b as
// host::apply_bc_back), bulge_chase + bc_back with the reflectors kept on the device, and the
// one-stage path (cusolverDnXsyevd) against the host's two-stage engine. Results computed twice
// must be bitwise identical (a moving result is a race). The stages and the whole two-stage
// engine on the GPU run in test_engine_stages's Gpu/ instance.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/one_stage.hpp"
#include "core/reflector_store.hpp"
#include "core/tridiagonal_solver.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/pinned_staging.hpp"
#include "gpu/row_runs.cuh"
#include "host/bc_back.hpp"
#include "host/bulge_chasing.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/device_vector.hpp"
#include "tests/support/gpu_host_fixture.hpp"
#include "tests/support/gpu_mpi_environment.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::bitwise_equal;
using test::Dev;
using test::max_abs_diff;
using test::random_symmetric;
using test::random_vector;

double norm(const Mat& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

class GpuBackendTest : public test::GpuAgainstHostTest {};

TEST_F(GpuBackendTest, AllocationIsZeroedAndAFailedOneIsAClearError) {
  Dev d(gpu_, 1001);
  const Mat h = d.to_host(1001);
  EXPECT_EQ(norm(h), 0.0);
  try {
    DeviceBuffer huge(gpu_, 1L << 48);  // 2 PiB
    FAIL() << "a 2 PiB allocation succeeded";
  } catch (const std::runtime_error& e) {  // gpu::GpuError
    EXPECT_NE(std::string(e.what()).find("cannot allocate"), std::string::npos) << e.what();
  }
  Dev after(gpu_, 17);  // the backend still works
  EXPECT_EQ(norm(after.to_host(17)), 0.0);
}

TEST_F(GpuBackendTest, CopyMatrixAndFillMatrixAreExact) {
  for (auto [m, n, lds, ldd] :
       {std::array<long, 4>{1, 1, 1, 1}, {7, 5, 9, 7}, {33, 1, 40, 33}, {130, 17, 131, 257}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    const Mat src = random_vector(lds * n, 3), dst0 = random_vector(ldd * n, 4);
    Mat want = dst0, want_fill = dst0;
    host_.copy_matrix(m, n, src.data(), lds, want.data(), ldd);
    host_.fill_matrix(m, n, -2.5, 7.0, want_fill.data(), ldd);
    Dev s(gpu_, src), d(gpu_, dst0), f(gpu_, dst0);
    gpu_.copy_matrix(m, n, s.get(), lds, d.get(), ldd);
    gpu_.fill_matrix(m, n, -2.5, 7.0, f.get(), ldd);
    EXPECT_TRUE(bitwise_equal(d.to_host(ldd * n), want));
    EXPECT_TRUE(bitwise_equal(f.to_host(ldd * n), want_fill));
  }
}

// Row runs copied as the host backend's loop of copy_matrix copies them, exactly: more runs than
// one launch's table, with runs of no rows and of one row among them, real and complex (on the
// complex words); a single run (a 2D copy) and none.
TEST_F(GpuBackendTest, CopyRowRunsEqualsHost) {
  const long cols = 5, lds = 2000, ldd = 2100;
  for (long count : {0L, 1L, 3L, 2L * gpu::kRowRunsPerLaunch + 3}) {
    SCOPED_TRACE("runs=" + std::to_string(count));
    std::vector<RowRun> runs;
    long src = 0, dst = 0;
    for (long i = 0; i < count; ++i) {
      const long rows = i % 4 == 1 ? 0 : i % 4 == 2 ? 1 : 1 + i * 7 % 5;
      runs.push_back({src, dst, rows});
      src += rows + 1;  // gaps between the runs, which stay as they were in dst
      dst += rows + 2;
    }
    ASSERT_LE(2 * src, lds);
    ASSERT_LE(2 * dst, ldd);
    const Mat s0 = random_vector(2 * lds * cols, 5), d0 = random_vector(2 * ldd * cols, 6);
    Mat want = d0, want_complex = d0;
    host_.copy_row_runs(cols, runs, s0.data(), lds, want.data(), ldd);
    host_.copy_row_runs(cols, runs, reinterpret_cast<const Complex*>(s0.data()), lds,
                        reinterpret_cast<Complex*>(want_complex.data()), ldd);
    Dev s(gpu_, s0), d(gpu_, d0), c(gpu_, d0);
    gpu_.copy_row_runs(cols, runs, s.get(), lds, d.get(), ldd);
    gpu_.copy_row_runs(cols, runs, reinterpret_cast<const Complex*>(s.get()), lds,
                       reinterpret_cast<Complex*>(c.get()), ldd);
    EXPECT_TRUE(bitwise_equal(d.to_host(2 * ldd * cols), want));
    EXPECT_TRUE(bitwise_equal(c.to_host(2 * ldd * cols), want_complex));
  }
}

// Copies of pageable host memory through the pinned chunks or directly (uploads from two of the
// smallest chunks on, downloads from one of the largest: just past two of the smallest, chunks of
// an eighth rounded up, just past one of the largest, two and a half of the largest; odd counts)
// and small ones: the same bits both ways, into fresh pages, on 1 and 3 host threads; pinned
// memory still copied directly.
TEST_F(GpuBackendTest, PageableCopiesThroughPinnedChunksAreExact) {
  for (int threads : {1, 3})
    for (long count :
         {17L, (1L << 19) + 7, (3L << 20) + 5, (8L << 20) + 3, (8L << 20) * 5 / 2 + 12345}) {
      SCOPED_TRACE("threads=" + std::to_string(threads) + " count=" + std::to_string(count));
      gpu_.set_host_threads(threads);
      const Mat src = random_vector(count, 5 + threads);
      DeviceBuffer d(gpu_, count);
      gpu_.copy_to_device(src.data(), d.get(), count);
      std::unique_ptr<double[]> back(new double[count]);  // fresh pages
      gpu_.copy_to_host(d.get(), back.get(), count);
      EXPECT_EQ(std::memcmp(back.get(), src.data(), sizeof(double) * count), 0);
      double* pinned = gpu_.allocate_host_staging(count);
      gpu_.copy_to_host(d.get(), pinned, count);
      EXPECT_EQ(std::memcmp(pinned, src.data(), sizeof(double) * count), 0);
      gpu_.release_host_staging(pinned);
    }
  gpu_.set_host_threads(1);
}

// Page-locked staging outlives its backend (one per call): a later backend on the device takes the
// same block back instead of pinning a new one, and releasing the kept staging empties the cache.
TEST_F(GpuBackendTest, PinnedStagingIsKeptForTheNextBackend) {
  gpu::release_pinned_staging();
  const long count = 3L << 20;
  double* first = nullptr;
  {
    gpu::GpuBackend call(-1);
    first = call.allocate_host_staging(count);
    call.release_host_staging(first);
  }
  EXPECT_GE(gpu::pinned_staging_bytes(), sizeof(double) * count);
  {
    gpu::GpuBackend next(-1);
    double* again = next.allocate_host_staging(count);
    EXPECT_EQ(again, first);
    EXPECT_EQ(gpu::pinned_staging_bytes(), 0u);
    next.release_host_staging(again);
  }
  gpu::release_pinned_staging();
  EXPECT_EQ(gpu::pinned_staging_bytes(), 0u);
}

// The device pool's memory goes back when a backend goes, unless it is kept for the next call
// (PIPEVD_KEEP_DEVICE_MEMORY=1), which then allocates from it.
TEST_F(GpuBackendTest, DevicePoolIsTrimmedUnlessKept) {
  const long count = 16L << 20;  // 128 MiB
  const auto reserved = [](int device) {
    std::uint64_t bytes = 0;
    cudaMemPool_t pool = gpu::GpuContext::for_device(device).pool();
    EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes),
              cudaSuccess);
    return bytes;
  };
  int device = 0;
  for (const bool keep : {false, true}) {
    {
      gpu::GpuBackend call(-1);
      call.set_keep_pool(keep);
      device = call.device();
      DeviceBuffer a(call, count);
    }
    if (keep)
      EXPECT_GE(reserved(device), sizeof(double) * count);
    else
      EXPECT_EQ(reserved(device), 0u);
  }
  gpu::trim_device_pools();
  EXPECT_EQ(reserved(device), 0u);
}

// The triangle uplo mirrored into the other, which held NaN: bitwise the host's, padding rows kept.
TEST_F(GpuBackendTest, MirrorTriangleEqualsHost) {
  for (long n : {1L, 2L, 33L, 100L, 1001L})
    for (char uplo : {'L', 'U'}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " uplo=" + uplo);
      const long lda = n + 3;
      Mat a = random_vector(lda * n, static_cast<unsigned>(n));
      for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i)
          if (uplo == 'L' ? i < j : i > j) a[i + j * lda] = std::nan("");
      Mat want = a;
      host_.mirror_triangle(uplo, n, want.data(), lda);
      Dev d(gpu_, a);
      gpu_.mirror_triangle(uplo, n, d.get(), lda);
      const Mat got = d.to_host(lda * n);
      EXPECT_TRUE(bitwise_equal(got, want));
      for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i) ASSERT_EQ(got[i + j * lda], got[j + i * lda]);
    }
}

TEST_F(GpuBackendTest, GemmEqualsHost) {
  for (char ta : {'N', 'T'})
    for (char tb : {'N', 'T'})
      for (auto [m, n, k] :
           {std::array<long, 3>{1, 1, 1}, {33, 7, 65}, {257, 129, 31}, {5, 3, 0}}) {
        SCOPED_TRACE(std::string(1, ta) + tb + " m=" + std::to_string(m) +
                     " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const long lda = (ta == 'N' ? m : k) + 3, ldb = (tb == 'N' ? k : n) + 1, ldc = m + 2;
        const Mat a = random_vector(lda * (ta == 'N' ? k : m), 5),
                  b = random_vector(ldb * (tb == 'N' ? n : k), 6), c0 = random_vector(ldc * n, 7);
        Mat want = c0;
        host_.gemm(ta, tb, m, n, k, -1.5, a.data(), lda, b.data(), ldb, 0.5, want.data(), ldc);
        Dev da(gpu_, a), db(gpu_, b), dc(gpu_, c0);
        gpu_.gemm(ta, tb, m, n, k, -1.5, da.get(), lda, db.get(), ldb, 0.5, dc.get(), ldc);
        EXPECT_LT(max_abs_diff(dc.to_host(ldc * n), want), 1e-14 * (k + 2) * 4);
      }
}

// The final GEMM into host memory: panels overlapped with their copies where ldc = m (pinned,
// panels of pageable memory past two staging chunks (m = 12001: 18M doubles each) and small
// ones), the plain path where c has padding rows (kept).
TEST_F(GpuBackendTest, GemmToHostEqualsHost) {
  for (auto [m, n, k, pad] : {std::array<long, 4>{1, 1, 1, 0},
                              {33, 7, 65, 0},
                              {257, 129, 31, 0},
                              {257, 129, 31, 3},
                              {12001, 12000, 37, 0}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                 " pad=" + std::to_string(pad));
    const long lda = m + 1, ldb = k + 2, ldc = m + pad;
    const Mat a = random_vector(lda * k, 8), b = random_vector(ldb * n, 9),
              c0 = random_vector(ldc * n, 10);
    Mat want = c0;
    host_.gemm('N', 'N', m, n, k, 1.0, a.data(), lda, b.data(), ldb, 0.0, want.data(), ldc);
    Dev da(gpu_, a), db(gpu_, b);
    Mat got = c0;  // pageable
    gpu_.gemm_to_host(m, n, k, da.get(), lda, db.get(), ldb, got.data(), ldc);
    EXPECT_LT(max_abs_diff(got, want), 1e-14 * (k + 2) * 4);
    for (long j = 0; j < n; ++j)
      for (long i = m; i < ldc; ++i) ASSERT_EQ(got[i + j * ldc], c0[i + j * ldc]);
    double* pinned = gpu_.allocate_host_staging(ldc * n);
    std::copy(c0.begin(), c0.end(), pinned);
    gpu_.gemm_to_host(m, n, k, da.get(), lda, db.get(), ldb, pinned, ldc);
    EXPECT_TRUE(bitwise_equal(Mat(pinned, pinned + ldc * n), got));
    gpu_.release_host_staging(pinned);
  }
}

// Q R with Q = I - W Y^T, R the upper trapezoid left in the panel: relative to ||A||.
double qr_reconstruction_error(long m, long nb, const Mat& a, const Mat& r, const Mat& w,
                               const Mat& y, HostBackend& be) {
  Mat qr = r;  // m x nb, ld m
  Mat s(static_cast<size_t>(nb * nb));
  be.gemm('T', 'N', nb, nb, m, 1.0, y.data(), m, r.data(), m, 0.0, s.data(), nb);
  be.gemm('N', 'N', m, nb, nb, -1.0, w.data(), m, s.data(), nb, 1.0, qr.data(), m);
  for (size_t i = 0; i < qr.size(); ++i) qr[i] -= a[i];
  return norm(qr) / std::max(norm(a), DBL_MIN);
}

TEST_F(GpuBackendTest, PanelQrEqualsHost) {
  for (auto [m, nb] : {std::array<long, 2>{1, 1},
                       {2, 1},
                       {5, 3},
                       {3, 5},
                       {33, 32},
                       {100, 32},
                       {257, 8},
                       {1000, 32},
                       {999, 2}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " nb=" + std::to_string(nb));
    const long ldp = m + 5;
    const Mat a = random_vector(ldp * nb, static_cast<unsigned>(m * 31 + nb));
    Mat hp = a, hw(m * nb), hy(m * nb);
    host_.panel_qr(m, nb, hp.data(), ldp, hw.data(), m, hy.data(), m);
    Mat runs[2][3];
    for (auto& run : runs) {
      Dev p(gpu_, a), w(gpu_, m * nb), y(gpu_, m * nb);
      gpu_.panel_qr(m, nb, p.get(), ldp, w.get(), m, y.get(), m);
      run[0] = p.to_host(ldp * nb);
      run[1] = w.to_host(m * nb);
      run[2] = y.to_host(m * nb);
    }
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(bitwise_equal(runs[0][i], runs[1][i])) << i;
    const double scale = norm(a) * DBL_EPSILON * (m + nb);
    EXPECT_LT(max_abs_diff(runs[0][0], hp), 10 * scale) << "R";
    EXPECT_LT(max_abs_diff(runs[0][1], hw), 10 * DBL_EPSILON * (m + nb) * 4) << "W";
    EXPECT_LT(max_abs_diff(runs[0][2], hy), 10 * DBL_EPSILON * (m + nb) * 4) << "Y";
    // Below the diagonal of R, above the unit diagonal of Y: exact zeros.
    for (long j = 0; j < nb; ++j)
      for (long i = 0; i < m; ++i) {
        if (i > j) EXPECT_EQ(runs[0][0][i + j * ldp], 0.0);
        if (i < j) EXPECT_EQ(runs[0][2][i + j * m], 0.0);
        if (i == j) EXPECT_EQ(runs[0][2][i + j * m], 1.0);
      }
    Mat ac(m * nb), rc(m * nb);
    for (long j = 0; j < nb; ++j)
      for (long i = 0; i < m; ++i) {
        ac[i + j * m] = a[i + j * ldp];
        rc[i + j * m] = runs[0][0][i + j * ldp];
      }
    EXPECT_LT(qr_reconstruction_error(m, nb, ac, rc, runs[0][1], runs[0][2], host_),
              100 * DBL_EPSILON * (m + nb));
  }
}

TEST_F(GpuBackendTest, PanelQrWithIdentityReflectorsIsAValidFactorization) {
  // Column 0 = 3 e_1 and column 3 = 0 have nothing to annihilate: their reflectors are the
  // identity (tau = 0 in LAPACK's convention), and T must stay finite with Q R = A.
  const long m = 40, nb = 4;
  Mat a = random_vector(m * nb, 9);
  for (long i = 0; i < m; ++i) a[i] = i == 0 ? 3.0 : 0.0;
  for (long i = 0; i < m; ++i) a[i + 3 * m] = 0.0;
  Dev p(gpu_, a), w(gpu_, m * nb), y(gpu_, m * nb);
  gpu_.panel_qr(m, nb, p.get(), m, w.get(), m, y.get(), m);
  const Mat r = p.to_host(m * nb), wh = w.to_host(m * nb), yh = y.to_host(m * nb);
  for (double v : wh) ASSERT_TRUE(std::isfinite(v));
  EXPECT_LT(qr_reconstruction_error(m, nb, a, r, wh, yh, host_), 100 * DBL_EPSILON * m);
  Mat hp = a, hw(m * nb), hy(m * nb);
  host_.panel_qr(m, nb, hp.data(), m, hw.data(), m, hy.data(), m);
  EXPECT_LT(max_abs_diff(wh, hw), 1e-13) << "W";
}

TEST_F(GpuBackendTest, MergeReflectorBlocksEqualsHost) {
  for (auto [m, k1, k2] : {std::array<long, 3>{1, 1, 1}, {37, 8, 8}, {301, 64, 32}, {513, 33, 7}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " k1=" + std::to_string(k1));
    const long ld = m + 1;
    const Mat w0 = random_vector(ld * (k1 + k2), 21), y = random_vector(ld * (k1 + k2), 22);
    Mat want = w0;
    host_.merge_reflector_blocks(m, k1, k2, want.data(), ld, y.data(), ld);
    Dev dw(gpu_, w0), dy(gpu_, y);
    gpu_.merge_reflector_blocks(m, k1, k2, dw.get(), ld, dy.get(), ld);
    EXPECT_LT(max_abs_diff(dw.to_host(ld * (k1 + k2)), want), 1e-14 * m * 4);
  }
}

// A random symmetric band matrix in lower band storage (ldab = b + 1).
Mat random_band(long n, long b, unsigned seed) {
  Mat ab = random_vector(n * (b + 1), seed);
  for (long j = 0; j < n; ++j)
    for (long r = 0; r <= b; ++r)
      if (j + r >= n) ab[r + j * (b + 1)] = 0.0;
  return ab;
}

TEST_F(GpuBackendTest, BcBackEqualsHost) {
  std::vector<std::array<long, 2>> cases;  // n, b: b clamped to n - 1 as the engine does
  for (long n : {3L, 33L, 257L, 1000L})
    for (long b : {2L, 8L, 32L})
      if (b == 2 || b <= n - 1) cases.push_back({n, b});
  for (long b : {40L, 64L, 70L}) cases.push_back({257, b});  // the widest kernel, the generic one
  for (auto [n, b] : cases) {
    const long bw = std::max(1L, std::min(b, n - 1));
    ReflectorStore u;
    Mat ab = random_band(n, bw, static_cast<unsigned>(n + b)), d(n), e(n);
    host::bulge_chase(n, bw, ab.data(), bw + 1, d.data(), e.data(), u);
    for (long m : {1L, 37L, 129L, 301L}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(bw) +
                   " m=" + std::to_string(m));
      const long ldx = m + 2;
      const Mat x0 = random_vector(ldx * n, static_cast<unsigned>(m * 7 + n));
      Mat want = x0;
      host::apply_bc_back(u, m, want.data(), ldx);
      // Each kernel choice (PIPEVD_GPU_BC_BACK; at b = 32 the tensor and BLAS2 kernels differ).
      for (gpu::BcBackKernel kernel :
           {gpu::BcBackKernel::Auto, gpu::BcBackKernel::Blas2, gpu::BcBackKernel::Tensor}) {
        SCOPED_TRACE("kernel=" + std::to_string(static_cast<int>(kernel)));
        gpu_.set_bc_back_kernel(kernel);
        Mat got[2];
        for (Mat& g : got) {
          Dev x(gpu_, x0);
          gpu_.bc_back(u, m, x.get(), ldx);
          g = x.to_host(ldx * n);
        }
        EXPECT_TRUE(bitwise_equal(got[0], got[1]));
        // Orthogonal transformation of each row: error ~ eps * sqrt(n) * (reflectors per column).
        EXPECT_LT(max_abs_diff(got[0], want), 1e-15 * n * 8);
        // Rows past m (the ldx padding) untouched.
        for (long j = 0; j < n; ++j)
          for (long i = m; i < ldx; ++i) ASSERT_EQ(got[0][i + j * ldx], x0[i + j * ldx]);
      }
      gpu_.set_bc_back_kernel(gpu::BcBackKernel::Auto);
    }
  }
}

TEST_F(GpuBackendTest, BulgeChaseThenBcBackWithDeviceReflectors) {
  for (auto [n, b] : {std::array<long, 2>{1, 1}, {2, 1}, {3, 2}, {100, 8}, {513, 32}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b));
    const Mat ab = random_band(n, b, static_cast<unsigned>(n));
    Mat hd(n), he(n), gd(n), ge(n);
    ReflectorStore hu, gu;
    host_.bulge_chase(n, b, ab.data(), b + 1, hd.data(), he.data(), hu);
    Dev dab(gpu_, ab);
    gpu_.bulge_chase(n, b, dab.get(), b + 1, gd.data(), ge.data(), gu);
    Mat vd(n), ve(n);  // eigenvalues only: no reflectors written, the same d and e bitwise
    gpu_.bulge_chase_values(n, b, dab.get(), b + 1, vd.data(), ve.data());
    EXPECT_EQ(std::memcmp(vd.data(), gd.data(), sizeof(double) * n), 0);
    EXPECT_EQ(std::memcmp(ve.data(), ge.data(), sizeof(double) * (n - 1)), 0);
    ASSERT_EQ(gu.layout.n, hu.layout.n);
    ASSERT_EQ(gu.layout.b, hu.layout.b);
    // T agrees with the host's through its eigenvalues (T's entries are not well-conditioned
    // functions of B at large n; see bench/RESULTS.md, GPU bulge chasing).
    Mat hev = hd, gev = gd, hee = he, gee = ge;
    ASSERT_EQ(tridiagonal_eigenvalues(n, hev.data(), hee.data()), 0);
    ASSERT_EQ(tridiagonal_eigenvalues(n, gev.data(), gee.data()), 0);
    EXPECT_LT(test::eigenvalue_difference(gev, hev), 1e-13 * std::sqrt(static_cast<double>(n)));
    // bc_back on the device's own reflectors (kept there) equals the host's with the same U.
    const long m = std::min(n, 65L);
    const Mat x0 = random_vector(m * n, 5);
    Mat want = x0;
    host::apply_bc_back(gu, m, want.data(), m);
    Dev x(gpu_, x0);
    gpu_.bc_back(gu, m, x.get(), m);
    const Mat got = x.to_host(m * n);
    EXPECT_LT(max_abs_diff(got, want), 1e-15 * n * 8);
    // Reflectors kept on the device only (as the engine asks): no host vectors, the same d, e
    // and bc_back bitwise; released, they cannot be used.
    ReflectorStore ku;
    Mat kd(n), ke(n);
    gpu_.bulge_chase(n, b, dab.get(), b + 1, kd.data(), ke.data(), ku, /*host_copy=*/false);
    EXPECT_EQ(std::memcmp(kd.data(), gd.data(), sizeof(double) * n), 0);
    EXPECT_EQ(std::memcmp(ke.data(), ge.data(), sizeof(double) * (n - 1)), 0);
    EXPECT_TRUE(ku.v.empty() && ku.tau.empty());
    ASSERT_EQ(ku.layout.count(), gu.layout.count());
    Dev kx(gpu_, x0);
    gpu_.bc_back(ku, m, kx.get(), m);
    EXPECT_TRUE(bitwise_equal(kx.to_host(m * n), got));
    gpu_.release_reflectors();
    if (ku.layout.count() > 0) EXPECT_THROW(gpu_.bc_back(ku, m, kx.get(), m), std::logic_error);
  }
}

struct EngineRun {
  Mat w, z;
  int info = 0;
};

EngineRun engine(EngineBackend& be, const Mat& a, long n, bool vectors, bool overlap = false,
                 bool dc_early = false) {
  const EngineOptions defaults;
  const EngineLayout L = plan_engine_layout(n, 1, defaults.b);
  EngineOptions opt;
  opt.want_vectors = vectors;
  opt.overlap_sbr_back = overlap;
  opt.dc_at_sbr_back = dc_early;
  EngineRun r;
  r.w.assign(n, 0.0);
  r.z.assign(vectors ? n * n : 1, 0.0);
  EngineStats st;
  r.info = run_engine(be, MPI_COMM_SELF, L, a.data(), r.w.data(), r.z.data(), opt, &st);
  return r;
}

// The one-stage path on one GPU (cusolverDnXsyevd) against the host's two-stage engine, odd n
// included: the caller's triangle alone (NaN in the other, the upper one mirrored on the device)
// and the full matrix; eigenvalues to 1e-12, residual and orthogonality under ScaLAPACK's
// threshold, and repeated GPU runs bitwise identical.
TEST_F(GpuBackendTest, OneStageOnOneGpuEqualsHostEngine) {
  for (long n : {1L, 2L, 3L, 31L, 100L, 513L, 2001L})
    for (bool vectors : {true, false})
      for (char triangle : {'L', 'U', char(0)}) {
        SCOPED_TRACE("n=" + std::to_string(n) + (vectors ? " JOBZ=V" : " JOBZ=N") +
                     " triangle=" + (triangle ? std::string(1, triangle) : "full"));
        const Mat a = random_symmetric(n, n, static_cast<unsigned>(n * 5 + 3));
        Mat given = a;
        if (triangle)
          for (long j = 0; j < n; ++j)
            for (long i = 0; i < n; ++i)
              if (triangle == 'L' ? i < j : i > j) given[i + j * n] = std::nan("");
        const EngineRun h = engine(host_, a, n, vectors);
        EngineOptions opt;
        opt.want_vectors = vectors;
        opt.symmetrize = triangle;
        const EngineLayout L = plan_engine_layout(n, 1, opt.b);
        EngineRun g[2];
        for (EngineRun& r : g) {
          r.w.assign(n, 0.0);
          r.z.assign(vectors ? n * n : 1, 0.0);
          r.info = run_one_stage(gpu_, MPI_COMM_SELF, L, given.data(), r.w.data(), r.z.data(), opt,
                                 nullptr);
        }
        ASSERT_EQ(h.info, 0);
        ASSERT_EQ(g[0].info, 0);
        EXPECT_TRUE(bitwise_equal(g[0].w, g[1].w));
        EXPECT_TRUE(bitwise_equal(g[0].z, g[1].z));
        EXPECT_LT(test::eigenvalue_difference(g[0].w, h.w), 1e-12);
        if (vectors) {
          const int ni = static_cast<int>(n);
          EXPECT_LT(test::residual(ni, a, g[0].z, g[0].w), test::kScalapackThreshold);
          EXPECT_LT(test::orthogonality(ni, g[0].z), test::kScalapackThreshold);
        }
      }
}

// The backend's solver alone at a leading dimension beyond n: the host's dsyevd's eigenvalues.
TEST_F(GpuBackendTest, SymmetricEigensolverWithPaddingEqualsHost) {
  for (long n : {1L, 7L, 130L})
    for (bool vectors : {true, false}) {
      SCOPED_TRACE("n=" + std::to_string(n) + (vectors ? " JOBZ=V" : " JOBZ=N"));
      const long lda = n + 5;
      const Mat a = random_symmetric(n, lda, static_cast<unsigned>(n + 11));
      Mat h = a, wh(n), wg(n);
      ASSERT_EQ(host_.symmetric_eigensolver(vectors, n, h.data(), lda, wh.data()), 0);
      Dev d(gpu_, a);
      ASSERT_EQ(gpu_.symmetric_eigensolver(vectors, n, d.get(), lda, wg.data()), 0);
      EXPECT_LT(test::eigenvalue_difference(wg, wh), 1e-12);
    }
}

}  // namespace
}  // namespace pipevd
