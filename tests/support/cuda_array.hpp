// A cudaMalloc'ed array for the kernel tests that call a kernel's entry point directly (no engine
// backend): host vector in, host vector out, errors as test failures. H: the host element, D: the
// device one (of the same bytes, e.g. std::complex<double> and cuDoubleComplex).
#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace pipevd::test {

inline void check_cuda(cudaError_t e) { ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e); }

template <class H, class D = H>
struct CudaArray {
  static_assert(sizeof(H) == sizeof(D), "host and device elements of the same bytes");
  D* p = nullptr;
  explicit CudaArray(long count) { check_cuda(cudaMalloc(&p, sizeof(D) * std::max(1L, count))); }
  explicit CudaArray(const std::vector<H>& h) : CudaArray(static_cast<long>(h.size())) {
    check_cuda(cudaMemcpy(p, h.data(), sizeof(D) * h.size(), cudaMemcpyHostToDevice));
  }
  ~CudaArray() { cudaFree(p); }
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  std::vector<H> download(long count) const {
    std::vector<H> h(static_cast<size_t>(count));
    check_cuda(cudaMemcpy(h.data(), p, sizeof(D) * count, cudaMemcpyDeviceToHost));
    return h;
  }
};

}  // namespace pipevd::test
