// Reflector blocks of the tensor-core BC-back kernels (gpu/bc_back_tensor.cuh, real, and
// gpu/bc_back_complex_tensor.cuh, complex): the reflectors of 8 consecutive sweeps at one step
// form one block with one T factor. Sweep block K (sweeps 8K .. 8K + 7) has steps(8K) blocks, so
// its first T factor sits at the sum of steps(8K') over K' < K: the offsets both kernels read.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

constexpr int kReflectorBlock = 8;  // reflectors per block: the DMMA's n

__host__ __device__ inline long blocks_of_sweeps(const ReflectorLayout& L) {
  return (L.sweeps() + kReflectorBlock - 1) / kReflectorBlock;
}

// The T factors of all sweep blocks: the sum of steps(8K).
long reflector_block_count(const ReflectorLayout& L);

// Device bytes of the offsets (blocks_of_sweeps(L) + 1 longs), rounded up to 16.
std::size_t reflector_block_offsets_bytes(const ReflectorLayout& L);

// d_off[K] = the index of sweep block K's first T factor, d_off[nK] = reflector_block_count(L);
// one block of 1024 threads on `stream`, asynchronous. d_off: reflector_block_offsets_bytes(L).
void reflector_block_offsets(const ReflectorLayout& L, long* d_off, cudaStream_t stream);

}  // namespace pipevd::gpu
