// An engine rank's device readied in a thread from the route's start: the CUDA context and library
// handles, with several engine ranks on their own GPUs the NCCL communicator (beside the plan,
// which waits for the context where it queries the device), then pipevd's pool grown for the
// plan (beside the redistribution in); pipevd's kernels loaded in a second thread once the context
// exists (beside NCCL's set-up, the longest part). A first call's seconds of set-up, and every
// call's growth of the pool, overlap the host's work. The engine starts once the pool holds what
// it needs first: the plan's peak, or with a staged growth (core/pool_growth.hpp) DBBR's stage,
// the rest grown beside DBBR and joined at its end.
#pragma once
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <utility>

#include "base/joining_thread.hpp"
#include "core/pool_growth.hpp"
#include "core/timeline.hpp"

namespace pipevd {

// The device's steps the preparation takes (core/backend_factory.hpp's gpu_* functions by default;
// tests give their own, so that the protocol runs without a GPU).
struct DeviceSteps {
  std::function<void(int device)> prepare_context;
  std::function<void(int device)> preload_kernels;
  std::function<void(int device, long bytes)> grow_pool;  // one allocation of `bytes`
  // What the pool lacks of `peak`, once due (gpu_grow_pool_to; `needed` says the engine needs it).
  std::function<void(int device, long peak, const std::function<bool()>& needed)> grow_pool_to;
  std::function<long(int device)> pool_reserved;  // the pool's mapped bytes
};
DeviceSteps gpu_device_steps();

// What a preparation did to the pool: the growth and the pool's mapped bytes before its first step
// and after its last.
struct PoolGrowthRecord {
  bool made = false;  // a preparation thread grew the pool for the call
  PoolGrowth growth;
  long reserved_before = 0, reserved_after = 0;
};
// The last record of this process's calls, for tests that call through the route (the call's own
// report, PIPEVD_VERBOSE=2's `pool growth` line, reads DevicePreparation::pool_growth_record()).
PoolGrowthRecord last_pool_growth();

class DevicePreparation {
 public:
  DevicePreparation() : DevicePreparation(gpu_device_steps()) {}
  explicit DevicePreparation(DeviceSteps steps) : steps_(std::move(steps)) {}
  DevicePreparation(const DevicePreparation&) = delete;
  DevicePreparation& operator=(const DevicePreparation&) = delete;
  // Runs before the members go, so the thread (joined then) never waits for a growth never given,
  // nor for DBBR's draws on the pool where the route stopped before finish_rest.
  ~DevicePreparation() {
    rest_needed_ = true;
    give_pool_growth(PoolGrowth{});
  }

  // Starts the thread for `device`. With `nccl`, first begins the engine's NCCL communicator over
  // `engine` (collective over it, here: every engine rank must take this branch alike) with at most
  // `nccl_channels` channels (0: NCCL's choice) and makes it in the thread. With `preload`, loads
  // pipevd's kernels too (gpu/kernel_preload.hpp). Where no thread can be had, the communicator is
  // made here and the engine readies the rest.
  void start(int device, bool nccl, MPI_Comm engine, int nccl_channels, bool preload);
  // The plan's growth of the pool (nothing where the call stops before it has a plan: the thread
  // waits for it).
  void give_pool_growth(const PoolGrowth& growth);
  // Returns once the engine may start: the thread joined, or with a staged growth its first step
  // done. Its parts as intervals of the "prepare" thread where `timeline` is given.
  void finish(Timeline* timeline);
  // Tells a staged growth's second step that the engine needs the memory now, joins the thread
  // ("device_pool_rest" on the timeline) and records the growth (last_pool_growth). Once; later
  // calls do nothing.
  void finish_rest(Timeline* timeline);
  // The growth given (none before give_pool_growth).
  const PoolGrowth& growth() const { return growth_; }
  // This call's record, once finish_rest has run.
  const PoolGrowthRecord& pool_growth_record() const { return record_; }

 private:
  void start_preload(int device);  // in the preparing thread, once the context exists
  DeviceSteps steps_;
  // For the timeline: the pool's growth starts once the plan gives its bytes, not at nccl_end.
  std::chrono::steady_clock::time_point begin_, context_end_, nccl_end_, pool_begin_, pool_end_;
  std::chrono::steady_clock::time_point rest_begin_, rest_end_;
  std::chrono::steady_clock::time_point preload_begin_, preload_end_;
  bool makes_nccl_ = false;  // the thread makes the NCCL communicator (its interval)
  bool started_ = false;     // the thread runs (a thread could be had)
  bool rest_finished_ = false;
  std::atomic<bool> rest_needed_{false};  // the second step's `needed`
  std::promise<PoolGrowth> growth_given_;
  bool growth_is_given_ = false;
  PoolGrowth growth_;  // the growth given, read by the calling thread
  std::promise<void> first_step_done_;
  std::future<void> first_step_;
  long reserved_before_ = 0, reserved_after_ = 0;
  PoolGrowthRecord record_;
  JoiningThread preload_thread_;  // before thread_: joined after it, whose lambda starts it
  JoiningThread thread_;
};

}  // namespace pipevd
