// The blocks of a kernel that a whole device holds at once (one wave of its grid): the BC-back
// kernels' wave models and group lanes size their grids by it.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "base/cuda_check.hpp"

namespace pipevd::gpu {

// `kernel` launched with `threads` threads and `shared_bytes` of dynamic shared memory (its
// attribute set where that is more than 48 KB) on `device`, the current one.
template <class Kernel>
long resident_blocks(Kernel kernel, int threads, std::size_t shared_bytes, int device) {
  int per_sm = 0, sms = 0;
  PIPEVD_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return static_cast<long>(per_sm) * sms;
}

}  // namespace pipevd::gpu
