// A GPU backend's settings from the process policy (interface/policy: the one place PIPEVD_*
// settings are read): the panel QR path (PIPEVD_GPU_PANEL_QR), BC-back's kernel
// (PIPEVD_GPU_BC_BACK) and the kernels' tuning (gpu::GpuTuning). The benches and tests that make
// GPU backends themselves use it (the route's come from core/backend_factory). Both go through
// interface/engine_options' gpu_backend_settings and gpu/backend_settings, so the policy reaches a
// backend the same way on either. Built with the CUDA backend only.
#pragma once
#include "gpu/gpu_backend.hpp"
#include "interface/policy.hpp"

namespace pipevd {

gpu::GpuTuning gpu_tuning(const Policy& policy);
// The policy's settings given to `be` (its host threads set to one, the backend's default).
void configure_gpu_backend(gpu::GpuBackend& be, const Policy& policy);

}  // namespace pipevd
