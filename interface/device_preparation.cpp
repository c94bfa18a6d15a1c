#include "interface/device_preparation.hpp"

#include <functional>
#include <system_error>
#include <utility>

#include "core/backend_factory.hpp"

namespace pipevd {

void DevicePreparation::start(int device, bool nccl, MPI_Comm engine, int nccl_channels) {
  // NCCL's buffers are then allocated while the plan reads the free device memory: at most what a
  // repeated call, whose communicator exists, sees.
  std::function<void()> make_nccl;
  if (nccl) make_nccl = gpu_begin_nccl(engine, device, nccl_channels);
  makes_nccl_ = static_cast<bool>(make_nccl);
  try {
    thread_ = JoiningThread([this, device, make_nccl, bytes = pool_bytes_.get_future()]() mutable {
      using clock = std::chrono::steady_clock;
      begin_ = clock::now();
      gpu_prepare_context(device);
      context_end_ = clock::now();
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

void DevicePreparation::give_pool_bytes(long bytes) {
  if (pool_bytes_given_) return;
  pool_bytes_given_ = true;
  pool_bytes_.set_value(bytes);
}

void DevicePreparation::finish(Timeline* timeline) {
  const bool ran = thread_.joinable();
  thread_.join();
  if (!(timeline && ran)) return;
  timeline->add("device_context", begin_, context_end_, "prepare");
  if (makes_nccl_) timeline->add("nccl_setup", context_end_, nccl_end_, "prepare");
  timeline->add("device_pool", pool_begin_, end_, "prepare");
}

}  // namespace pipevd
