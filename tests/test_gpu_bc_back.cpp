// The BC-back kernels on the GPU (gpu/bc_back.cuh: BLAS2, every compiled variant; gpu/
// bc_back_blas3.cuh: MAGMA's BLAS3 formulation) against host::apply_bc_back on reflectors of a
// real bulge chasing (host::bulge_chase of a random band): X Q_b to rounding, rows past m (the ldx
// padding) untouched, and a repeated run of the same kernel bitwise identical.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/reflector_store.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/bc_back_blas3.cuh"
#include "gpu/bc_back_tensor.cuh"
#include "gpu/group_lanes_choice.hpp"
#include "host/bc_back.hpp"
#include "host/bulge_chasing.hpp"
#include "tests/support/cuda_array.hpp"
#include "tests/support/test_size_limit.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::bitwise_equal;
using test::check_cuda;
using test::max_abs_diff;
using Dev = test::CudaArray<double>;

// Reflectors of the bulge chasing of a random band (n, b clamped to n - 1 as the engine does).
ReflectorStore reflectors(long n, long b) {
  const long bw = std::max(1L, std::min(b, n - 1)), ldab = bw + 1;
  Mat ab = test::random_vector(ldab * n, static_cast<unsigned>(n * 131 + b));
  for (long j = 0; j < n; ++j)  // the lower band only: entries past row n-1 are not read
    for (long i = 0; i < ldab; ++i)
      if (j + i >= n) ab[i + j * ldab] = 0.0;
  Mat d(n), e(n);
  ReflectorStore u;
  host::bulge_chase(n, bw, ab.data(), ldab, d.data(), e.data(), u);
  return u;
}

// Each row of X (entries in [-1, 1]) goes through an orthogonal transformation; the rounding
// error of one entry grows with the reflectors that touch it (about 2n/b of them, each a dot
// product of b terms): 8 n eps bounds it comfortably, and a wrong reflector or order gives O(1).
double tolerance(long n) { return 8e-15 * static_cast<double>(std::max(n, 10L)); }

struct Case {
  long n, b, m;
};

// b in {2, 4, 8, 16, 32, 64} (plus 5 and 24: bands narrower than their kernel's compile-time
// width, where the window does not slide), clamped to n - 1; odd and even m.
std::vector<Case> cases() {
  std::vector<Case> out;
  for (long n : {3L, 33L, 100L, 1000L, 4099L}) {
    if (test::over_test_order(n)) continue;
    std::vector<long> done;
    for (long b : {2L, 4L, 5L, 8L, 16L, 24L, 32L, 64L}) {
      const long bw = std::max(2L, std::min(b, n - 1));
      if (std::find(done.begin(), done.end(), bw) != done.end() ||
          (n > 4000 && (b == 5 || b == 24)))
        continue;
      done.push_back(bw);
      for (long m : n > 4000 ? std::vector<long>{37, 64} : std::vector<long>{1, 37, 300})
        out.push_back({n, bw, m});
    }
  }
  return out;
}

TEST(GpuBcBack, Blas2EqualsHostEveryVariantBitwiseRepeatable) {
  long last_n = -1, last_b = -1;
  ReflectorStore u;
  for (const Case& c : cases()) {
    if (c.n != last_n || c.b != last_b) u = reflectors(c.n, c.b);
    last_n = c.n, last_b = c.b;
    const ReflectorLayout& L = u.layout;
    const long n = c.n, m = c.m, ldx = m + 3;
    SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(L.b) +
                 " m=" + std::to_string(m));
    const Mat x0 = test::random_vector(ldx * n, static_cast<unsigned>(n + 7 * m + 3 * L.b));
    Mat want = x0;
    host::apply_bc_back(u, m, want.data(), ldx);
    Dev dv(u.v.empty() ? Mat(1, 0.0) : u.v), dtau(u.tau.empty() ? Mat(1, 0.0) : u.tau);
    // The default dispatch, then (16 < b <= 32) every compiled variant and other block sizes.
    std::vector<gpu::BcBackTunables> tuns{gpu::default_bc_back_tunables(m, L.b)};
    if (L.b > 16 && L.b <= 32) {
      for (const gpu::BcBackTunables& t : gpu::bc_back_variants()) tuns.push_back(t);
      for (int threads : {32, 64, 256}) {
        gpu::BcBackTunables t = tuns.front();
        if (t.tensor) break;  // a tensor shape's block size is compiled in
        t.threads = threads;
        tuns.push_back(t);
      }
    } else if (L.b <= 16) {  // the fixed narrow-band kernels, with and without prefetch
      gpu::BcBackTunables t = tuns.front();
      t.prefetch = !t.prefetch;
      tuns.push_back(t);
      for (const gpu::BcBackTunables& v : gpu::bc_back_variants())  // the tensor kernel: any b
        if (v.tensor) tuns.push_back(v);
    }
    for (const gpu::BcBackTunables& t : tuns) {
      SCOPED_TRACE("lanes=" + std::to_string(t.lanes) + " rows=" + std::to_string(t.rows) +
                   " group=" + std::to_string(t.group) + " threads=" + std::to_string(t.threads) +
                   " prefetch=" + std::to_string(t.prefetch) +
                   " tensor=" + std::to_string(t.tensor));
      Mat got[2];
      for (Mat& g : got) {
        Dev x(x0);
        gpu::bc_back(L, dv.p, dtau.p, m, x.p, ldx, t, nullptr);
        check_cuda(cudaDeviceSynchronize());
        g = x.download(ldx * n);
      }
      EXPECT_TRUE(bitwise_equal(got[0], got[1]));
      EXPECT_LT(max_abs_diff(got[0], want), tolerance(n));
      for (long j = 0; j < n; ++j)
        for (long i = m; i < ldx; ++i) ASSERT_EQ(got[0][i + j * ldx], x0[i + j * ldx]);
    }
    // The default entry point is the default tunables'.
    Dev x(x0);
    gpu::bc_back(L, dv.p, dtau.p, m, x.p, ldx, nullptr);
    check_cuda(cudaDeviceSynchronize());
    Dev y(x0);
    gpu::bc_back(L, dv.p, dtau.p, m, y.p, ldx, tuns.front(), nullptr);
    check_cuda(cudaDeviceSynchronize());
    EXPECT_TRUE(bitwise_equal(x.download(ldx * n), y.download(ldx * n)));
  }
}

// The tensor kernel's group lanes (a wavefront over the groups of sweeps, several blocks per row
// block) change who computes, not what: every lane count gives the rows of one lane bitwise, each
// run repeats bitwise (a missing wait or release would show as a difference), and rows many enough
// for several row blocks, with the automatic count, match the host.
TEST(GpuBcBack, TensorGroupLanesEqualOneLaneBitwise) {
  int device = 0;
  check_cuda(cudaGetDevice(&device));
  for (long n : {37L, 300L, 1001L, 4099L}) {
    if (test::over_test_order(n)) continue;
    const ReflectorStore u = reflectors(n, 32);
    const ReflectorLayout& L = u.layout;
    Dev dv(u.v), dtau(u.tau);
    for (long m : {1L, 129L, 1000L, 3001L}) {
      const long ldx = m + 2;
      const Mat x0 = test::random_vector(ldx * n, static_cast<unsigned>(3 * n + m));
      gpu::BcBackTunables t = gpu::default_bc_back_tunables(m, 32, gpu::BcBackKernel::Tensor);
      auto run = [&](int lanes) {
        t.group_lanes = lanes;
        Dev x(x0);
        gpu::bc_back(L, dv.p, dtau.p, m, x.p, ldx, t, nullptr);
        check_cuda(cudaDeviceSynchronize());
        return x.download(ldx * n);
      };
      const Mat one = run(1);
      if (m <= 1000 && n <= 1001) {
        Mat want = x0;
        host::apply_bc_back(u, m, want.data(), ldx);
        EXPECT_LT(max_abs_diff(one, want), tolerance(n));
      }
      for (int lanes : {0, 2, 3, 5, 8}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " lanes=" + std::to_string(lanes));
        const Mat a = run(lanes), b = run(lanes);
        EXPECT_TRUE(bitwise_equal(a, one));
        EXPECT_TRUE(bitwise_equal(a, b));
      }
      gpu::BcBackTensorShape s{t.group, t.rows, t.threads / 32, t.prefetch, 0};
      const int automatic = gpu::bc_back_tensor_group_lanes(L, m, s, device);
      EXPECT_GE(automatic, 1);
      EXPECT_LE(automatic, std::max(1L, (L.sweeps() + t.group - 1) / t.group));
      // One row block and several groups: lanes that run (a resident count of 0 would quietly
      // give one lane, and every comparison above would pass).
      if (m == 1 && L.sweeps() > t.group) EXPECT_GT(automatic, 1);
      s.group_lanes = 1;
      EXPECT_EQ(gpu::bc_back_tensor_group_lanes(L, m, s, device), 1);
    }
  }
}

TEST(GpuBcBack, Blas3EqualsBlas2AndHost) {
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  for (long n : {3L, 33L, 100L, 1000L, 4099L})
    for (long b : {2L, 8L, 24L, 32L, 64L}) {
      if ((b > 2 && b > n - 1) || (n > 4000 && b != 32) || test::over_test_order(n))
        continue;  // n = 4099: cuBLAS calls
      const ReflectorStore u = reflectors(n, b);
      const ReflectorLayout& L = u.layout;
      Dev dv(u.v.empty() ? Mat(1, 0.0) : u.v), dtau(u.tau.empty() ? Mat(1, 0.0) : u.tau);
      for (long m : {37L, 130L}) {
        const long ldx = m + 1;
        const Mat x0 = test::random_vector(ldx * n, static_cast<unsigned>(5 * n + m + b));
        Mat want = x0;
        if (n < 4000) host::apply_bc_back(u, m, want.data(), ldx);
        Dev x2(x0);
        gpu::bc_back(L, dv.p, dtau.p, m, x2.p, ldx, nullptr);
        check_cuda(cudaDeviceSynchronize());
        const Mat blas2 = x2.download(ldx * n);
        if (n >= 4000) want = blas2;  // host time: the BLAS2 kernel, checked against it above
        // Group 1 (one cuBLAS block per reflector) only where the reflectors are few.
        const std::vector<int> groups =
            n <= 100 ? std::vector<int>{1, 7, 32, 64} : std::vector<int>{7, 32, 64};
        for (int group : groups) {
          SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(L.b) +
                       " m=" + std::to_string(m) + " group=" + std::to_string(group));
          Dev work(static_cast<long>(gpu::bc_back_blas3_workspace_bytes(L, m, group) / 8 + 1));
          Dev x3(x0);
          gpu::bc_back_blas3(L, dv.p, dtau.p, m, x3.p, ldx, group, work.p, h, nullptr);
          check_cuda(cudaDeviceSynchronize());
          const Mat blas3 = x3.download(ldx * n);
          EXPECT_LT(max_abs_diff(blas3, blas2), tolerance(n));
          EXPECT_LT(max_abs_diff(blas3, want), tolerance(n));
          for (long j = 0; j < n; ++j) ASSERT_EQ(blas3[m + j * ldx], x0[m + j * ldx]);
        }
      }
    }
  cublasDestroy(h);
}

TEST(GpuBcBack, RejectsBadArguments) {
  const ReflectorLayout L{40, 32};
  EXPECT_THROW(gpu::bc_back(L, nullptr, nullptr, 5, nullptr, 4, nullptr), std::invalid_argument);
  gpu::BcBackTunables t;
  t.lanes = 3;
  EXPECT_THROW(gpu::bc_back(L, nullptr, nullptr, 5, nullptr, 5, t, nullptr), std::invalid_argument);
  t = gpu::BcBackTunables{};
  t.threads = 48;
  EXPECT_THROW(gpu::bc_back(L, nullptr, nullptr, 5, nullptr, 5, t, nullptr), std::invalid_argument);
}

// The rows one launch holds at once: whole blocks on every SM, within the SMs' thread capacity,
// for the default tunables of large and small m (the tensor kernel's wave shared by its automatic
// group lanes: as many as the resident blocks over the row blocks, at most 8); not modelled for the
// generic kernel (b > 32).
TEST(GpuBcBack, WaveRowsAreWholeBlocksOnEverySm) {
  int device = 0, sms = 0, threads_per_sm = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device),
            cudaSuccess);
  for (gpu::BcBackKernel kernel : {gpu::BcBackKernel::Auto, gpu::BcBackKernel::Blas2})
    for (long m : {1000L, 16384L, 32768L}) {
      SCOPED_TRACE("m=" + std::to_string(m) +
                   " kernel=" + std::to_string(static_cast<int>(kernel)));
      const gpu::BcBackTunables t = gpu::default_bc_back_tunables(m, 32, kernel);
      const long per_block = t.tensor ? 8L * t.rows * (t.threads / 32)
                                      : static_cast<long>(t.threads / t.lanes) * t.rows;
      // The tensor kernel's wave is the whole row blocks a round of the resident blocks runs with
      // the group lanes m rows take (gpu/group_lanes_choice.hpp).
      const ReflectorLayout many_groups{65536, 32};
      const long lanes =
          t.tensor ? gpu::bc_back_tensor_group_lanes(
                         many_groups, m,
                         {t.group, t.rows, t.threads / 32, t.prefetch, t.group_lanes}, device)
                   : 1;
      const long wave = gpu::bc_back_wave_rows(m, 32, device, kernel);
      EXPECT_GT(wave, 0);
      EXPECT_EQ(wave % per_block, 0) << "whole row blocks";
      const long per_sm = (wave / per_block * lanes + lanes - 1) / sms;  // resident blocks an SM
      EXPECT_GE(per_sm, 1);
      EXPECT_LE(per_sm * t.threads, threads_per_sm);
      EXPECT_EQ(wave / per_block, per_sm * sms / lanes) << "floor(resident / lanes) row blocks";
      if (t.tensor)
        EXPECT_EQ(lanes,
                  gpu::group_lanes_for_rounds((m + per_block - 1) / per_block, per_sm * sms, 8));
    }
  EXPECT_EQ(gpu::bc_back_wave_rows(32768, 64, device), 0);
}

}  // namespace
}  // namespace pipevd
