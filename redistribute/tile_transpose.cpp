#include "redistribute/tile_transpose.hpp"

#include <algorithm>

#include "redistribute/element.hpp"

namespace pipevd {

namespace {

constexpr long kBlock = 8;

// One full 8 x 8 block: fixed trip counts, so the compiler unrolls and vectorises it.
template <class T>
inline void block8(const T* __restrict src, long lds, T* __restrict dst, long ldd) {
  for (long r = 0; r < kBlock; ++r)
    for (long c = 0; c < kBlock; ++c) dst[c + r * ldd] = conjugate(src[r + c * lds]);
}

template <class T>
void transpose_blocks(const T* src, long lds, long rows, long cols, T* dst, long ldd) {
  for (long c0 = 0; c0 < cols; c0 += kBlock) {
    const long nc = std::min(kBlock, cols - c0);
    for (long r0 = 0; r0 < rows; r0 += kBlock) {
      const long nr = std::min(kBlock, rows - r0);
      const T* s = src + r0 + c0 * lds;
      T* d = dst + c0 + r0 * ldd;
      if (nr == kBlock && nc == kBlock) {
        block8(s, lds, d, ldd);
        continue;
      }
      for (long r = 0; r < nr; ++r)
        for (long c = 0; c < nc; ++c) d[c + r * ldd] = conjugate(s[r + c * lds]);
    }
  }
}

}  // namespace

void transpose_tile(const double* src, long lds, long rows, long cols, double* dst, long ldd) {
  transpose_blocks(src, lds, rows, cols, dst, ldd);
}

void transpose_tile(const std::complex<double>* src, long lds, long rows, long cols,
                    std::complex<double>* dst, long ldd) {
  transpose_blocks(src, lds, rows, cols, dst, ldd);
}

}  // namespace pipevd
