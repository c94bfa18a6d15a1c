// The memory plan (core/memory_plan.hpp) against the GPU backend: run_engine on one GPU, the
// device memory pool's high-water mark of bytes in use (every engine buffer and the backend's
// workspaces come from it: cudaMallocAsync) must stay within the predicted peak, which is what
// the memory check compares with cudaMemGetInfo before a call.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <random>
#include <vector>

#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/memory_plan.hpp"
#include "gpu/gpu_backend.hpp"
#include "tests/support/gpu_mpi_environment.hpp"

namespace pipevd {
namespace {

TEST(GpuMemoryPlan, PoolHighWaterMarkWithinPrediction) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
  for (long n : {1000L, 3001L})
    for (bool vectors : {true, false}) {
      std::mt19937_64 gen(n);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> a(n * n);
      for (long j = 0; j < n; ++j)
        for (long i = j; i < n; ++i) a[i + j * n] = a[j + i * n] = u(gen);
      EngineOptions opt;
      opt.want_vectors = vectors;
      const EngineLayout L = plan_engine_layout(n, 1, opt.b);
      std::vector<double> w(n), z(vectors ? n * n : 1);
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
      const long predicted =
          static_cast<long>(plan_engine_memory(L, 0, opt.b, opt.k, vectors).peak_bytes());
      const long used = static_cast<long>(high - base);
      std::printf("n=%ld jobz=%c pool high-water %ld bytes, predicted %ld (%.3f)\n", n,
                  vectors ? 'V' : 'N', used, predicted, static_cast<double>(used) / predicted);
      // The pool rounds each allocation up a little: 1% and 2 MiB of slack.
      EXPECT_LE(used, predicted + predicted / 100 + (2L << 20)) << "n=" << n;
    }
}

}  // namespace
}  // namespace pipevd
