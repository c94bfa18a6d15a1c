// Status checks for the CUDA library adapters: a failed call throws a typed error naming it.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "gpu/gpu_context.hpp"

namespace pipevd::solvers {

// gpu/gpu_context.hpp's CUDA check (typed: OutOfMemory or DeviceError).
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) ::pipevd::gpu::throw_cuda_error(e, what, __FILE__, __LINE__);
}
// cuSOLVER (Dn, Mg, Mp) and NCCL status: 0 is success in all of them.
inline void status_check(int s, const char* what) {
  if (s != 0) throw DeviceError(std::string(what) + " returned status " + std::to_string(s));
}

// GPU model of device `dev`, or why there is none.
inline std::string gpu_name(int dev = 0) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "no CUDA device";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "unknown GPU";
  return prop.name;
}
inline int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

}  // namespace pipevd::solvers
