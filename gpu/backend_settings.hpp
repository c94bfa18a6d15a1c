// core/backend_factory.hpp's GpuBackendSettings applied to a GPU backend: the one place its fields
// become the backend's setters and its GpuTuning (as interface/engine_options' gpu_backend_settings
// is the one place the policy becomes those settings). make_gpu_backend (the route's backends) and
// interface/gpu_options (the benches and tests that make backends themselves) both go through it,
// so a new PIPEVD_GPU_* knob reaches every backend from these two mappings. Defined in
// gpu/backend_factory.cpp.
#pragma once
#include <string>

#include "core/backend_factory.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/gpu_backend.hpp"

namespace pipevd::gpu {

// PIPEVD_GPU_BC_BACK's value as a kernel ("blas2", "tensor"; anything else Auto).
BcBackKernel bc_back_kernel_named(const std::string& name);
// The kernels' tuning in `settings` (0 / -1 stay the kernels' defaults, nccl_channels 0 NCCL's).
GpuTuning tuning_of(const GpuBackendSettings& settings);
// Every setting in `settings` given to `be`.
void configure_backend(GpuBackend& be, const GpuBackendSettings& settings);

}  // namespace pipevd::gpu
