// Transposing copy of a tile, for the mirrored half of a symmetric (or Hermitian) matrix.
#pragma once
#include <complex>

namespace pipevd {

// dst[c + r * ldd] = src[r + c * lds] for r < rows, c < cols. Works in 8 x 8 blocks so that a
// large power-of-two stride (an LLD or n of 4096, 8192, ...) does not evict the lines a block is
// still using: each block touches 8 source and 8 destination lines.
void transpose_tile(const double* src, long lds, long rows, long cols, double* dst, long ldd);

// The Hermitian twin: dst[c + r * ldd] = conj(src[r + c * lds]).
void transpose_tile(const std::complex<double>* src, long lds, long rows, long cols,
                    std::complex<double>* dst, long ldd);

}  // namespace pipevd
