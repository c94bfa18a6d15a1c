#include "bench/gpu_device.hpp"

#include <cuda_runtime.h>

namespace pipevd::bench {

bool gpu_device_visible() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace pipevd::bench
