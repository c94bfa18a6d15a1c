// Copies between device memory and pageable host memory at pinned speed. cudaMemcpy from or to
// pageable memory goes through the driver's own small pinned buffers on one thread, and into
// pages never touched it also takes every first-touch fault on that thread, so a large copy into
// fresh host memory runs at the page-fault rate of one thread, many times slower than PCIe. Here
// the data goes through two pinned chunks: the DMA of one overlaps `threads` host threads copying
// the other (and faulting its pages in parallel).
#pragma once
#include <cuda_runtime.h>

#include "base/scalar.hpp"
#include "core/entry_scan.hpp"

namespace pipevd::gpu {

// Whether `host` is host memory that CUDA does not know as pinned (malloc / new, not
// cudaMallocHost or cudaHostRegister).
bool is_pageable(const void* host);

// Two pinned chunks of `chunk` doubles each (the caller's, reused across calls).
struct PinnedChunks {
  double* chunk[2] = {nullptr, nullptr};
  long size = 0;
};

// dev[0, count) := host[0, count), host pageable; queued on `stream` after its earlier work and
// finished (host reusable, dev written) on return.
void copy_from_pageable(const double* host, double* dev, long count, const PinnedChunks& stage,
                        int threads, cudaStream_t stream);
// host[0, count) := dev[0, count), host pageable; after `stream`'s earlier work, finished on
// return.
void copy_to_pageable(const double* dev, double* host, long count, const PinnedChunks& stage,
                      int threads, cudaStream_t stream);

// The triangle uplo of the n x n host matrix a (ld lda; pageable or not) packed column by column
// (core/packed_triangle.hpp) into packed_dev[0, n(n+1)/2) through the pinned chunks: `threads`
// host threads pack one chunk while the other's DMA runs, and scan what they pack
// (core/entry_scan.hpp), so that a is read once. Queued on `stream` after its earlier work and
// finished (a reusable, packed_dev written) on return. Returns the triangle's scan.
EntryScan pack_triangle_to_device(char uplo, long n, const double* a, long lda, double* packed_dev,
                                  const PinnedChunks& stage, int threads, cudaStream_t stream);
EntryScan pack_triangle_to_device(char uplo, long n, const Complex* a, long lda,
                                  Complex* packed_dev, const PinnedChunks& stage, int threads,
                                  cudaStream_t stream);

}  // namespace pipevd::gpu
