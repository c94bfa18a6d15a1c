// What the GPU micro-benchmarks (syr2k_bench, symm_bench) share: the device and library lines they
// print first, device arrays filled with values uniform in [-1, 1) from a seed, and the median time
// of repeated runs of a body on a stream.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "bench/bench_util.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::bench {

// "# device ..." (name, architecture, SMs, memory, clocks) and "# CUDA runtime ..., driver ...,
// cuBLAS ..." for the current device, followed by `extra` on the second line.
inline cudaDeviceProp print_device_lines(cublasHandle_t blas, const char* extra = "") {
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop;
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0, mem_clock_khz = 0, runtime = 0, driver = 0, cublas_version = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  PIPEVD_CUBLAS_CHECK(cublasGetVersion(blas, &cublas_version));
  std::printf("# device %s (sm_%d%d, %d SMs, %.1f GiB, SM clock %d MHz, memory clock %d MHz)\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              prop.totalGlobalMem / 1073741824.0, clock_khz / 1000, mem_clock_khz / 1000);
  std::printf("# CUDA runtime %d, driver %d, cuBLAS %d%s\n", runtime, driver, cublas_version,
              extra);
  return prop;
}

__global__ void uniform_fill_kernel(double* x, std::int64_t count, std::uint64_t seed) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x)
    x[i] = splitmix_uniform((static_cast<std::uint64_t>(i) + seed) * 0x9E3779B97F4A7C15ull);
}

// On the legacy default stream: work on other streams that reads x must synchronize first.
inline void random_fill(double* x, std::int64_t count, std::uint64_t seed) {
  uniform_fill_kernel<<<4096, 256>>>(x, count, seed);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// Median milliseconds of `body` on `stream`: one warm-up, then 3 to 20 repetitions (fewer for slow
// bodies, so that a whole table fits a device lease).
inline double median_ms(cudaStream_t stream, const std::function<void()>& body) {
  cudaEvent_t t0, t1;
  PIPEVD_CUDA_CHECK(cudaEventCreate(&t0));
  PIPEVD_CUDA_CHECK(cudaEventCreate(&t1));
  const auto once = [&] {
    PIPEVD_CUDA_CHECK(cudaEventRecord(t0, stream));
    body();
    PIPEVD_CUDA_CHECK(cudaEventRecord(t1, stream));
    PIPEVD_CUDA_CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    return static_cast<double>(ms);
  };
  const double warm = once();
  const int reps = warm > 1000 ? 3 : warm > 100 ? 5 : warm > 10 ? 10 : 20;
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(once());
  std::sort(t.begin(), t.end());
  PIPEVD_CUDA_CHECK(cudaEventDestroy(t0));
  PIPEVD_CUDA_CHECK(cudaEventDestroy(t1));
  return t[t.size() / 2];
}

}  // namespace pipevd::bench
