// Group lanes of the tensor-core BC-back kernels (gpu/bc_back_tensor.cuh, real, and
// gpu/bc_back_complex_tensor.cuh, complex): a wavefront over the groups of sweeps, so that fewer
// rows than the resident blocks hold still fill the device.
//
// `count` blocks share a row block, lane k taking groups k, k + count, ...; group g may run step t
// once group g - 1 has completed it, so the groups of one row block run side by side a step apart
// instead of one after the other. A block takes its (row block, lane) from a ticket in launch
// order, so a row block's lanes are running together, except in the last row block begun, whose
// missing lanes start as the row blocks before it (all of whose lanes run) finish and free their
// slots: no deadlock while count blocks fit the device at once. progress[row block * count + lane]
// counts that lane's completed steps, group g's step t (steps run downwards) as
// g * stride + tmax(g) + 1 - t, increasing along the lane. Lanes change who computes a row, not its
// arithmetic.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cuda/atomic>
#include <stdexcept>
#include <string>

#include "base/cuda_check.hpp"
#include "gpu/group_lanes_choice.hpp"

namespace pipevd::gpu {

struct GroupLanes {
  int count = 1;
  long stride = 0;  // more than any group's steps
  unsigned long long* progress = nullptr;
  unsigned int* ticket = nullptr;
};
struct LaneWorkItem {
  long row_block = 0;
  int lane = 0;
};

// The block's (row block, lane); every thread of the block calls it (it synchronises the block).
__device__ inline LaneWorkItem take_lane_work_item(const GroupLanes& lanes, int tid) {
  if (lanes.count == 1) return {static_cast<long>(blockIdx.x), 0};
  __shared__ unsigned int taken;
  if (tid == 0) taken = atomicAdd(lanes.ticket, 1u);
  __syncthreads();
  return {static_cast<long>(taken / lanes.count), static_cast<int>(taken % lanes.count)};
}

__host__ __device__ inline unsigned long long lane_progress_value(long g, long stride, long tmax,
                                                                  long t) {
  return static_cast<unsigned long long>(g * stride + tmax + 1 - t);
}

// A predecessor that never arrives is a bug; a trap (a launch error on the stream) is better than a
// process that hangs inside someone's MPI job.
constexpr unsigned long long kLaneProgressTimeoutNs = 120ull * 1000 * 1000 * 1000;

__device__ inline unsigned long long lane_global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0 of a block waits until *p reaches `want`; `seen` keeps the last value read.
__device__ inline void wait_for_lane_progress(const unsigned long long* p, unsigned long long want,
                                              unsigned long long& seen) {
  if (seen >= want) return;
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> ref(
      *const_cast<unsigned long long*>(p));
  const unsigned long long start = lane_global_ns();
  while ((seen = ref.load(cuda::memory_order_acquire)) < want) {
    __nanosleep(64);
    if (lane_global_ns() - start > kLaneProgressTimeoutNs) __trap();
  }
}

__device__ inline void publish_lane_progress(unsigned long long* p, unsigned long long value) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> ref(*p);
  ref.store(value, cuda::memory_order_release);
}

// The workspace's lanes part: a ticket (16 bytes) and at most kLaneSlots (row block, lane)
// progress counters.
constexpr long kLaneSlots = 8192;
constexpr int kMaxGroupLanes = 8;
constexpr std::size_t kGroupLanesBytes = 16 + sizeof(unsigned long long) * kLaneSlots;

// Lanes per row block: `requested`, or (0) the rounds model's choice (group_lanes_for_rounds);
// always within the groups there are, the resident blocks (a lane waits on another that must be
// running) and the counters' slots. 1 where `allowed` is false.
inline long choose_group_lanes(bool allowed, int requested, long row_blocks, long resident,
                               long groups) {
  if (!allowed || requested == 1 || row_blocks == 0) return 1;
  const long most =
      std::min({groups, resident, static_cast<long>(kMaxGroupLanes), kLaneSlots / row_blocks});
  if (requested <= 0) return group_lanes_for_rounds(row_blocks, resident, most);
  return std::max(1L, std::min(static_cast<long>(requested), most));
}

// Lanes of `count` per row block over `row_blocks` at `at` (kGroupLanesBytes of device workspace):
// the counters zeroed on `stream`, stride `stride` (more than any group's steps).
inline GroupLanes group_lanes_at(void* at, int count, long row_blocks, long stride,
                                 cudaStream_t stream) {
  GroupLanes lanes;
  lanes.count = count;
  if (count <= 1) return lanes;
  if (row_blocks * count > kLaneSlots)
    throw std::invalid_argument("pipevd: group lanes: " + std::to_string(row_blocks) +
                                " row blocks x " + std::to_string(count) + " lanes > " +
                                std::to_string(kLaneSlots) + " counters");
  char* p = static_cast<char*>(at);
  lanes.ticket = reinterpret_cast<unsigned int*>(p);
  lanes.progress = reinterpret_cast<unsigned long long*>(p + 16);
  lanes.stride = stride;
  PIPEVD_CUDA_CHECK(
      cudaMemsetAsync(p, 0, 16 + sizeof(unsigned long long) * row_blocks * count, stream));
  return lanes;
}

}  // namespace pipevd::gpu
