#include "gpu/cooperative_launch.hpp"

#include <mutex>
#include <string>

#include "base/cuda_check.hpp"

namespace pipevd::gpu {

#ifdef PIPEVD_FAULT_INJECTION
namespace {

struct CapState {
  std::mutex mutex;  // a test sets the cap while the library may launch from other threads
  std::string name;
  int max_blocks = 0;
  CooperativeLaunchRecord record;
};

CapState& cap_state() {
  static CapState state;
  return state;
}

// Whether the test's cap refuses `blocks` blocks of `name`; the launch's outcome recorded.
bool refused_for_cap(const char* name, int blocks) {
  CapState& s = cap_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.max_blocks <= 0 || s.name != name) return false;
  if (blocks > s.max_blocks) {
    ++s.record.refused;
    return true;
  }
  s.record.launched_blocks = blocks;
  return false;
}

}  // namespace

void set_cooperative_grid_cap(const CooperativeGridCap& cap) {
  CapState& s = cap_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.name = cap.name ? cap.name : "";
  s.max_blocks = cap.max_blocks;
  s.record = {};
}

CooperativeLaunchRecord cooperative_launch_record() {
  CapState& s = cap_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.record;
}
#else
namespace {
constexpr bool refused_for_cap(const char*, int) { return false; }
}  // namespace
#endif

cudaError_t launch_cooperative(const char* name, const void* kernel, dim3 grid, dim3 block,
                               void** args, std::size_t shared_bytes, cudaStream_t stream) {
  if (refused_for_cap(name, static_cast<int>(grid.x))) return cudaErrorCooperativeLaunchTooLarge;
  return cudaLaunchCooperativeKernel(kernel, grid, block, args, shared_bytes, stream);
}

void launch_cooperative_halving(const char* name, const void* kernel, int grid, dim3 block,
                                void** args, std::size_t shared_bytes, cudaStream_t stream) {
  for (;;) {
    const cudaError_t e =
        launch_cooperative(name, kernel, dim3(grid), block, args, shared_bytes, stream);
    if (e != cudaErrorCooperativeLaunchTooLarge || grid == 1) {
      PIPEVD_CUDA_CHECK(e);
      return;
    }
    cudaGetLastError();
    grid = (grid + 1) / 2;
  }
}

}  // namespace pipevd::gpu
