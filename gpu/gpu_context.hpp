// Per-device GPU resources (streams, cuBLAS/cuSOLVER handles), created once on first
// use and reused by every later call; and error checking that turns every CUDA, cuBLAS and cuSOLVER
// failure into an exception naming the call, the error and the source line (CUDA's check and the
// error type are base/cuda_check.hpp's).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/cuda_check.hpp"

namespace pipevd::gpu {

// A failed CUDA, cuBLAS or cuSOLVER call: base/errors.hpp's DeviceError, or OutOfMemory where the
// call ran out of memory (cudaErrorMemoryAllocation, the libraries' ALLOC_FAILED).
using GpuError = DeviceError;

[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file,
                                     int line);
[[noreturn]] void throw_cusolver_error(cusolverStatus_t s, const char* expr, const char* file,
                                       int line);
const char* cusolver_status_name(cusolverStatus_t s);

}  // namespace pipevd::gpu

#define PIPEVD_CUBLAS_CHECK(expr)                                              \
  do {                                                                         \
    const cublasStatus_t pipevd_s_ = (expr);                                   \
    if (pipevd_s_ != CUBLAS_STATUS_SUCCESS)                                    \
      ::pipevd::gpu::throw_cublas_error(pipevd_s_, #expr, __FILE__, __LINE__); \
  } while (0)
#define PIPEVD_CUSOLVER_CHECK(expr)                                              \
  do {                                                                           \
    const cusolverStatus_t pipevd_s_ = (expr);                                   \
    if (pipevd_s_ != CUSOLVER_STATUS_SUCCESS)                                    \
      ::pipevd::gpu::throw_cusolver_error(pipevd_s_, #expr, __FILE__, __LINE__); \
  } while (0)

namespace pipevd::gpu {

// Whether the calling thread has a current CUDA context (the driver's cuCtxGetCurrent, found
// through the runtime so that nothing links the driver library); true where that cannot be told.
bool thread_has_context();

// Makes `device` current for a scope and restores the previous one, where the thread had one.
// A thread that had no context is left on `device`: cudaGetDevice answers 0 there, and setting
// device 0 back would make device 0's primary context (cudaSetDevice does since CUDA 12), a
// context of its own on another rank's GPU for every engine rank whose device is not 0.
// The nothrow form makes `device` current where it can (none where device < 0) and otherwise
// leaves the thread as it was: for destructors and for work that reports an unusable device
// itself.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ScopedDevice(int device, const std::nothrow_t&) noexcept;
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

// One stream with its own cuBLAS handle (a handle bound to one stream keeps its internal workspace
// private to that stream) and an event that marks the end of the work queued on it.
struct Lane {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudaEvent_t done = nullptr;
};

// Everything the GPU backend keeps per device. Obtained through for_device(); never destroyed (the
// CUDA runtime may already be torn down when static destructors run). Calls that use one context
// must come from one host thread at a time.
class GpuContext {
 public:
  static constexpr int kDefaultLanes = 4;

  static GpuContext& for_device(int device);

  int device() const { return device_; }
  const cudaDeviceProp& properties() const { return props_; }
  int lane_count() const { return static_cast<int>(lanes_.size()); }
  Lane& lane(int i) { return lanes_.at(static_cast<std::size_t>(i)); }
  // The context's cuSOLVER handle, bound to `stream`.
  cusolverDnHandle_t solver(cudaStream_t stream);
  // Lanes [0, nlanes) start after the work queued so far on `from`.
  void fork(cudaStream_t from, int nlanes);
  // `into` continues only after all work queued on lanes [0, nlanes).
  void join(cudaStream_t into, int nlanes);
  // pipevd's own stream-ordered memory pool on this device: the application may own the device's
  // default pool (its release threshold, its trims), so pipevd neither sets nor trims that one.
  cudaMemPool_t pool() const { return pool_; }

  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

 private:
  explicit GpuContext(int device, int nlanes);

  int device_;
  cudaDeviceProp props_{};
  std::vector<Lane> lanes_;
  cudaEvent_t fork_event_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
};

// `bytes` of device memory for `stream`'s work from pipevd's pool of the stream's device (the
// current one for the default stream); freed by cudaFreeAsync. Returns CUDA's error
// (cudaErrorMemoryAllocation when full).
cudaError_t pool_malloc(void** p, std::size_t bytes, cudaStream_t stream);

// Hands the free memory of pipevd's pools on every device used so far back to the driver
// (pipevd_release(), and the end of a call that keeps no memory). Memory still in use stays.
void trim_device_pools();

// What the end of a call leaves in its device's pool: up to this much of the memory the call
// freed, so that a call of a small order (the one-stage path's matrix, workspace and vectors)
// does not map its memory anew and hand it back each time, a cost of the order of its solve; a
// large call's memory, mapped in larger pieces, goes back whole. Out of the caller's sight like
// pipevd's handles and communicators, and handed back by pipevd_release().
constexpr std::size_t kPoolKeptBetweenCalls = std::size_t(256) << 20;
// The pool of `device`'s context trimmed to kPoolKeptBetweenCalls (nothing where pipevd has no
// context there).
void trim_pool_after_call(cudaMemPool_t pool);
// Free bytes of pipevd's pool on `device` (reserved, not in use): memory a call can take as well
// as the device's free memory; 0 where pipevd has no context there.
long pool_free_bytes(int device);
// Bytes pipevd's pool on `device` has mapped, in use or not; 0 where pipevd has no context there.
long pool_reserved_bytes(int device);

}  // namespace pipevd::gpu
