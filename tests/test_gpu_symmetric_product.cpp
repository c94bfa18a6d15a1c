// Z = S W reading S's lower triangle only (gpu/symmetric_product.cuh) against cuBLAS dgemm('T',
// 'N') on the full symmetric S: equal to rounding (norm-wise, relative to ||S||_F ||W||_F), with
// NaN above the diagonal of the given S (and in every padding row of S, W) so that a read of any of
// it would show; Z's padding rows untouched; every result computed twice and bitwise equal. S comes
// in two column segments (split, distinct leading dimensions; odd ones force the 8-byte copies,
// even ones on aligned pointers allow the 16-byte ones).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/gpu_context.hpp"
#include "gpu/symmetric_product.cuh"
#include "tests/support/fresh_seed.hpp"
#include "tests/support/test_size_limit.hpp"

namespace {

using pipevd::gpu::SymmetricProductParams;
using pipevd::gpu::SymmetricProductPlan;
using pipevd::gpu::SymmetricProductShape;

using pipevd::test::fresh_seed;

// A device array, freed on scope exit.
struct DeviceArray {
  double* p = nullptr;
  std::size_t count = 0;
  explicit DeviceArray(std::size_t n) : count(std::max<std::size_t>(n, 1)) {
    PIPEVD_CUDA_CHECK(cudaMalloc(&p, count * sizeof(double)));
  }
  explicit DeviceArray(const std::vector<double>& h) : DeviceArray(h.size()) {
    PIPEVD_CUDA_CHECK(cudaMemcpy(p, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<double> to_host(std::size_t n) const {
    std::vector<double> h(n);
    PIPEVD_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(double), cudaMemcpyDeviceToHost));
    return h;
  }
};

struct Blas {
  cublasHandle_t h = nullptr;
  Blas() { PIPEVD_CUBLAS_CHECK(cublasCreate(&h)); }
  ~Blas() { cublasDestroy(h); }
};
cublasHandle_t blas() {
  static Blas b;
  return b.h;
}

long double frobenius(const std::vector<double>& a, std::int64_t rows, std::int64_t cols,
                      std::int64_t ld) {
  long double s = 0;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      const long double x = a[static_cast<std::size_t>(i + j * ld)];
      s += x * x;
    }
  return std::sqrt(s);
}

std::int64_t odd_third(std::int64_t m) {
  const std::int64_t s = m / 3;
  return std::min(m, s % 2 == 0 ? s + 1 : s);
}

// Leading dimensions > m of S's two segments, W and Z: odd ones, or even ones.
struct Lds {
  std::int64_t ld1, ld2, ldw, ldz;
};
Lds leading_dimensions(std::int64_t m, bool even) {
  const std::int64_t base = even ? (m % 2 == 0 ? m + 2 : m + 1) : (m % 2 == 0 ? m + 1 : m + 2);
  return {base, base + 4, base + 2, base + 6};
}

// One case: Z = S W through `plan` (twice) against cuBLAS on the full S.
void check_case(const SymmetricProductPlan& plan, std::int64_t split, const Lds& l,
                std::mt19937_64& gen) {
  const std::int64_t m = plan.m, b = plan.b;
  SCOPED_TRACE("m=" + std::to_string(m) + " b=" + std::to_string(b) +
               " split=" + std::to_string(split) + " ld1=" + std::to_string(l.ld1) + " ld2=" +
               std::to_string(l.ld2) + " stages=" + std::to_string(plan.params.shape.stages) +
               " k16=" + std::to_string(plan.params.shape.k16) +
               " roles=" + std::to_string(plan.params.shape.roles) +
               " passes=" + std::to_string(plan.passes.size()) +
               " blocks=" + std::to_string(plan.passes.front().blocks));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto at = [](std::int64_t i, std::int64_t j, std::int64_t ld) {
    return static_cast<std::size_t>(i + j * ld);
  };
  // The full symmetric S (ld m), and its two segments with NaN above the diagonal and below m.
  std::vector<double> full(static_cast<std::size_t>(m * m));
  for (std::int64_t j = 0; j < m; ++j)
    for (std::int64_t i = j; i < m; ++i) full[at(i, j, m)] = full[at(j, i, m)] = u(gen);
  std::vector<double> h1(static_cast<std::size_t>(l.ld1 * std::max<std::int64_t>(split, 1)), nan);
  std::vector<double> h2(static_cast<std::size_t>(l.ld2 * std::max<std::int64_t>(m - split, 1)),
                         nan);
  for (std::int64_t j = 0; j < m; ++j)
    for (std::int64_t i = j; i < m; ++i) {
      if (j < split)
        h1[at(i, j, l.ld1)] = full[at(i, j, m)];
      else
        h2[at(i, j - split, l.ld2)] = full[at(i, j, m)];
    }
  std::vector<double> hw(static_cast<std::size_t>(l.ldw * b), nan);
  for (std::int64_t j = 0; j < b; ++j)
    for (std::int64_t i = 0; i < m; ++i) hw[at(i, j, l.ldw)] = u(gen);
  const double sentinel = -12345.0;
  std::vector<double> hz(static_cast<std::size_t>(l.ldz * b), sentinel);

  DeviceArray d_full(full), d1(h1), d2(h2), dw(hw), z1(hz), z2(hz), zref(hz),
      work(std::vector<double>(static_cast<std::size_t>(plan.workspace),
                               nan));  // never read unwritten
  cudaStream_t stream;
  PIPEVD_CUDA_CHECK(cudaStreamCreate(&stream));
  const double one = 1.0, zero = 0.0;
  PIPEVD_CUBLAS_CHECK(cublasSetStream(blas(), stream));
  PIPEVD_CUBLAS_CHECK(cublasDgemm_64(blas(), CUBLAS_OP_T, CUBLAS_OP_N, m, b, m, &one, d_full.p, m,
                                     dw.p, l.ldw, &zero, zref.p, l.ldz));
  pipevd::gpu::symmetric_product(plan, stream, d1.p, l.ld1, d2.p, l.ld2, split, dw.p, l.ldw, z1.p,
                                 l.ldz, work.p);
  pipevd::gpu::symmetric_product(plan, stream, d1.p, l.ld1, d2.p, l.ld2, split, dw.p, l.ldw, z2.p,
                                 l.ldz, work.p);
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
  PIPEVD_CUDA_CHECK(cudaStreamDestroy(stream));
  const std::size_t nz = hz.size();
  const auto ref = zref.to_host(nz), out1 = z1.to_host(nz), out2 = z2.to_host(nz);

  long double diff2 = 0;
  std::int64_t not_finite = 0, padding_changed = 0, moved = 0;
  for (std::int64_t j = 0; j < b; ++j)
    for (std::int64_t i = 0; i < l.ldz; ++i) {
      const std::size_t k = at(i, j, l.ldz);
      if (i < m) {
        const long double d = static_cast<long double>(out1[k]) - ref[k];
        diff2 += d * d;
        if (!std::isfinite(out1[k])) ++not_finite;
      } else if (out1[k] != sentinel || out2[k] != sentinel) {
        ++padding_changed;
      }
      if (std::memcmp(&out1[k], &out2[k], sizeof(double)) != 0) ++moved;
    }
  // Each entry is a sum of m products: both results lie within m eps (|S| |W|)(i, j) of the exact
  // one, so their difference within 2 m eps ||S||_F ||W||_F norm-wise.
  const double eps = std::numeric_limits<double>::epsilon();
  const double scale = static_cast<double>(frobenius(full, m, m, m) * frobenius(hw, m, b, l.ldw));
  const double err = static_cast<double>(std::sqrt(diff2));
  EXPECT_EQ(not_finite, 0) << "NaN or Inf in Z: S above its diagonal or a padding row was read?";
  EXPECT_LE(err, 2.0 * static_cast<double>(m + 2) * eps * scale) << "relative " << err / scale;
  EXPECT_EQ(padding_changed, 0) << "Z's rows >= m were written";
  EXPECT_EQ(moved, 0) << "two runs on the same inputs differ";
}

SymmetricProductPlan plan(std::int64_t m, std::int64_t b, const SymmetricProductParams& p = {}) {
  return pipevd::gpu::plan_symmetric_product(0, m, b, p);
}

class SymmetricProduct : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t>> {};

TEST_P(SymmetricProduct, AgainstCublasGemm) {
  const auto [m, b] = GetParam();
  if (pipevd::test::over_test_order(m)) GTEST_SKIP() << "m over PIPEVD_TEST_MAX_N";
  std::mt19937_64 gen(fresh_seed());
  const SymmetricProductPlan p = plan(m, b);
  for (const std::int64_t split : {std::int64_t{0}, odd_third(m), m})
    for (const bool even : {false, true}) check_case(p, split, leading_dimensions(m, even), gen);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SymmetricProduct,
                         ::testing::Combine(::testing::Values<std::int64_t>(1, 7, 63, 64, 65, 300,
                                                                            1000, 2049, 4097),
                                            ::testing::Values<std::int64_t>(1, 17, 32, 64)));

// Every compiled shape, with and without 16-byte copies and the L2 hint.
TEST(SymmetricProductShapes, EveryShape) {
  std::mt19937_64 gen(fresh_seed());
  int optin = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  for (const SymmetricProductShape& s : pipevd::gpu::symmetric_product_shapes()) {
    if (pipevd::gpu::symmetric_product_shared_bytes(s) > static_cast<std::size_t>(optin)) {
      SymmetricProductParams p;
      p.shape = s;
      EXPECT_LT(plan(1000, 32, p).params.shape.stages, s.stages);  // fewer stages
      continue;
    }
    for (const bool vec : {false, true}) {
      SymmetricProductParams p;
      p.shape = s;
      p.vector_loads = vec;
      p.evict_first = !vec;
      for (const std::int64_t m : {std::int64_t{513}, std::int64_t{2049}})
        check_case(plan(m, 32, p), odd_third(m), leading_dimensions(m, true), gen);
    }
  }
}

// Few blocks (a chunk spans several strips and pieces) and many (chunks cut strips).
TEST(SymmetricProductShapes, BlockCounts) {
  std::mt19937_64 gen(fresh_seed());
  for (const int blocks : {1, 2, 3, 7, 50, 1000}) {
    SymmetricProductParams p;
    p.blocks = blocks;
    for (const std::int64_t m : {std::int64_t{777}, std::int64_t{4097}}) {
      const SymmetricProductPlan pl = plan(m, 32, p);
      ASSERT_EQ(pl.passes.size(), 1u);
      EXPECT_LE(pl.passes.front().blocks, blocks);
      check_case(pl, odd_third(m), leading_dimensions(m, m % 2 == 0), gen);
    }
  }
}

// A workspace cap: several passes (the first writes Z, the later ones add), each within the cap.
TEST(SymmetricProductShapes, WorkspaceCap) {
  std::mt19937_64 gen(fresh_seed());
  for (const std::int64_t m : {std::int64_t{1000}, std::int64_t{4097}}) {
    const std::int64_t one_pass = plan(m, 64).workspace;
    SymmetricProductParams p;
    p.max_workspace = one_pass / 3;
    const SymmetricProductPlan pl = plan(m, 64, p);
    EXPECT_GE(pl.passes.size(), 2u);
    EXPECT_LT(pl.workspace, one_pass);
    // Within the cap wherever a pass has more than one strip (one strip alone may exceed it).
    for (const auto& pass : pl.passes) {
      EXPECT_LE(pass.workspace, pl.workspace);
      if (pass.end_strip - pass.first_strip > 1) EXPECT_LE(pass.workspace, p.max_workspace);
    }
    for (const std::int64_t b : {std::int64_t{7}, std::int64_t{64}}) {
      const SymmetricProductPlan pb = plan(m, b, p);
      check_case(pb, odd_third(m), leading_dimensions(m, false), gen);
      check_case(pb, 0, leading_dimensions(m, true), gen);
    }
  }
  // A cap below one strip's need: one strip a pass.
  SymmetricProductParams tiny;
  tiny.max_workspace = 1;
  const SymmetricProductPlan pl = plan(1000, 32, tiny);
  EXPECT_EQ(pl.passes.size(), static_cast<std::size_t>(pl.strips));
  check_case(pl, 333, leading_dimensions(1000, true), gen);
}

// The workspace: 512 doubles a stage (T = 8 s (s - 1) + ceil(m / 16) stages, s = ceil(m / 256)
// strips) plus 8192 a direct piece (at most s + blocks - 1): about m^2 / 16 for large m.
TEST(SymmetricProductShapes, WorkspaceSize) {
  for (const std::int64_t m :
       {std::int64_t{1000}, std::int64_t{8192}, std::int64_t{32768}, std::int64_t{49152}}) {
    const SymmetricProductPlan pl = plan(m, 32);
    ASSERT_EQ(pl.passes.size(), 1u);
    const auto& pass = pl.passes.front();
    const std::int64_t s = (m + 255) / 256;
    EXPECT_EQ(pl.strips, s);
    EXPECT_EQ(pass.stages, 8 * s * (s - 1) + (m + 15) / 16);
    EXPECT_LE(pass.pieces, s + pass.blocks - 1);
    EXPECT_EQ(pl.workspace, 512 * pass.stages + 8192 * pass.pieces);
    EXPECT_EQ(pl.workspace, plan(m, 64).workspace);  // b > 32: the same workspace, reused
    const double sixteenth = static_cast<double>(m) * static_cast<double>(m) / 16;
    if (m >= 32768) EXPECT_LE(static_cast<double>(pl.workspace), 1.1 * sixteenth);
  }
  EXPECT_EQ(plan(0, 32).workspace, 0);
  EXPECT_EQ(plan(100, 0).workspace, 0);
}

TEST(SymmetricProductShapes, RejectsBadArguments) {
  EXPECT_THROW(plan(-1, 32), std::invalid_argument);
  EXPECT_THROW(plan(10, -1), std::invalid_argument);
  SymmetricProductParams p;
  p.shape = SymmetricProductShape{5, true};
  EXPECT_THROW(plan(10, 32, p), std::invalid_argument);
  const SymmetricProductPlan pl = plan(10, 4);
  DeviceArray a(1000), w(pl.workspace);
  EXPECT_THROW(
      pipevd::gpu::symmetric_product(pl, nullptr, a.p, 10, a.p, 10, 11, a.p, 10, a.p, 10, w.p),
      std::invalid_argument);  // split > m
  EXPECT_THROW(
      pipevd::gpu::symmetric_product(pl, nullptr, a.p, 10, a.p, 10, 5, a.p, 9, a.p, 10, w.p),
      std::invalid_argument);  // ldw < m
  EXPECT_THROW(
      pipevd::gpu::symmetric_product(pl, nullptr, a.p, 10, nullptr, 10, 5, a.p, 10, a.p, 10, w.p),
      std::invalid_argument);  // no s2 while split < m
  EXPECT_THROW(
      pipevd::gpu::symmetric_product(pl, nullptr, a.p, 10, a.p, 10, 5, a.p, 10, a.p, 10, nullptr),
      std::invalid_argument);  // no workspace
}

}  // namespace
