// The memory plan (core/memory_plan.hpp) against the GPU backend: run_engine on one GPU, the
// device memory pool's high-water mark of bytes in use (every engine buffer and the backend's
// workspaces come from it: cudaMallocAsync) must stay within the predicted peak, which is what
// the memory check compares with cudaMemGetInfo before a call.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <random>
#include <type_traits>
#include <vector>

#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/memory_plan.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "tests/support/gpu_mpi_environment.hpp"

namespace pipevd {
namespace {

// A random symmetric (Hermitian) n x n matrix, both triangles.
std::vector<double> random_matrix(long n, std::mt19937_64& gen, double) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = j; i < n; ++i) a[i + j * n] = a[j + i * n] = u(gen);
  return a;
}
std::vector<Complex> random_matrix(long n, std::mt19937_64& gen, Complex) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Complex> a(n * n);
  for (long j = 0; j < n; ++j) {
    a[j + j * n] = u(gen);
    for (long i = j + 1; i < n; ++i) {
      a[i + j * n] = Complex(u(gen), u(gen));
      a[j + i * n] = std::conj(a[i + j * n]);
    }
  }
  return a;
}

// run_engine on one GPU over the scalar T: the pool's high-water mark within the plan with T's
// element size (for complex, the plan counts the complex chase's band and reflectors, the panel
// QR's complex workspaces and the complex BC-back's D).
template <class T>
void expect_pool_within_plan(long n, bool vectors) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t pool = gpu::GpuContext::for_device(device).pool();
  std::mt19937_64 gen(n);
  const std::vector<T> a = random_matrix(n, gen, T{});
  EngineOptions opt;
  opt.want_vectors = vectors;
  const EngineLayout L = plan_engine_layout(n, 1, opt.b);
  std::vector<double> w(n);
  std::vector<T> z(vectors ? n * n : 1);
  std::uint64_t zero = 0, high = 0, base = 0;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &base), cudaSuccess);
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  {
    gpu::GpuBackend be(device);
    ASSERT_EQ(run_engine(be, MPI_COMM_SELF, L, a.data(), w.data(), z.data(), opt, nullptr), 0);
    be.synchronize();
  }
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high), cudaSuccess);
  const long words = std::is_same_v<T, Complex> ? 2 : 1;
  const long predicted = static_cast<long>(
      plan_engine_memory(L, 0, opt.b, opt.k, vectors, true, false, false, false, false, words)
          .peak_bytes());
  const long used = static_cast<long>(high - base);
  std::printf("words=%ld n=%ld jobz=%c pool high-water %ld bytes, predicted %ld (%.3f)\n", words, n,
              vectors ? 'V' : 'N', used, predicted, static_cast<double>(used) / predicted);
  // The pool rounds each allocation up a little: 1% and 2 MiB of slack.
  EXPECT_LE(used, predicted + predicted / 100 + (2L << 20)) << "n=" << n;
}

TEST(GpuMemoryPlan, PoolHighWaterMarkWithinPrediction) {
  for (long n : {1000L, 3001L})
    for (bool vectors : {true, false}) expect_pool_within_plan<double>(n, vectors);
}

// The complex two-stage engine (PZHEEVD's forced GPU path).
TEST(GpuMemoryPlan, ComplexPoolHighWaterMarkWithinPrediction) {
  for (long n : {700L, 1501L})
    for (bool vectors : {true, false}) expect_pool_within_plan<Complex>(n, vectors);
}

// The device's default pool may be the application's: the engine allocates from its own pool and
// leaves the default one's settings and contents as it found them.
TEST(GpuMemoryPlan, DefaultPoolLeftToTheApplication) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t app = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&app, device), cudaSuccess);
  std::uint64_t threshold = 3u << 20, zero = 0;
  ASSERT_EQ(cudaMemPoolSetAttribute(app, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  void* held = nullptr;  // the application's own allocation, kept across the call
  ASSERT_EQ(cudaMallocAsync(&held, 1 << 20, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemPoolSetAttribute(app, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  std::uint64_t used_before = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(app, cudaMemPoolAttrUsedMemCurrent, &used_before), cudaSuccess);
  const long n = 1500;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(n * n), w(n), z(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = j; i < n; ++i) a[i + j * n] = a[j + i * n] = u(gen);
  EngineOptions opt;
  {
    gpu::GpuBackend be(device);
    ASSERT_EQ(run_engine(be, MPI_COMM_SELF, plan_engine_layout(n, 1, opt.b), a.data(), w.data(),
                         z.data(), opt, nullptr),
              0);
    be.synchronize();
  }
  std::uint64_t got = 0, high = 0, used_after = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(app, cudaMemPoolAttrReleaseThreshold, &got), cudaSuccess);
  ASSERT_EQ(cudaMemPoolGetAttribute(app, cudaMemPoolAttrUsedMemHigh, &high), cudaSuccess);
  ASSERT_EQ(cudaMemPoolGetAttribute(app, cudaMemPoolAttrUsedMemCurrent, &used_after), cudaSuccess);
  EXPECT_EQ(got, threshold) << "the default pool's release threshold was changed";
  EXPECT_EQ(high, used_before) << "the engine allocated from the default pool";
  EXPECT_EQ(used_after, used_before);
  EXPECT_EQ(cudaFreeAsync(held, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace pipevd
