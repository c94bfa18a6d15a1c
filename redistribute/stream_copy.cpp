#include "redistribute/stream_copy.hpp"

#include <cstdint>
#include <cstring>

#include "redistribute/tile_transpose.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pipevd {

namespace {

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

}  // namespace

#if defined(__SSE2__)

void stream_copy(double* dst, const double* src, long len) {
  if (len < 32) {  // under four lines: not worth the stream
    std::memcpy(dst, src, sizeof(double) * static_cast<size_t>(len > 0 ? len : 0));
    return;
  }
  if (!aligned16(dst)) {  // doubles are 8-aligned: one element puts dst on 16
    *dst++ = *src++;
    --len;
  }
  long k = 0;
  for (; k + 8 <= len; k += 8) {
    _mm_stream_pd(dst + k, _mm_loadu_pd(src + k));
    _mm_stream_pd(dst + k + 2, _mm_loadu_pd(src + k + 2));
    _mm_stream_pd(dst + k + 4, _mm_loadu_pd(src + k + 4));
    _mm_stream_pd(dst + k + 6, _mm_loadu_pd(src + k + 6));
  }
  for (; k < len; ++k) dst[k] = src[k];
}

// 8 x 8 blocks as transpose_tile, each a 2 x 2 transpose of pairs: two source columns' pair of
// rows become two destination rows' pair of columns, stored with non-temporal stores.
void stream_transpose_tile(const double* src, long lds, long rows, long cols, double* dst,
                           long ldd) {
  if (!aligned16(dst) || ldd % 2 != 0) {  // a block's rows would not all be 16-aligned
    transpose_tile(src, lds, rows, cols, dst, ldd);
    return;
  }
  const long full_rows = rows / 8 * 8, full_cols = cols / 8 * 8;
  for (long c0 = 0; c0 < full_cols; c0 += 8)
    for (long r0 = 0; r0 < full_rows; r0 += 8) {
      const double* s = src + r0 + c0 * lds;
      double* d = dst + c0 + r0 * ldd;
      for (long c = 0; c < 8; c += 2)
        for (long r = 0; r < 8; r += 2) {
          const __m128d x0 = _mm_loadu_pd(s + r + c * lds),
                        x1 = _mm_loadu_pd(s + r + (c + 1) * lds);
          _mm_stream_pd(d + c + r * ldd, _mm_unpacklo_pd(x0, x1));
          _mm_stream_pd(d + c + (r + 1) * ldd, _mm_unpackhi_pd(x0, x1));
        }
    }
  // The edges (rows or columns past the last full block), plainly.
  if (full_rows < rows)
    transpose_tile(src + full_rows, lds, rows - full_rows, cols, dst + full_rows * ldd, ldd);
  if (full_cols < cols)
    transpose_tile(src + full_cols * lds, lds, full_rows, cols - full_cols, dst + full_cols, ldd);
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

}  // namespace pipevd
