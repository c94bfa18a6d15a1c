#include "gpu/dbbr_event_clock.hpp"

#include "base/cuda_check.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {

DbbrEventClock::~DbbrEventClock() {
  ScopedDevice guard(device_);
  for (cudaEvent_t e : pool_) cudaEventDestroy(e);
}

cudaEvent_t DbbrEventClock::record() {
  ScopedDevice guard(device_);
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
  ScopedDevice guard(device_);
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (std::size_t i = 0; i + 1 < marks_.size(); i += 2) {  // parts never nest: begin, end pairs
    float ms = 0;
    PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[i].event, marks_[i + 1].event));
    seconds[static_cast<int>(marks_[i].part)] += ms * 1e-3;
  }
  marks_.clear();
  used_ = 0;
  return seconds;
}

}  // namespace pipevd::gpu
