#include "gpu/kept_memory_pinning.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <new>

#include "gpu/gpu_context.hpp"
#include "redistribute/kept_buffer.hpp"

namespace pipevd::gpu {
namespace {

std::atomic<int> pinning_device{-1};

// The device current in the calling thread (a pinning thread's own), or false.
bool on_pinning_device() {
  const int device = pinning_device.load();
  return device >= 0 && cudaSetDevice(device) == cudaSuccess;
}

bool pin(void* p, std::size_t bytes) {
  if (!on_pinning_device()) {
    cudaGetLastError();
    return false;
  }
  // Refused (no room to lock, memory the driver will not take): the copies stay staged. The
  // error is not sticky, so clearing it leaves the engine's next CUDA call unaffected.
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess) return true;
  cudaGetLastError();
  return false;
}

// Runs in the thread that frees the slot (a call's, pipevd_release's, MPI_Finalize's): the
// caller's current device is given back, and a pending error of the caller's is left alone.
bool unpin(void* p) {
  const int device = pinning_device.load();
  if (device < 0) return false;
  const ScopedDevice on(device, std::nothrow);
  if (cudaHostUnregister(p) == cudaSuccess) return true;
  cudaGetLastError();  // its own error only: a torn-down runtime or a reset device
  return false;
}

}  // namespace

void install_kept_memory_pinning(int device) {
  pinning_device.store(device);
  set_kept_memory_pinning({pin, unpin});
}

}  // namespace pipevd::gpu
