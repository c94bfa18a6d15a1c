// DBBR's parts timed on the device: an event pair around each part on the stream that queues its
// work, summed when collected. The host only queues work, so host clocks would time the queueing;
// the events time what the device did between them, messages (NCCL on the same stream) included:
// a rank's `bcast` is its wait for the panel's owner as well as the transfer.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <exception>
#include <vector>

#include "core/dbbr.hpp"

namespace pipevd::gpu {

// The events belong to the stream's device, which need not be the calling thread's current one
// (the route's thread keeps its own): each call makes it current for its CUDA calls. begin and end
// run where a part's work ends, in destructors too, so they throw nothing: the first failure to
// record stops the timing and collect() throws it.
class DbbrEventClock : public DbbrPartClock {
 public:
  DbbrEventClock(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  ~DbbrEventClock() override;
  DbbrEventClock(const DbbrEventClock&) = delete;
  DbbrEventClock& operator=(const DbbrEventClock&) = delete;

  void begin(DbbrPart part) noexcept override { mark(part); }
  void end(DbbrPart part) noexcept override { mark(part); }
  void block_boundary(long index) noexcept override;
  DbbrPartSeconds collect() override;
  std::vector<double> collected_blocks() const override { return blocks_; }

 private:
  struct Mark {
    DbbrPart part;
    cudaEvent_t event;
  };
  void mark(DbbrPart part) noexcept;
  cudaEvent_t record();

  int device_;
  cudaStream_t stream_;
  std::vector<cudaEvent_t> pool_;  // reused from one collect() to the next
  std::size_t used_ = 0;
  std::vector<Mark> marks_;
  std::vector<cudaEvent_t> boundaries_;  // the outer blocks' boundaries since the last collect()
  std::vector<double> blocks_;           // the last collect()'s block seconds
  std::exception_ptr failure_;           // the first mark's that failed, for collect()
};

}  // namespace pipevd::gpu
