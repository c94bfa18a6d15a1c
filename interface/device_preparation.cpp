#include "interface/device_preparation.hpp"

#include <functional>
#include <system_error>
#include <utility>

#include "core/backend_factory.hpp"

namespace pipevd {

void DevicePreparation::start(int device, bool nccl, MPI_Comm engine, int nccl_channels,
                              bool preload) {
  // NCCL's buffers are then allocated while the plan reads the free device memory: at most what a
  // repeated call, whose communicator exists, sees.
  std::function<void()> make_nccl;
  if (nccl) make_nccl = gpu_begin_nccl(engine, device, nccl_channels);
  makes_nccl_ = static_cast<bool>(make_nccl);
  try {
    thread_ = JoiningThread(
        [this, device, make_nccl, preload, bytes = pool_bytes_.get_future()]() mutable {
          using clock = std::chrono::steady_clock;
          begin_ = clock::now();
          gpu_prepare_context(device);
          context_end_ = clock::now();
          if (preload) start_preload(device);
          if (make_nccl) make_nccl();
          nccl_end_ = clock::now();
          const long planned = bytes.get();
          pool_begin_ = clock::now();
          gpu_grow_pool(device, planned);
          end_ = clock::now();
        });
  } catch (const std::system_error&) {  // no thread to be had: the engine readies the device
    if (make_nccl) make_nccl();
  }
}

void DevicePreparation::start_preload(int device) {
  try {
    preload_thread_ = JoiningThread([this, device] {
      preload_begin_ = std::chrono::steady_clock::now();
      gpu_preload_kernels(device);
      preload_end_ = std::chrono::steady_clock::now();
    });
  } catch (const std::system_error&) {  // no thread: the kernels load at their first launch
  }
}

void DevicePreparation::give_pool_bytes(long bytes) {
  if (pool_bytes_given_) return;
  pool_bytes_given_ = true;
  pool_bytes_.set_value(bytes);
}

void DevicePreparation::finish(Timeline* timeline) {
  const bool ran = thread_.joinable();
  thread_.join();
  const bool preloaded = preload_thread_.joinable();
  preload_thread_.join();
  if (preloaded && timeline)
    timeline->add("kernel_preload", preload_begin_, preload_end_, "preload");
  if (!(timeline && ran)) return;
  timeline->add("device_context", begin_, context_end_, "prepare");
  if (makes_nccl_) timeline->add("nccl_setup", context_end_, nccl_end_, "prepare");
  timeline->add("device_pool", pool_begin_, end_, "prepare");
}

}  // namespace pipevd
