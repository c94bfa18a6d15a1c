#include "base/cuda_check.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/reflector_blocks.cuh"

namespace pipevd::gpu {
namespace {

// A contiguous chunk of sweep blocks per thread, then a scan of the chunk sums.
__global__ void __launch_bounds__(1024)
    block_offsets(ReflectorLayout L, long nk, long* __restrict__ off) {
  __shared__ long part[1024];
  const int t = static_cast<int>(threadIdx.x);
  const long chunk = (nk + 1023) / 1024;
  const long k0 = min(nk, t * chunk), k1 = min(nk, k0 + chunk);
  long sum = 0;
  for (long k = k0; k < k1; ++k) sum += L.steps(kReflectorBlock * k);
  part[t] = sum;
  __syncthreads();
  for (int d = 1; d < 1024; d *= 2) {
    const long add = t >= d ? part[t - d] : 0;
    __syncthreads();
    part[t] += add;
    __syncthreads();
  }
  long run = t > 0 ? part[t - 1] : 0;
  for (long k = k0; k < k1; ++k) {
    off[k] = run;
    run += L.steps(kReflectorBlock * k);
  }
  if (t == 1023) off[nk] = part[1023];
}

}  // namespace

long reflector_block_count(const ReflectorLayout& L) {
  long total = 0;
  for (long k = 0; k < blocks_of_sweeps(L); ++k) total += L.steps(kReflectorBlock * k);
  return total;
}

std::size_t reflector_block_offsets_bytes(const ReflectorLayout& L) {
  return (sizeof(long) * (blocks_of_sweeps(L) + 1) + 15) / 16 * 16;
}

void reflector_block_offsets(const ReflectorLayout& L, long* d_off, cudaStream_t stream) {
  block_offsets<<<1, 1024, 0, stream>>>(L, blocks_of_sweeps(L), d_off);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* reflector_blocks_kernel_anchor() {
  return reinterpret_cast<const void*>(&block_offsets);
}

}  // namespace pipevd::gpu
