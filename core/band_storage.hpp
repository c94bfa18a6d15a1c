// The symmetric band matrix that the DBBR stage hands to bulge chasing.
//
// Format (LAPACK's 'L' band storage, as dsbev/dsbtrd take it): a symmetric n x n matrix B with
// bandwidth b (B(i, j) = 0 for |i - j| > b) is held by its lower triangle only,
//
//   ab[(i - j) + j * ldab] = B(i, j)   for 0 <= j < n,  j <= i <= min(n - 1, j + b),
//
// column-major with leading dimension ldab >= b + 1: column j of the array holds B(j, j) (the
// diagonal, row 0 of the array), B(j + 1, j) (the first subdiagonal, row 1), ..., B(j + b, j)
// (row b). The entries of the array below row b, and those of the last b columns that fall past
// row n - 1 of B, are not referenced. Indices are 0-based; sizes and offsets are 64-bit.
#pragma once

#include <algorithm>

namespace pipevd {

// A view (no ownership) of a symmetric band matrix in lower band storage.
struct BandView {
  long n = 0;            // order of B
  long b = 0;            // bandwidth: number of subdiagonals (b >= 0; b = 1 is tridiagonal)
  double* ab = nullptr;  // lower band storage, see above
  long ldab = 1;         // leading dimension, >= b + 1

  // Offset of B(i, j) for j <= i <= j + b.
  long offset(long i, long j) const { return (i - j) + j * ldab; }
  double& at(long i, long j) const { return ab[offset(i, j)]; }
  // B(i, j) for any 0 <= i, j < n (zero outside the band), through symmetry.
  double get(long i, long j) const {
    if (i < j) std::swap(i, j);
    return i - j > b ? 0.0 : ab[offset(i, j)];
  }
};

// Number of doubles a lower band storage of order n, bandwidth b and leading dimension ldab
// occupies.
inline long band_storage_size(long n, long ldab) { return n * ldab; }

// Packs the band of columns [j0, j1) of a symmetric matrix held densely: a points at A(0, j0),
// all n rows of those columns, column-major with leading dimension lda >= n (the engine layout's
// input side); ab points at the band storage of the whole matrix. Only the lower triangle of A is
// read. Column j of the band storage is the contiguous ab[j * ldab .. j * ldab + b], so the column
// ranges that engine ranks pack can be gathered as they are.
inline void pack_lower_band(long n, long b, long j0, long j1, const double* a, long lda, double* ab,
                            long ldab) {
  for (long j = j0; j < j1; ++j)
    for (long i = j; i <= std::min(n - 1, j + b); ++i)
      ab[(i - j) + j * ldab] = a[i + (j - j0) * lda];
}

}  // namespace pipevd
