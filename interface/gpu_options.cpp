#include "interface/gpu_options.hpp"

#include "gpu/backend_settings.hpp"
#include "interface/engine_options.hpp"

namespace pipevd {

gpu::GpuTuning gpu_tuning(const Policy& policy) {
  return gpu::tuning_of(gpu_backend_settings(policy));
}

void configure_gpu_backend(gpu::GpuBackend& be, const Policy& policy) {
  gpu::configure_backend(be, gpu_backend_settings(policy));
}

}  // namespace pipevd
