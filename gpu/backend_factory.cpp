// core/backend_factory.hpp's GPU half, where the CUDA backend is built, and the settings'
// mapping onto the backend (gpu/backend_settings.hpp).
#include "core/backend_factory.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <thread>

#include "core/pool_growth.hpp"
#include "gpu/backend_settings.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/dbbr_event_clock.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/kept_memory_pinning.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/nccl_communicators.hpp"
#include "gpu/pinned_staging.hpp"

namespace pipevd {
namespace gpu {

BcBackKernel bc_back_kernel_named(const std::string& name) {
  if (name == "blas2") return BcBackKernel::Blas2;
  if (name == "tensor") return BcBackKernel::Tensor;
  return BcBackKernel::Auto;
}

GpuTuning tuning_of(const GpuBackendSettings& s) {
  GpuTuning t;
  t.panel_qr_blocks = s.panel_qr_blocks;
  t.panel_qr_threads = s.panel_qr_threads;
  t.bulge_chasing = {s.bc_sweeps_per_block, s.bc_blocks, s.bc_exclusive};
  t.sharing = s.sharing;
  t.nccl_channels = s.nccl_channels;
  t.bc_back_lanes = s.bc_back_lanes;
  return t;
}

void configure_backend(GpuBackend& be, const GpuBackendSettings& s) {
  if (s.panel_qr_cusolver) be.set_panel_qr_path(GpuBackend::PanelQrPath::Cusolver);
  be.set_bc_back_kernel(bc_back_kernel_named(s.bc_back_kernel));
  be.set_symmetric_product(s.symmetric_product);
  be.set_host_threads(s.host_threads);
  be.set_keep_pool(s.keep_pool);
  be.set_tuning(tuning_of(s));
}

}  // namespace gpu

bool gpu_engine_built() { return true; }
int gpu_visible_devices() { return gpu::visible_device_count(); }
std::vector<std::array<unsigned char, 16>> gpu_visible_uuids() { return gpu::visible_gpu_uuids(); }
long gpu_free_bytes(int device) { return gpu::device_free_bytes(device); }
bool gpu_symmetric_product_available(int device) {
  return gpu::symmetric_product_available(device);
}

long gpu_wave_rows(int device, long m, long b, const std::string& bc_back_kernel) {
  return gpu::bc_back_wave_rows(m, b, device, gpu::bc_back_kernel_named(bc_back_kernel));
}

std::unique_ptr<EngineBackend> make_gpu_backend(int device, const GpuBackendSettings& s) {
  auto be = std::make_unique<gpu::GpuBackend>(device);
  gpu::configure_backend(*be, s);
  gpu::install_kept_memory_pinning(device);
  return be;
}

std::unique_ptr<DbbrPartClock> make_gpu_dbbr_clock(EngineBackend& be) {
  auto* gpu = dynamic_cast<gpu::GpuBackend*>(&be);
  return gpu ? std::make_unique<gpu::DbbrEventClock>(gpu->device(), gpu->stream()) : nullptr;
}

void gpu_prepare_context(int device) {
  if (device < 0 || cudaSetDevice(device) != cudaSuccess) return;
  try {
    gpu::GpuContext::for_device(device);
  } catch (const std::exception&) {  // the engine's own start makes the context or reports why
  }
  cudaGetLastError();
}

void gpu_preload_kernels(int device) {
  if (device < 0 || cudaSetDevice(device) != cudaSuccess) return;
  gpu::preload_kernels();
  cudaGetLastError();
}

void gpu_grow_pool(int device, long pool_bytes) {
  if (device < 0 || pool_bytes <= 0 || cudaSetDevice(device) != cudaSuccess) return;
  try {
    gpu::GpuContext& ctx = gpu::GpuContext::for_device(device);
    // One allocation of the plan's peak, freed at once: the pool keeps its memory (its release
    // threshold) for the engine's allocations, which then find it mapped.
    cudaStream_t stream = ctx.lane(0).stream;
    void* p = nullptr;
    if (cudaMallocFromPoolAsync(&p, static_cast<std::size_t>(pool_bytes), ctx.pool(), stream) ==
        cudaSuccess)
      cudaFreeAsync(p, stream);
    cudaStreamSynchronize(stream);
  } catch (const std::exception&) {  // the engine's own start reports it
  }
  cudaGetLastError();  // an out-of-memory answer here is not the engine's error
}

void gpu_grow_pool_to(int device, long peak_bytes, const std::function<bool()>& needed) {
  if (device < 0 || peak_bytes <= 0 || cudaSetDevice(device) != cudaSuccess) return;
  try {
    gpu::GpuContext& ctx = gpu::GpuContext::for_device(device);
    long rest = -1;
    while ((rest = pool_rest_due(peak_bytes, gpu::pool_reserved_bytes(device),
                                 gpu::pool_free_bytes(device), needed())) < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // Lane 0 carries the engine's work by now: synchronising it would wait for DBBR.
    cudaStream_t stream = nullptr;
    if (rest > 0 && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess) {
      void* p = nullptr;
      if (cudaMallocFromPoolAsync(&p, static_cast<std::size_t>(rest), ctx.pool(), stream) ==
          cudaSuccess)
        cudaFreeAsync(p, stream);
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  } catch (const std::exception&) {  // the engine maps what is missing at its allocations
  }
  cudaGetLastError();
}

long gpu_pool_reserved_bytes(int device) { return gpu::pool_reserved_bytes(device); }

std::function<void()> gpu_begin_nccl(MPI_Comm engine, int device, int channels) {
  return gpu::begin_nccl_communicator(engine, device, channels);
}

bool gpu_nccl_held(MPI_Comm engine, int device) {
  return gpu::nccl_communicator_held(engine, device);
}
long gpu_nccl_communicators_made() { return gpu::nccl_communicators_made(); }

void gpu_release_host_staging() { gpu::release_pinned_staging(); }

void gpu_release_memory() {
  gpu::release_nccl_communicators();
  gpu::release_pinned_staging();
  gpu::trim_device_pools();
}

void gpu_run_on_device(int device, const std::function<void()>& fn) {
  const gpu::ScopedDevice guard(device, std::nothrow);  // fn reports a device it cannot use
  fn();
}

void gpu_make_current(int device) {
  if (device >= 0) cudaSetDevice(device);
}

}  // namespace pipevd
