// Staged copies to and from pageable host memory (see pageable_copy.hpp).
#include "gpu/pageable_copy.hpp"

#include <algorithm>
#include <cstring>

#include "gpu/gpu_context.hpp"
#include "redistribute/parallel_pieces.hpp"

namespace pipevd::gpu {
namespace {

// dst[0, count) := src[0, count) on up to `threads` threads, slices of at least 1 MiB.
void threaded_copy(double* dst, const double* src, long count, int threads) {
  constexpr long kMinSlice = (1L << 20) / sizeof(double);
  const long slices = std::max(1L, std::min<long>(threads, count / kMinSlice));
  parallel_for(slices, static_cast<int>(slices), [&](long s) {
    const long begin = count * s / slices, end = count * (s + 1) / slices;
    std::memcpy(dst + begin, src + begin, sizeof(double) * (end - begin));
  });
}

// Two events for the two chunks' DMAs, destroyed with the copy.
struct ChunkEvents {
  cudaEvent_t done[2] = {nullptr, nullptr};
  ChunkEvents() {
    for (cudaEvent_t& e : done)
      PIPEVD_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~ChunkEvents() {
    for (cudaEvent_t e : done) cudaEventDestroy(e);
  }
  ChunkEvents(const ChunkEvents&) = delete;
  ChunkEvents& operator=(const ChunkEvents&) = delete;
};

}  // namespace

bool is_pageable(const void* host) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, host) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer: treated as pageable
    return true;
  }
  return attr.type == cudaMemoryTypeUnregistered;
}

void copy_from_pageable(const double* host, double* dev, long count, const PinnedChunks& stage,
                        int threads, cudaStream_t stream) {
  ChunkEvents ev;
  const long chunks = (count + stage.size - 1) / stage.size;
  for (long i = 0; i < chunks; ++i) {
    const int s = static_cast<int>(i % 2);
    const long off = i * stage.size, len = std::min(stage.size, count - off);
    // Chunk i - 2's DMA must have read this pinned chunk; chunk i - 1's runs meanwhile.
    if (i >= 2) PIPEVD_CUDA_CHECK(cudaEventSynchronize(ev.done[s]));
    threaded_copy(stage.chunk[s], host + off, len, threads);
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(dev + off, stage.chunk[s], sizeof(double) * len,
                                      cudaMemcpyHostToDevice, stream));
    PIPEVD_CUDA_CHECK(cudaEventRecord(ev.done[s], stream));
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_to_pageable(const double* dev, double* host, long count, const PinnedChunks& stage,
                      int threads, cudaStream_t stream) {
  ChunkEvents ev;
  const long chunks = (count + stage.size - 1) / stage.size;
  auto queue = [&](long i) {
    const int s = static_cast<int>(i % 2);
    const long off = i * stage.size, len = std::min(stage.size, count - off);
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(stage.chunk[s], dev + off, sizeof(double) * len,
                                      cudaMemcpyDeviceToHost, stream));
    PIPEVD_CUDA_CHECK(cudaEventRecord(ev.done[s], stream));
  };
  for (long i = 0; i < std::min(2L, chunks); ++i) queue(i);
  for (long i = 0; i < chunks; ++i) {
    const int s = static_cast<int>(i % 2);
    const long off = i * stage.size, len = std::min(stage.size, count - off);
    PIPEVD_CUDA_CHECK(cudaEventSynchronize(ev.done[s]));
    threaded_copy(host + off, stage.chunk[s], len, threads);  // chunk i + 1's DMA meanwhile
    if (i + 2 < chunks) queue(i + 2);
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace pipevd::gpu
