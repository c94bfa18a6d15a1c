// core/backend_factory.hpp's GPU half in a build without CUDA: no devices, no GPU backend.
#include "base/errors.hpp"
#include "core/backend_factory.hpp"

namespace pipevd {

bool gpu_engine_built() { return false; }
int gpu_visible_devices() { return 0; }
std::vector<std::array<unsigned char, 16>> gpu_visible_uuids() { return {}; }
long gpu_free_bytes(int) { return -1; }
bool gpu_symmetric_product_available(int) { return false; }
long gpu_wave_rows(int, long, long, const std::string&) { return 0; }

std::unique_ptr<EngineBackend> make_gpu_backend(int, const GpuBackendSettings&) {
  throw ConfigurationError("no GPU engine in this build");
}

std::unique_ptr<DbbrPartClock> make_gpu_dbbr_clock(EngineBackend&) { return nullptr; }
void gpu_prepare_context(int) {}
void gpu_preload_kernels(int) {}
void gpu_grow_pool(int, long) {}
void gpu_grow_pool_to(int, long, const std::function<bool()>&) {}
long gpu_pool_reserved_bytes(int) { return 0; }
std::function<void()> gpu_begin_nccl(MPI_Comm, int, int) { return {}; }
bool gpu_nccl_held(MPI_Comm, int) { return false; }
long gpu_nccl_communicators_made() { return 0; }
void gpu_release_memory() {}
void gpu_release_host_staging() {}
void gpu_run_on_device(int, const std::function<void()>& fn) { fn(); }
void gpu_make_current(int) {}

}  // namespace pipevd
