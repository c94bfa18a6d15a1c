// The complex BC-back kernels on the GPU (gpu/bc_back_complex.cuh: the BLAS2 kernel, every
// compiled variant and block size, the thread-per-row generic kernel, and every compiled shape of
// the tensor-core kernel, gpu/bc_back_complex_tensor.cuh, for b <= 32) against
// host::apply_bc_back on the reflectors and phase of a complex bulge chasing (host::bulge_chase of
// a random Hermitian band): X Q_b D to rounding, X Q_b without the phase, rows past m (the ldx
// padding) untouched, a repeated run of the same kernel bitwise identical, and rows split over two
// calls bitwise the rows of one (rows are independent). Sizes include odd n, n < b + 2 (the clamped
// band) and b = 1, 2, 16, 32, and bands narrower than their kernel's compile-time width (the window
// does not slide).
#include <cuComplex.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/reflector_store.hpp"
#include "gpu/bc_back_complex.cuh"
#include "gpu/bc_back_complex_tensor.cuh"
#include "gpu/group_lanes_choice.hpp"
#include "host/bc_back.hpp"
#include "host/bulge_chasing.hpp"
#include "tests/support/cuda_array.hpp"
#include "tests/support/test_size_limit.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Complex = std::complex<double>;
using ZMat = std::vector<Complex>;
using test::bitwise_equal;
using test::check_cuda;
using test::max_abs_diff;
using Dev = test::CudaArray<Complex, cuDoubleComplex>;

ZMat random_complex(long count, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ZMat a(static_cast<size_t>(count));
  for (Complex& x : a) x = Complex(u(gen), u(gen));
  return a;
}

// Reflectors and phase of the chase of a random Hermitian band (b clamped to n - 1 as the engine
// does, at least 1).
ComplexReflectorStore reflectors(long n, long b) {
  const long bw = std::max(1L, std::min(b, n - 1)), ldab = bw + 1;
  ZMat ab = random_complex(ldab * n, static_cast<unsigned>(n * 131 + b));
  for (long j = 0; j < n; ++j) {
    ab[j * ldab] = ab[j * ldab].real();  // a Hermitian band's diagonal is real
    for (long i = 0; i < ldab; ++i)
      if (j + i >= n) ab[i + j * ldab] = 0.0;
  }
  std::vector<double> d(n), e(n);
  ComplexReflectorStore u;
  host::bulge_chase(n, bw, ab.data(), ldab, d.data(), e.data(), u);
  return u;
}

// Each row of X (entries in the unit square) goes through a unitary transformation; the rounding
// error of one entry grows with the reflectors that touch it (about 2n/b of them, each a complex
// dot product of b terms, 4 real products a term): 16 n eps bounds it comfortably, and a wrong
// reflector, conjugate or order gives O(1).
double tolerance(long n) { return 16e-15 * static_cast<double>(std::max(n, 10L)); }

struct Case {
  long n, b;
};

std::vector<Case> cases() {
  std::vector<Case> out{{1, 1},    {2, 1},    {3, 2},    {3, 32},    {4, 2},     {5, 16},
                        {17, 16},  {18, 16},  {33, 32},  {34, 32},   {35, 32},   {64, 1},
                        {101, 1},  {101, 2},  {101, 3},  {101, 8},   {257, 5},   {257, 16},
                        {257, 24}, {257, 32}, {257, 48}, {1001, 16}, {1001, 32}, {4099, 32}};
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const Case& c) { return test::over_test_order(c.n); }),
            out.end());
  return out;
}

// Every kernel that bandwidth b can take: the default, the BLAS2 one, the generic one and, for
// 16 < b <= 32, every compiled variant and other block sizes; for b <= 16 the other prefetch
// setting; for b <= 32, where the device runs them, the tensor-core shapes (the default once).
std::vector<gpu::ComplexBcBackTunables> tunables(long m, long b) {
  const gpu::ComplexBcBackTunables blas2 =
      gpu::default_bc_back_complex_tunables(m, b, gpu::BcBackKernel::Blas2);
  std::vector<gpu::ComplexBcBackTunables> out{gpu::default_bc_back_complex_tunables(m, b)};
  if (out.front().tensor) out.push_back(blas2);
  gpu::ComplexBcBackTunables generic;
  generic.generic = true;
  if (!blas2.generic) out.push_back(generic);
  if (b > 16 && b <= 32) {
    for (const gpu::ComplexBcBackTunables& t : gpu::bc_back_complex_variants()) out.push_back(t);
    for (int threads : {32, 64, 256}) {
      gpu::ComplexBcBackTunables t = blas2;
      t.threads = threads;
      out.push_back(t);
    }
  } else if (b <= 16) {
    gpu::ComplexBcBackTunables t = blas2;
    t.prefetch = !t.prefetch;
    out.push_back(t);
    t.threads = 64;
    out.push_back(t);
  }
  int device = 0;
  check_cuda(cudaGetDevice(&device));
  if (b <= 32 && gpu::bc_back_complex_tensor_runs(device))
    for (const gpu::ComplexBcBackTunables& t : gpu::bc_back_complex_tensor_variants())
      if (!(out.front().tensor && t.group == out.front().group && t.rows == out.front().rows &&
            t.threads == out.front().threads))
        out.push_back(t);
  return out;
}

std::string describe(const gpu::ComplexBcBackTunables& t) {
  return "lanes=" + std::to_string(t.lanes) + " rows=" + std::to_string(t.rows) +
         " group=" + std::to_string(t.group) + " threads=" + std::to_string(t.threads) +
         " prefetch=" + std::to_string(t.prefetch) + " generic=" + std::to_string(t.generic) +
         " tensor=" + std::to_string(t.tensor);
}

TEST(GpuBcBackComplex, EqualsHostEveryKernelBitwiseRepeatable) {
  for (const Case& c : cases()) {
    const ComplexReflectorStore u = reflectors(c.n, c.b);
    ComplexReflectorStore no_phase = u;
    no_phase.phase.clear();
    const ReflectorLayout& L = u.layout;
    ASSERT_EQ(u.phase.size(), static_cast<size_t>(c.n));
    Dev dv(u.v.empty() ? ZMat(1) : u.v), dtau(u.tau.empty() ? ZMat(1) : u.tau), dphase(u.phase);
    for (long m : {1L, 37L, 131L}) {
      const long n = c.n, ldx = m + 3;
      SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(L.b) +
                   " m=" + std::to_string(m));
      const ZMat x0 = random_complex(ldx * n, static_cast<unsigned>(n + 7 * m + 3 * L.b));
      ZMat want = x0, want_q = x0;
      host::apply_bc_back(u, m, want.data(), ldx);
      host::apply_bc_back(no_phase, m, want_q.data(), ldx);
      for (const gpu::ComplexBcBackTunables& t : tunables(m, L.b)) {
        SCOPED_TRACE(describe(t));
        ZMat got[2];
        for (ZMat& g : got) {
          Dev x(x0);
          gpu::bc_back_complex(L, dv.p, dtau.p, dphase.p, m, x.p, ldx, t, nullptr);
          check_cuda(cudaDeviceSynchronize());
          g = x.download(ldx * n);
        }
        EXPECT_TRUE(bitwise_equal(got[0], got[1]));
        EXPECT_LT(max_abs_diff(got[0], want), tolerance(n));
        for (long j = 0; j < n; ++j)
          for (long i = m; i < ldx; ++i) ASSERT_EQ(got[0][i + j * ldx], x0[i + j * ldx]);
        // Without D: X Q_b.
        Dev xq(x0);
        gpu::bc_back_complex(L, dv.p, dtau.p, nullptr, m, xq.p, ldx, t, nullptr);
        check_cuda(cudaDeviceSynchronize());
        EXPECT_LT(max_abs_diff(xq.download(ldx * n), want_q), tolerance(n));
        // Rows [0, m1) and [m1, m) in two calls: bitwise the rows of one call.
        if (m > 1) {
          const long m1 = m / 3 + 1;
          Dev xs(x0);
          gpu::bc_back_complex(L, dv.p, dtau.p, dphase.p, m1, xs.p, ldx, t, nullptr);
          gpu::bc_back_complex(L, dv.p, dtau.p, dphase.p, m - m1, xs.p + m1, ldx, t, nullptr);
          check_cuda(cudaDeviceSynchronize());
          EXPECT_TRUE(bitwise_equal(xs.download(ldx * n), got[0]));
        }
      }
      // The default entry point is the default tunables'.
      Dev x(x0), y(x0);
      gpu::bc_back_complex(L, dv.p, dtau.p, dphase.p, m, x.p, ldx, nullptr);
      gpu::bc_back_complex(L, dv.p, dtau.p, dphase.p, m, y.p, ldx,
                           gpu::default_bc_back_complex_tunables(m, L.b), nullptr);
      check_cuda(cudaDeviceSynchronize());
      EXPECT_TRUE(bitwise_equal(x.download(ldx * n), y.download(ldx * n)));
    }
  }
}

// The tensor kernel's group lanes (gpu/group_lanes.cuh: several blocks per row block, a wavefront
// over the groups of sweeps) change who computes, not what: every lane count gives the rows of one
// lane bitwise, each run repeats bitwise (a missing wait or release would show as a difference),
// and the one-lane rows match the host.
TEST(GpuBcBackComplex, TensorGroupLanesEqualOneLaneBitwise) {
  int device = 0;
  check_cuda(cudaGetDevice(&device));
  if (!gpu::bc_back_complex_tensor_runs(device)) GTEST_SKIP() << "no DMMA on this device";
  for (long n : {37L, 300L, 1001L, 4099L}) {
    if (test::over_test_order(n)) continue;
    const ComplexReflectorStore u = reflectors(n, 32);
    const ReflectorLayout& L = u.layout;
    Dev dv(u.v), dtau(u.tau);
    for (long m : {1L, 129L, 1000L, 3001L}) {
      const long ldx = m + 2;
      const ZMat x0 = random_complex(ldx * n, static_cast<unsigned>(3 * n + m));
      gpu::ComplexBcBackTunables t =
          gpu::default_bc_back_complex_tunables(m, 32, gpu::BcBackKernel::Tensor);
      auto run = [&](int lanes) {
        t.group_lanes = lanes;
        Dev x(x0);
        gpu::bc_back_complex(L, dv.p, dtau.p, nullptr, m, x.p, ldx, t, nullptr);
        check_cuda(cudaDeviceSynchronize());
        return x.download(ldx * n);
      };
      const ZMat one = run(1);
      if (m <= 1000 && n <= 1001) {
        ComplexReflectorStore no_phase = u;
        no_phase.phase.clear();
        ZMat want = x0;
        host::apply_bc_back(no_phase, m, want.data(), ldx);
        EXPECT_LT(max_abs_diff(one, want), tolerance(n));
      }
      for (int lanes : {0, 2, 3, 5, 8}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " lanes=" + std::to_string(lanes));
        const ZMat a = run(lanes), b = run(lanes);
        EXPECT_TRUE(bitwise_equal(a, one));
        EXPECT_TRUE(bitwise_equal(a, b));
      }
      gpu::ComplexBcBackTensorShape s{t.group, t.rows, t.threads / 32, 0};
      const int automatic = gpu::bc_back_complex_tensor_group_lanes(L, m, s, device);
      EXPECT_GE(automatic, 1);
      EXPECT_LE(automatic, std::max(1L, (L.sweeps() + t.group - 1) / t.group));
      // One row block and several groups: lanes that run (a resident count of 0 would quietly
      // give one lane, and every comparison above would pass).
      if (m == 1 && L.sweeps() > t.group) EXPECT_GT(automatic, 1);
      s.group_lanes = 1;
      EXPECT_EQ(gpu::bc_back_complex_tensor_group_lanes(L, m, s, device), 1);
    }
  }
}

// Bands wider than 32 take only the generic kernel; the BLAS2 kernel's tunables and the tensor
// kernel's shape must be compiled.
TEST(GpuBcBackComplex, RejectsBadArguments) {
  const ReflectorLayout L{40, 32};
  EXPECT_THROW(gpu::bc_back_complex(L, nullptr, nullptr, nullptr, 5, nullptr, 4, nullptr),
               std::invalid_argument);
  gpu::ComplexBcBackTunables t;
  t.lanes = 3;
  EXPECT_THROW(gpu::bc_back_complex(L, nullptr, nullptr, nullptr, 5, nullptr, 5, t, nullptr),
               std::invalid_argument);
  t = gpu::ComplexBcBackTunables{};
  t.threads = 48;
  EXPECT_THROW(gpu::bc_back_complex(L, nullptr, nullptr, nullptr, 5, nullptr, 5, t, nullptr),
               std::invalid_argument);
  t = gpu::ComplexBcBackTunables{};
  EXPECT_THROW(gpu::bc_back_complex(ReflectorLayout{80, 48}, nullptr, nullptr, nullptr, 5, nullptr,
                                    5, t, nullptr),
               std::invalid_argument);
  t = gpu::bc_back_complex_tensor_variants().front();
  EXPECT_THROW(gpu::bc_back_complex(ReflectorLayout{80, 48}, nullptr, nullptr, nullptr, 5, nullptr,
                                    5, t, nullptr),
               std::invalid_argument);
  t.group = 40;
  EXPECT_THROW(gpu::bc_back_complex(L, nullptr, nullptr, nullptr, 5, nullptr, 5, t, nullptr),
               std::invalid_argument);
  EXPECT_TRUE(gpu::default_bc_back_complex_tunables(100, 48).generic);
  EXPECT_TRUE(gpu::default_bc_back_complex_tunables(100, 48, gpu::BcBackKernel::Tensor).generic);
  EXPECT_FALSE(gpu::default_bc_back_complex_tunables(100, 32).generic);
  EXPECT_FALSE(gpu::default_bc_back_complex_tunables(100, 32, gpu::BcBackKernel::Blas2).tensor);
  EXPECT_TRUE(gpu::default_bc_back_complex_tunables(100, 32, gpu::BcBackKernel::Tensor).tensor);
  EXPECT_TRUE(gpu::default_bc_back_complex_tunables(100, 8, gpu::BcBackKernel::Tensor).tensor);
  // auto: the tensor-core kernel for 16 < b <= 32 where the device runs it, narrow bands BLAS2.
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(gpu::default_bc_back_complex_tunables(100, 32).tensor,
            gpu::bc_back_complex_tensor_runs(device));
  EXPECT_FALSE(gpu::default_bc_back_complex_tunables(100, 16).tensor);
}

}  // namespace
}  // namespace pipevd
