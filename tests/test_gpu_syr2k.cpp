// The recursive syr2k (gpu/syr2k.hpp) against cuBLAS's Dsyr2k on fresh random inputs: lower
// triangles agree to rounding, nothing outside the lower triangle is written, repeated runs are
// bitwise equal.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/gpu_context.hpp"
#include "gpu/syr2k.hpp"
#include "tests/support/fresh_seed.hpp"
#include "tests/support/test_size_limit.hpp"

namespace {

using pipevd::kSyr2kPackMaxK;
using pipevd::OutOfMemory;
using pipevd::syr2k_workspace;
using pipevd::Syr2kWorkspace;
using pipevd::gpu::GpuContext;
using pipevd::gpu::GpuError;
using pipevd::gpu::pool_malloc;
using pipevd::gpu::ScopedDevice;
using pipevd::gpu::Syr2kParams;

using pipevd::test::fresh_seed;

std::vector<double> random_matrix(std::int64_t rows, std::int64_t cols, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> m(static_cast<std::size_t>(rows * cols));
  for (double& x : m) x = u(gen);
  return m;
}

// A device copy of a host array, freed on scope exit.
struct DeviceArray {
  double* p = nullptr;
  std::int64_t count = 0;
  explicit DeviceArray(const std::vector<double>& h) : count(static_cast<std::int64_t>(h.size())) {
    PIPEVD_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, h.size()) * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMemcpy(p, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(p); }
  std::vector<double> to_host() const {
    std::vector<double> h(static_cast<std::size_t>(count));
    PIPEVD_CUDA_CHECK(cudaMemcpy(h.data(), p, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
    return h;
  }
};

double frobenius(const std::vector<double>& m) {
  long double s = 0;
  for (double x : m) s += static_cast<long double>(x) * x;
  return static_cast<double>(std::sqrt(s));
}

struct Case {
  std::int64_t n, k, lda, ldb, ldc;
  double alpha, beta;
};

// Runs cuBLAS and ours (twice) on the same inputs and checks the three properties.
void check_against_cublas(const Case& c, const Syr2kParams& p, std::mt19937_64& gen,
                          bool nan_in_c = false) {
  SCOPED_TRACE("n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " nb=" +
               std::to_string(p.diag_block) + " pack_max_k=" + std::to_string(p.pack_max_k) +
               " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta));
  const auto hA = random_matrix(c.lda, c.k, gen);
  const auto hB = random_matrix(c.ldb, c.k, gen);
  auto hC = random_matrix(c.ldc, c.n, gen);
  if (nan_in_c)  // beta = 0 must not read C (BLAS semantics)
    for (std::int64_t j = 0; j < c.n; ++j)
      hC[static_cast<std::size_t>(j + j * c.ldc)] = std::nan("");
  DeviceArray A(hA), B(hB), Cref(hC), C1(hC), C2(hC);

  GpuContext& ctx = GpuContext::for_device(0);
  cudaStream_t stream;
  PIPEVD_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t blas;
  PIPEVD_CUBLAS_CHECK(cublasCreate(&blas));
  PIPEVD_CUBLAS_CHECK(cublasSetStream(blas, stream));
  PIPEVD_CUBLAS_CHECK(cublasDsyr2k_64(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, c.n, c.k, &c.alpha,
                                      A.p, c.lda, B.p, c.ldb, &c.beta, Cref.p, c.ldc));
  pipevd::gpu::syr2k_lower(ctx, stream, c.n, c.k, c.alpha, A.p, c.lda, B.p, c.ldb, c.beta, C1.p,
                           c.ldc, p);
  pipevd::gpu::syr2k_lower(ctx, stream, c.n, c.k, c.alpha, A.p, c.lda, B.p, c.ldb, c.beta, C2.p,
                           c.ldc, p);
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
  PIPEVD_CUBLAS_CHECK(cublasDestroy(blas));
  PIPEVD_CUDA_CHECK(cudaStreamDestroy(stream));
  const auto ref = Cref.to_host(), out1 = C1.to_host(), out2 = C2.to_host();

  // Norm-wise: each entry is a sum of 2k products plus beta c, so both results sit within
  // (2k + 2) eps (|alpha| 2 |A||B| + |beta| |C|) of the exact one.
  std::vector<double> lowerC;
  long double diff2 = 0;
  std::int64_t outside_changed = 0, not_finite = 0, moved = 0;
  for (std::int64_t j = 0; j < c.n; ++j) {
    for (std::int64_t i = 0; i < c.ldc; ++i) {
      const std::size_t at = static_cast<std::size_t>(i + j * c.ldc);
      if (i >= j && i < c.n) {
        const long double d = static_cast<long double>(out1[at]) - ref[at];
        diff2 += d * d;
        if (!std::isfinite(out1[at])) ++not_finite;
        if (!nan_in_c) lowerC.push_back(hC[at]);
      } else if (std::memcmp(&out1[at], &hC[at], sizeof(double)) != 0 ||
                 std::memcmp(&out2[at], &hC[at], sizeof(double)) != 0) {
        ++outside_changed;
      }
      if (std::memcmp(&out1[at], &out2[at], sizeof(double)) != 0) ++moved;
    }
  }
  const double eps = std::numeric_limits<double>::epsilon();
  const double scale =
      std::abs(c.alpha) * 2 * frobenius(hA) * frobenius(hB) + std::abs(c.beta) * frobenius(lowerC);
  const double err = static_cast<double>(std::sqrt(diff2));
  EXPECT_EQ(not_finite, 0);
  EXPECT_LE(err, 2.0 * (2 * c.k + 2) * eps * scale) << "relative " << err / scale;
  EXPECT_EQ(outside_changed, 0) << "entries outside the lower triangle were written";
  EXPECT_EQ(moved, 0) << "two runs on the same inputs differ: a race";
}

class Syr2kVsCublas : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t>> {};

TEST_P(Syr2kVsCublas, TrailingUpdate) {
  const auto [n, k] = GetParam();
  if (pipevd::test::over_test_order(n)) GTEST_SKIP() << "n over PIPEVD_TEST_MAX_N";
  std::mt19937_64 gen(fresh_seed());
  // The trailing update C - A B^T - B A^T, with leading dimensions larger than n.
  const Case c{n, k, n + 3, n + 1, n + 5, -1.0, 1.0};
  // Small diagonal blocks give many recursion levels even at small n; packed and unpacked paths.
  check_against_cublas(c, Syr2kParams{32, 1024, 4}, gen);
  check_against_cublas(c, Syr2kParams{64, 0, 3}, gen);
  check_against_cublas(c, Syr2kParams{}, gen);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Syr2kVsCublas,
                         ::testing::Combine(::testing::Values<std::int64_t>(1, 7, 100, 1000, 4099),
                                            ::testing::Values<std::int64_t>(1, 3, 32, 100, 256)));

TEST(Syr2k, GeneralAlphaBeta) {
  std::mt19937_64 gen(fresh_seed());
  check_against_cublas({777, 40, 777, 777, 777, 0.5, 2.5}, Syr2kParams{64, 1024, 4}, gen);
  check_against_cublas({777, 40, 777, 777, 777, 0.5, 2.5}, Syr2kParams{96, 0, 2}, gen);
  // beta = 0: C is not read, NaNs in it do not propagate.
  check_against_cublas({513, 17, 513, 513, 513, -1.0, 0.0}, Syr2kParams{64, 1024, 4}, gen, true);
  // alpha = 0 and k = 0: only the beta scaling of the lower triangle.
  check_against_cublas({300, 8, 300, 300, 300, 0.0, 0.75}, Syr2kParams{}, gen);
  check_against_cublas({300, 0, 300, 300, 300, -1.0, 0.75}, Syr2kParams{}, gen);
}

TEST(Syr2k, RejectsBadArguments) {
  GpuContext& ctx = GpuContext::for_device(0);
  double* d = nullptr;
  EXPECT_THROW(pipevd::gpu::syr2k_lower(ctx, nullptr, 10, 2, 1, d, 9, d, 10, 1, d, 10),
               std::invalid_argument);
  EXPECT_THROW(pipevd::gpu::syr2k_lower(ctx, nullptr, -1, 2, 1, d, 1, d, 1, 1, d, 1),
               std::invalid_argument);
  EXPECT_THROW(pipevd::gpu::syr2k_lower(ctx, nullptr, 10, 2, 1, d, 10, d, 10, 1, d, 10,
                                        Syr2kParams{0, 0, 1}),
               std::invalid_argument);
}

// The workspace (core/memory_plan's syr2k_workspace, which the memory plan counts) comes from
// pipevd's stream-ordered pool for the call and is back there when it ends: nothing is held after.
TEST(Syr2k, WorkspaceFromThePoolForOneCall) {
  GpuContext& ctx = GpuContext::for_device(0);
  cudaMemPool_t pool = ctx.pool();
  std::mt19937_64 gen(fresh_seed());
  for (const auto [n, k] : {std::array<std::int64_t, 2>{1000, 96}, {777, 2000}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
    DeviceArray A(random_matrix(n, k, gen)), B(random_matrix(n, k, gen)),
        C(random_matrix(n, n, gen));
    cudaStream_t stream;
    PIPEVD_CUDA_CHECK(cudaStreamCreate(&stream));
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
    std::uint64_t base = 0, high = 0, after = 0, zero = 0;
    PIPEVD_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &base));
    PIPEVD_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    pipevd::gpu::syr2k_lower(ctx, stream, n, k, -1.0, A.p, n, B.p, n, 1.0, C.p, n);
    PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
    PIPEVD_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
    PIPEVD_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &after));
    PIPEVD_CUDA_CHECK(cudaStreamDestroy(stream));
    const Syr2kWorkspace ws = syr2k_workspace(n, k);
    EXPECT_EQ(ws.packed > 0, k <= kSyr2kPackMaxK);
    const std::uint64_t bytes = sizeof(double) * static_cast<std::uint64_t>(ws.total());
    EXPECT_GE(high - base, bytes);  // the pool may round an allocation up, by less than 2 MiB
    EXPECT_LT(high - base, bytes + (2u << 20));
    EXPECT_EQ(after, base);
  }
}

TEST(GpuContext, CachedPerDevice) {
  EXPECT_EQ(&GpuContext::for_device(0), &GpuContext::for_device(0));
  GpuContext& ctx = GpuContext::for_device(0);
  EXPECT_GE(ctx.lane_count(), 2);
  for (int i = 0; i < ctx.lane_count(); ++i)
    for (int j = 0; j < i; ++j) EXPECT_NE(ctx.lane(i).stream, ctx.lane(j).stream);
}

// pipevd's pool memory comes from the stream's device, whatever device the calling thread has
// current (a new thread's is 0): memory of another device would fault in the stream's kernels.
TEST(GpuContext, PoolMemoryOnTheStreamsDevice) {
  int count = 0;
  PIPEVD_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int device = 0; device < count; ++device) {
    cudaStream_t stream = nullptr;
    {
      ScopedDevice on(device);
      PIPEVD_CUDA_CHECK(cudaStreamCreate(&stream));
    }
    ScopedDevice other((device + 1) % count);
    void* p = nullptr;
    PIPEVD_CUDA_CHECK(pool_malloc(&p, 1 << 20, stream));
    cudaPointerAttributes attr{};
    PIPEVD_CUDA_CHECK(cudaPointerGetAttributes(&attr, p));
    EXPECT_EQ(attr.device, device) << "current device " << (device + 1) % count;
    PIPEVD_CUDA_CHECK(cudaFreeAsync(p, stream));
    PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
    PIPEVD_CUDA_CHECK(cudaStreamDestroy(stream));
  }
}

TEST(GpuContext, ErrorsNameTheCallAndTheError) {
  int count = 0;
  PIPEVD_CUDA_CHECK(cudaGetDeviceCount(&count));
  try {
    GpuContext::for_device(count);
    FAIL() << "no error for a device that does not exist";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  try {
    void* p = nullptr;
    PIPEVD_CUDA_CHECK(cudaMalloc(&p, std::size_t{1} << 62));
    FAIL() << "no error for an impossible allocation";
  } catch (const OutOfMemory& e) {  // typed, so the route can forward the call
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorMemoryAllocation"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaMalloc"), std::string::npos) << what;
    cudaGetLastError();  // clear it, so later launch checks do not report it again
  }
  try {
    PIPEVD_CUBLAS_CHECK(cublasDgemm_64(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, nullptr, nullptr,
                                       1, nullptr, 1, nullptr, nullptr, 1));
    FAIL() << "no error for a null cuBLAS handle";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_INITIALIZED"), std::string::npos)
        << e.what();
  }
}

}  // namespace
