// An engine rank's device readied in a thread from the route's start: the CUDA context and library
// handles, with several engine ranks on their own GPUs the NCCL communicator (beside the plan,
// which waits for the context where it queries the device), then pipevd's pool grown to the plan's
// peak (beside the redistribution in); pipevd's kernels loaded in a second thread once the context
// exists (beside NCCL's set-up, the longest part). A first call's seconds of set-up, and every
// call's growth of the pool, overlap the host's work. Joined before the engine starts.
#pragma once
#include <mpi.h>

#include <chrono>
#include <future>

#include "base/joining_thread.hpp"
#include "core/timeline.hpp"

namespace pipevd {

class DevicePreparation {
 public:
  DevicePreparation() = default;
  DevicePreparation(const DevicePreparation&) = delete;
  DevicePreparation& operator=(const DevicePreparation&) = delete;
  // Runs before the members go, so the thread (joined then) never waits for bytes that never come.
  ~DevicePreparation() { give_pool_bytes(0); }

  // Starts the thread for `device`. With `nccl`, first begins the engine's NCCL communicator over
  // `engine` (collective over it, here: every engine rank must take this branch alike) with at most
  // `nccl_channels` channels (0: NCCL's choice) and makes it in the thread. With `preload`, loads
  // pipevd's kernels too (gpu/kernel_preload.hpp). Where no thread can be had, the communicator is
  // made here and the engine readies the rest.
  void start(int device, bool nccl, MPI_Comm engine, int nccl_channels, bool preload);
  // The plan's device bytes, or 0 where the call stops before it has a plan (the thread waits).
  void give_pool_bytes(long bytes);
  // Joins the thread; its parts as intervals of the "prepare" thread where `timeline` is given.
  void finish(Timeline* timeline);

 private:
  void start_preload(int device);  // in the preparing thread, once the context exists
  // For the timeline: the pool's growth starts once the plan gives its bytes, not at nccl_end.
  std::chrono::steady_clock::time_point begin_, context_end_, nccl_end_, pool_begin_, end_;
  std::chrono::steady_clock::time_point preload_begin_, preload_end_;
  bool makes_nccl_ = false;  // the thread makes the NCCL communicator (its interval)
  std::promise<long> pool_bytes_;
  bool pool_bytes_given_ = false;
  JoiningThread preload_thread_;  // before thread_: joined after it, whose lambda starts it
  JoiningThread thread_;
};

}  // namespace pipevd
