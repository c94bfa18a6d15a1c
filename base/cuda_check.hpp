// The one check of CUDA runtime calls: a failed call throws OutOfMemory (cudaErrorMemoryAllocation)
// or DeviceError (base/errors.hpp), naming the call, the error and the source line. Header-only, so
// that the library's GPU code (gpu/, which adds the cuBLAS and cuSOLVER checks in gpu_context.hpp)
// and the comparison peers (bench/peers/, which see only libpipevd's public entry) use the same
// check. Include it only where CUDA is compiled.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "base/errors.hpp"

namespace pipevd {

// "expr at file:line", for the message of a failed call.
inline std::string gpu_call_site(const char* expr, const char* file, int line) {
  return std::string(expr) + " at " + file + ":" + std::to_string(line);
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* expr, const char* file,
                                          int line) {
  const std::string what = "pipevd: CUDA error " + std::string(cudaGetErrorName(e)) + " (" +
                           cudaGetErrorString(e) + ") in " + gpu_call_site(expr, file, line);
  if (e == cudaErrorMemoryAllocation) throw OutOfMemory(what);
  throw DeviceError(what);
}

}  // namespace pipevd

#define PIPEVD_CUDA_CHECK(expr)                                         \
  do {                                                                  \
    const cudaError_t pipevd_e_ = (expr);                               \
    if (pipevd_e_ != cudaSuccess)                                       \
      ::pipevd::throw_cuda_error(pipevd_e_, #expr, __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: launch-configuration errors surface here, not at some later call.
#define PIPEVD_CUDA_CHECK_LAUNCH() PIPEVD_CUDA_CHECK(cudaGetLastError())
