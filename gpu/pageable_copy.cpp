// Staged copies to and from pageable host memory (see pageable_copy.hpp).
#include "gpu/pageable_copy.hpp"

#include <algorithm>
#include <vector>

#include "base/chunk_pipeline.hpp"
#include "base/parallel_for.hpp"
#include "core/packed_triangle.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {
namespace {

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

// Chunk i of a copy cut in pieces of `size` doubles: its pinned buffer (i mod 2), offset and
// length.
struct Chunk {
  int buffer;
  long off, len;
};
Chunk chunk(long i, long count, long size) {
  return {static_cast<int>(i % 2), i * size, std::min(size, count - i * size)};
}

// Doubles one thread packs at a time: a pinned chunk (2 MiB at least, a power of two) holds
// several, so that the threads share each chunk, and one fits the core's cache between the scan's
// read of A and the copy's.
constexpr long kPackPiece = 1L << 15;
// Doubles a copy gives each of its threads at least (16 MiB): starting the threads and handing
// the pinned chunks between them costs more than a thread's share of a smaller copy saves, so a
// small matrix's copies take one thread however many cores the host has.
constexpr long kCopyPerThread = 1L << 21;

int copy_threads(long count, int threads) {
  return static_cast<int>(std::clamp<long>(count / kCopyPerThread, 1, std::max(1, threads)));
}

template <class S>
EntryScan pack_triangle(char uplo, long n, const S* a, long lda, S* packed_dev,
                        const PinnedChunks& stage, int threads, cudaStream_t stream) {
  const TrianglePacker<S> packer(uplo, n, a, lda);
  constexpr long words = words_per<S>;
  const long count = packer.size() * words;
  if (count <= 0) return {};
  ChunkEvents ev;
  threads = copy_threads(count, threads);
  std::vector<EntryScanMax> found(static_cast<std::size_t>(threads));
  double* const dev = as_words(packed_dev);
  produce_through_two_chunks(
      count, stage.chunk, stage.size, std::min(kPackPiece, stage.size), threads,
      [&](long begin, long len, double* dst, int worker) {
        packer.pack(begin / words, len / words, elements_in<S>(dst), found[worker]);
      },
      [&](long off, long len, int buffer) {
        PIPEVD_CUDA_CHECK(cudaMemcpyAsync(dev + off, stage.chunk[buffer], sizeof(double) * len,
                                          cudaMemcpyHostToDevice, stream));
        PIPEVD_CUDA_CHECK(cudaEventRecord(ev.done[buffer], stream));
      },
      [&](int buffer) { PIPEVD_CUDA_CHECK(cudaEventSynchronize(ev.done[buffer])); });
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
  EntryScanMax all;
  for (const EntryScanMax& f : found) all.add(f);
  return all.result();
}

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
  threads = copy_threads(count, threads);
  const long chunks = (count + stage.size - 1) / stage.size;
  for (long i = 0; i < chunks; ++i) {
    const Chunk c = chunk(i, count, stage.size);
    // Chunk i - 2's DMA must have read this pinned chunk; chunk i - 1's runs meanwhile.
    if (i >= 2) PIPEVD_CUDA_CHECK(cudaEventSynchronize(ev.done[c.buffer]));
    parallel_memcpy(stage.chunk[c.buffer], host + c.off, c.len, threads);
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(dev + c.off, stage.chunk[c.buffer], sizeof(double) * c.len,
                                      cudaMemcpyHostToDevice, stream));
    PIPEVD_CUDA_CHECK(cudaEventRecord(ev.done[c.buffer], stream));
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_to_pageable(const double* dev, double* host, long count, const PinnedChunks& stage,
                      int threads, cudaStream_t stream) {
  ChunkEvents ev;
  threads = copy_threads(count, threads);
  const long chunks = (count + stage.size - 1) / stage.size;
  auto queue = [&](long i) {
    const Chunk c = chunk(i, count, stage.size);
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(stage.chunk[c.buffer], dev + c.off, sizeof(double) * c.len,
                                      cudaMemcpyDeviceToHost, stream));
    PIPEVD_CUDA_CHECK(cudaEventRecord(ev.done[c.buffer], stream));
  };
  for (long i = 0; i < std::min(2L, chunks); ++i) queue(i);
  for (long i = 0; i < chunks; ++i) {
    const Chunk c = chunk(i, count, stage.size);
    PIPEVD_CUDA_CHECK(cudaEventSynchronize(ev.done[c.buffer]));
    // Chunk i + 1's DMA runs meanwhile.
    parallel_memcpy(host + c.off, stage.chunk[c.buffer], c.len, threads);
    if (i + 2 < chunks) queue(i + 2);
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
}

EntryScan pack_triangle_to_device(char uplo, long n, const double* a, long lda, double* packed_dev,
                                  const PinnedChunks& stage, int threads, cudaStream_t stream) {
  return pack_triangle(uplo, n, a, lda, packed_dev, stage, threads, stream);
}

EntryScan pack_triangle_to_device(char uplo, long n, const Complex* a, long lda,
                                  Complex* packed_dev, const PinnedChunks& stage, int threads,
                                  cudaStream_t stream) {
  return pack_triangle(uplo, n, a, lda, packed_dev, stage, threads, stream);
}

}  // namespace pipevd::gpu
