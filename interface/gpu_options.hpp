// A GPU backend's settings from the process policy (interface/policy: the one place PIPEVD_*
// settings are read): the panel QR path (PIPEVD_GPU_PANEL_QR), BC-back's kernel
// (PIPEVD_GPU_BC_BACK) and the kernels' tuning (gpu::GpuTuning). The benches and tests that make
// GPU backends themselves use it (the route's come from core/backend_factory). Built with the CUDA
// backend only.
#pragma once
#include "gpu/bc_back.cuh"
#include "gpu/gpu_backend.hpp"
#include "interface/policy.hpp"

namespace pipevd {

gpu::BcBackKernel bc_back_kernel(const Policy& policy);
gpu::GpuTuning gpu_tuning(const Policy& policy);
void configure_gpu_backend(gpu::GpuBackend& be, const Policy& policy);

}  // namespace pipevd
