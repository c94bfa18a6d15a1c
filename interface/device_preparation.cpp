#include "interface/device_preparation.hpp"

#include <functional>
#include <mutex>
#include <system_error>
#include <utility>

#include "core/backend_factory.hpp"

namespace pipevd {

namespace {

std::mutex& record_mutex() {
  static std::mutex m;
  return m;
}
PoolGrowthRecord& process_record() {
  static PoolGrowthRecord r;
  return r;
}

}  // namespace

DeviceSteps gpu_device_steps() {
  return {gpu_prepare_context, gpu_preload_kernels, gpu_grow_pool, gpu_grow_pool_to,
          gpu_pool_reserved_bytes};
}

PoolGrowthRecord last_pool_growth() {
  std::lock_guard<std::mutex> lock(record_mutex());
  return process_record();
}

void DevicePreparation::start(int device, bool nccl, MPI_Comm engine, int nccl_channels,
                              bool preload) {
  // NCCL's buffers are then allocated while the plan reads the free device memory: at most what a
  // repeated call, whose communicator exists, sees.
  std::function<void()> make_nccl;
  if (nccl) make_nccl = gpu_begin_nccl(engine, device, nccl_channels);
  makes_nccl_ = static_cast<bool>(make_nccl);
  first_step_ = first_step_done_.get_future();
  try {
    thread_ = JoiningThread(
        [this, device, make_nccl, preload, given = growth_given_.get_future()]() mutable {
          using clock = std::chrono::steady_clock;
          begin_ = clock::now();
          steps_.prepare_context(device);
          context_end_ = clock::now();
          if (preload) start_preload(device);
          if (make_nccl) make_nccl();
          nccl_end_ = clock::now();
          const PoolGrowth growth = given.get();
          pool_begin_ = clock::now();
          reserved_before_ = steps_.pool_reserved(device);
          steps_.grow_pool(device, growth.first_bytes);
          pool_end_ = clock::now();
          first_step_done_.set_value();  // the engine may start
          if (growth.staged) {
            rest_begin_ = clock::now();
            steps_.grow_pool_to(device, growth.peak_bytes, [this] { return rest_needed_.load(); });
            rest_end_ = clock::now();
          }
          reserved_after_ = steps_.pool_reserved(device);
        });
    started_ = true;
  } catch (const std::system_error&) {  // no thread to be had: the engine readies the device
    if (make_nccl) make_nccl();
  }
}

void DevicePreparation::start_preload(int device) {
  try {
    preload_thread_ = JoiningThread([this, device] {
      preload_begin_ = std::chrono::steady_clock::now();
      steps_.preload_kernels(device);
      preload_end_ = std::chrono::steady_clock::now();
    });
  } catch (const std::system_error&) {  // no thread: the kernels load at their first launch
  }
}

void DevicePreparation::give_pool_growth(const PoolGrowth& growth) {
  if (growth_is_given_) return;
  growth_is_given_ = true;
  growth_ = growth;
  growth_given_.set_value(growth);
}

void DevicePreparation::finish(Timeline* timeline) {
  if (started_) first_step_.wait();
  if (!growth_.staged) thread_.join();
  // The kernels' loading began before the growth: the engine's launches find them loaded.
  const bool preloaded = preload_thread_.joinable();
  preload_thread_.join();
  if (preloaded && timeline)
    timeline->add("kernel_preload", preload_begin_, preload_end_, "preload");
  if (!(timeline && started_)) return;
  timeline->add("device_context", begin_, context_end_, "prepare");
  if (makes_nccl_) timeline->add("nccl_setup", context_end_, nccl_end_, "prepare");
  timeline->add("device_pool", pool_begin_, pool_end_, "prepare");
}

void DevicePreparation::finish_rest(Timeline* timeline) {
  if (rest_finished_) return;
  rest_finished_ = true;
  rest_needed_ = true;
  thread_.join();
  if (!started_ || !growth_is_given_) return;
  if (timeline && growth_.staged)
    timeline->add("device_pool_rest", rest_begin_, rest_end_, "prepare");
  record_ = {true, growth_, reserved_before_, reserved_after_};
  std::lock_guard<std::mutex> lock(record_mutex());
  process_record() = record_;
}

}  // namespace pipevd
