#include "redistribute/stream_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/parallel_for.hpp"
#include "redistribute/tile_transpose.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pipevd {

#if defined(__SSE2__)

// Whole 64-byte lines only go through non-temporal stores: a partly streamed line is written to
// memory in pieces, several times slower than the cached store, so the partial lines at the ends
// are stored plainly.
constexpr long kLine = 8;  // doubles per line

// Doubles from p to the next line boundary (0..7).
long to_line(const double* p) {
  return static_cast<long>((64 - (reinterpret_cast<std::uintptr_t>(p) & 63)) & 63) / 8;
}

void stream_copy(double* dst, const double* src, long len) {
  const long head = (reinterpret_cast<std::uintptr_t>(dst) & 7) ? len : to_line(dst);
  if (len < head + 4 * kLine) {  // under four whole lines: not worth it
    std::memcpy(dst, src, sizeof(double) * static_cast<size_t>(len > 0 ? len : 0));
    return;
  }
  for (long k = 0; k < head; ++k) dst[k] = src[k];
  long k = head;
  for (; k + kLine <= len; k += kLine) {
    _mm_stream_pd(dst + k, _mm_loadu_pd(src + k));
    _mm_stream_pd(dst + k + 2, _mm_loadu_pd(src + k + 2));
    _mm_stream_pd(dst + k + 4, _mm_loadu_pd(src + k + 4));
    _mm_stream_pd(dst + k + 6, _mm_loadu_pd(src + k + 6));
  }
  for (; k < len; ++k) dst[k] = src[k];
}

// Blocks of 8 source rows x 8 source columns whose destination rows are whole lines: two source
// rows at a time become two destination lines, each written by four consecutive stores, so no
// more than two lines are open at once. Needs ldd a multiple of 8 (every destination row then
// starts at the same place in its line); the columns before the first line boundary, after the
// last, and rows past the last block of 8 go plainly.
void stream_transpose_tile(const double* src, long lds, long rows, long cols, double* dst,
                           long ldd) {
  const long head = (reinterpret_cast<std::uintptr_t>(dst) & 7) ? cols : to_line(dst);
  if (ldd % kLine != 0 || cols < head + kLine || rows < kLine) {
    transpose_tile(src, lds, rows, cols, dst, ldd);
    return;
  }
  const long full_cols = (cols - head) / kLine * kLine, full_rows = rows / kLine * kLine;
  for (long c0 = head; c0 < head + full_cols; c0 += kLine)
    for (long r0 = 0; r0 < full_rows; r0 += kLine)
      for (long r = r0; r < r0 + kLine; r += 2) {
        const double* s = src + r + c0 * lds;
        __m128d x[kLine];
        for (long c = 0; c < kLine; ++c) x[c] = _mm_loadu_pd(s + c * lds);
        double* d0 = dst + c0 + r * ldd;
        double* d1 = d0 + ldd;
        for (long c = 0; c < kLine; c += 2) _mm_stream_pd(d0 + c, _mm_unpacklo_pd(x[c], x[c + 1]));
        for (long c = 0; c < kLine; c += 2) _mm_stream_pd(d1 + c, _mm_unpackhi_pd(x[c], x[c + 1]));
      }
  // The rest plainly: columns before and after the streamed ones, then rows past full_rows.
  if (head > 0) transpose_tile(src, lds, full_rows, head, dst, ldd);
  const long tail = head + full_cols;
  if (tail < cols) transpose_tile(src + tail * lds, lds, full_rows, cols - tail, dst + tail, ldd);
  if (full_rows < rows)
    transpose_tile(src + full_rows, lds, rows - full_rows, cols, dst + full_rows * ldd, ldd);
}

void stream_fence() { _mm_sfence(); }

#else

void stream_copy(double* dst, const double* src, long len) {
  std::memcpy(dst, src, sizeof(double) * static_cast<size_t>(len > 0 ? len : 0));
}

void stream_transpose_tile(const double* src, long lds, long rows, long cols, double* dst,
                           long ldd) {
  transpose_tile(src, lds, rows, cols, dst, ldd);
}

void stream_fence() {}

#endif

void copy_on_threads(const Copier& out, double* dst, const double* src, long len, int threads) {
  for_each_copy_piece(len, threads, [&](long begin, long count) {
    out.copy(dst + begin, src + begin, count);
    out.fence();
  });
}

}  // namespace pipevd
