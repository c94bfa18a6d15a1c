#include <stdexcept>
#include <string>

#include "gpu/kernel_preload.hpp"
#include "gpu/sturm_bisection.cuh"

namespace pipevd::gpu {
namespace {

// Small blocks spread n = 8192 .. 32768 threads over all SMs (each thread is a latency-bound
// chain).
constexpr int kThreads = 64;

__global__ void bisect_kernel(SturmProblem p, double* w) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < p.n) w[i] = bisect_eigenvalue(p, i);
}

}  // namespace

void bisect_eigenvalues(const SturmProblem& p, double* w, cudaStream_t stream) {
  if (p.n <= 0) return;
  const long blocks = (p.n + kThreads - 1) / kThreads;
  bisect_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p, w);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("pipevd: bisection kernel launch: ") +
                             cudaGetErrorString(e));
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* sturm_bisection_kernel_anchor() {
  return reinterpret_cast<const void*>(&bisect_kernel);
}

}  // namespace pipevd::gpu
