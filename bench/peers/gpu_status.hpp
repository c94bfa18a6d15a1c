// The GPU peers' checks: CUDA calls through base/cuda_check.hpp's PIPEVD_CUDA_CHECK (the library's
// own), cuSOLVER (Dn, Mg, Mp) and NCCL statuses here; both throw base/errors.hpp's typed errors,
// which a peer turns into an Outcome error naming the call.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "base/cuda_check.hpp"

namespace pipevd::solvers {

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
