#include "gpu/dbbr_event_clock.hpp"

#include <utility>

#include "base/cuda_check.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {

DbbrEventClock::~DbbrEventClock() {
  if (pool_.empty()) return;
  try {
    ScopedDevice guard(device_);
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
  } catch (...) {  // a destructor must not throw: the events go with the context
  }
}

void DbbrEventClock::mark(DbbrPart part) noexcept {
  if (failure_) return;
  try {
    ScopedDevice guard(device_);
    marks_.push_back({part, record()});
  } catch (...) {
    failure_ = std::current_exception();
  }
}

void DbbrEventClock::block_boundary(long) noexcept {
  if (failure_) return;
  try {
    ScopedDevice guard(device_);
    boundaries_.push_back(record());
  } catch (...) {
    failure_ = std::current_exception();
  }
}

cudaEvent_t DbbrEventClock::record() {
  if (used_ == pool_.size()) {
    cudaEvent_t e = nullptr;
    PIPEVD_CUDA_CHECK(cudaEventCreate(&e));
    pool_.push_back(e);
  }
  cudaEvent_t e = pool_[used_++];
  PIPEVD_CUDA_CHECK(cudaEventRecord(e, stream_));
  return e;
}

DbbrPartSeconds DbbrEventClock::collect() {
  DbbrPartSeconds seconds{};
  const std::vector<Mark> marks = std::exchange(marks_, {});
  const std::vector<cudaEvent_t> boundaries = std::exchange(boundaries_, {});
  used_ = 0;
  blocks_.clear();
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  ScopedDevice guard(device_);
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (std::size_t i = 0; i + 1 < marks.size(); i += 2) {  // parts never nest: begin, end pairs
    float ms = 0;
    PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, marks[i].event, marks[i + 1].event));
    seconds[static_cast<int>(marks[i].part)] += ms * 1e-3;
  }
  for (std::size_t i = 0; i + 1 < boundaries.size(); ++i) {
    float ms = 0;
    PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, boundaries[i], boundaries[i + 1]));
    blocks_.push_back(ms * 1e-3);
  }
  return seconds;
}

}  // namespace pipevd::gpu
