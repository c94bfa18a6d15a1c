// The packed triangle that the direct one-stage path uploads (EngineBackend::upload_triangle): the
// triangle uplo of an n x n matrix column after column, each column's entries of the triangle in
// row order: rows j..n-1 of column j for 'L' (n - j entries), rows 0..j for 'U' (j + 1); n(n+1)/2
// entries in all. A device backend sends it instead of the whole matrix (half the bytes) and
// unpacks it into place on the device; the offsets below serve both sides, host and device code.
#pragma once
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/entry_scan.hpp"

#ifndef PIPEVD_HOST_DEVICE  // as core/reflector_store.hpp defines it
#if defined(__CUDACC__)
#define PIPEVD_HOST_DEVICE __host__ __device__
#else
#define PIPEVD_HOST_DEVICE
#endif
#endif

namespace pipevd {

PIPEVD_HOST_DEVICE inline long packed_triangle_size(long n) { return n * (n + 1) / 2; }
// Where column j starts in the packed triangle, its first row, and its entries.
PIPEVD_HOST_DEVICE inline long packed_column_begin(bool lower, long n, long j) {
  return lower ? j * n - j * (j - 1) / 2 : j * (j + 1) / 2;
}
PIPEVD_HOST_DEVICE inline long packed_first_row(bool lower, long j) { return lower ? j : 0; }
PIPEVD_HOST_DEVICE inline long packed_column_rows(bool lower, long n, long j) {
  return lower ? n - j : j + 1;
}

// 'L' or 'U' in either case as a flag; anything else throws std::invalid_argument.
inline bool lower_triangle(char uplo) {
  if (uplo == 'L' || uplo == 'l') return true;
  if (uplo == 'U' || uplo == 'u') return false;
  throw std::invalid_argument(std::string("pipevd: triangle '") + uplo + "' is not L or U");
}

// Packs parts of the triangle of the n x n host matrix a (ld lda, elements of S: double or
// std::complex<double>) and scans what it packs (core/entry_scan.hpp). Reads a only; pack() may
// run on several threads at once.
template <class S>
class TrianglePacker {
 public:
  TrianglePacker(char uplo, long n, const S* a, long lda)
      : lower_(lower_triangle(uplo)), n_(std::max(0L, n)), a_(a), lda_(lda) {
    begin_.resize(static_cast<std::size_t>(n_) + 1);
    for (long j = 0; j <= n_; ++j) begin_[j] = packed_column_begin(lower_, n_, j);
  }
  long size() const { return packed_triangle_size(n_); }
  // dst[0, len) := the packed triangle's entries [begin, begin + len), which `found` scans from a
  // (each column's piece once, where it is read for the copy, so that a is read once). Any split
  // of [0, size()) over calls and threads gives the same packed triangle and, the scans merged,
  // the same scan.
  void pack(long begin, long len, S* dst, EntryScanMax& found) const {
    EntryScanMax piece;  // merged once: threads' scans side by side share cache lines
    const long end = begin + len;
    long j = std::upper_bound(begin_.begin(), begin_.end(), begin) - begin_.begin() - 1;
    for (long p = begin; p < end; ++j) {
      const long row = packed_first_row(lower_, j) + (p - begin_[j]);
      const long take = std::min(end, begin_[j + 1]) - p;
      const S* src = a_ + row + j * lda_;
      piece.add_column_part(src, take, j - row);
      std::memcpy(dst + (p - begin), src, sizeof(S) * static_cast<std::size_t>(take));
      p += take;
    }
    found.add(piece);
  }

 private:
  bool lower_;
  long n_;
  const S* a_;
  long lda_;
  std::vector<long> begin_;  // packed_column_begin of columns 0..n
};

}  // namespace pipevd
