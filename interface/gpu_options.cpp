#include "interface/gpu_options.hpp"

namespace pipevd {

gpu::BcBackKernel bc_back_kernel(const Policy& policy) {
  if (policy.bc_back_kernel == "blas2") return gpu::BcBackKernel::Blas2;
  if (policy.bc_back_kernel == "tensor") return gpu::BcBackKernel::Tensor;
  return gpu::BcBackKernel::Auto;
}

gpu::GpuTuning gpu_tuning(const Policy& policy) {
  gpu::GpuTuning t;
  t.panel_qr_blocks = policy.panel_qr_blocks;
  t.panel_qr_threads = policy.panel_qr_threads;
  t.bulge_chasing = {policy.bc_sweeps_per_block, policy.bc_blocks, policy.bc_exclusive};
  t.sharing = policy.gpu_sharing;
  t.nccl_channels = policy.nccl_channels;
  return t;
}

void configure_gpu_backend(gpu::GpuBackend& be, const Policy& policy) {
  be.set_tuning(gpu_tuning(policy));
  if (policy.panel_qr_cusolver) be.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Cusolver);
  be.set_bc_back_kernel(bc_back_kernel(policy));
  be.set_symmetric_product(policy.aw_symm);
}

}  // namespace pipevd
