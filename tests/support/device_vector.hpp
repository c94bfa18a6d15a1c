// Host data <-> a buffer of an engine backend (the GPU backend's device memory in the GPU tests).
#pragma once
#include <algorithm>
#include <vector>

#include "core/backend.hpp"

namespace pipevd::test {

struct Dev {
  EngineBackend& be;
  DeviceBuffer buf;
  Dev(EngineBackend& b, const std::vector<double>& host)
      : be(b), buf(b, std::max<long>(1, host.size())) {
    be.copy_to_device(host.data(), buf.get(), static_cast<long>(host.size()));
  }
  Dev(EngineBackend& b, long count) : be(b), buf(b, std::max(1L, count)) {}
  double* get() const { return buf.get(); }
  std::vector<double> to_host(long count) const {
    std::vector<double> h(static_cast<size_t>(count));
    be.copy_to_host(buf.get(), h.data(), count);
    return h;
  }
};

}  // namespace pipevd::test
