// Copies whose destination is not read again soon (the engine's columns, the node window): with
// non-temporal stores, so the destination's lines are not read into the cache first (a third of
// the memory traffic of a copy) and do not evict the source's; whole 64-byte lines only, the
// partial lines at the ends plainly. Plain copies where the CPU has no SSE2. Stores from a thread
// become visible to other processes only after stream_fence() (or a locked instruction) on it.
#pragma once
#include <complex>
#include <cstring>

#include "redistribute/tile_transpose.hpp"

namespace pipevd {

// dst[0, len) = src[0, len).
void stream_copy(double* dst, const double* src, long len);

// As transpose_tile (tile_transpose.hpp): dst[c + r * ldd] = src[r + c * lds].
void stream_transpose_tile(const double* src, long lds, long rows, long cols, double* dst,
                           long ldd);

// Orders this thread's non-temporal stores before its later stores (sfence).
void stream_fence();

// Contiguous and transposing copies, streamed or plain (a run-time choice). A complex element is
// copied as its two doubles; its transposing copy (the Hermitian mirror, conjugated) is plain.
struct Copier {
  bool streaming;
  void copy(double* dst, const double* src, long len) const {
    if (streaming)
      stream_copy(dst, src, len);
    else
      std::memcpy(dst, src, sizeof(double) * static_cast<size_t>(len));
  }
  void copy(std::complex<double>* dst, const std::complex<double>* src, long len) const {
    copy(reinterpret_cast<double*>(dst), reinterpret_cast<const double*>(src), 2 * len);
  }
  void transpose(const std::complex<double>* src, long lds, long rows, long cols,
                 std::complex<double>* dst, long ldd) const {
    transpose_tile(src, lds, rows, cols, dst, ldd);
  }
  void transpose(const double* src, long lds, long rows, long cols, double* dst, long ldd) const {
    if (streaming)
      stream_transpose_tile(src, lds, rows, cols, dst, ldd);
    else
      transpose_tile(src, lds, rows, cols, dst, ldd);
  }
  void fence() const {
    if (streaming) stream_fence();
  }
};

// dst[0, len) = src[0, len) through `out` on up to `threads` threads, in pieces of 2 MiB (each
// fenced by the thread that stored it).
void copy_on_threads(const Copier& out, double* dst, const double* src, long len, int threads);

}  // namespace pipevd
