// The entry scan's arithmetic: whether every entry of the referenced triangle of a symmetric
// (Hermitian) matrix is finite, and the largest |a_ij| there (PDLANSY's / PZLANHE's 'M' norm: a
// real entry's |a_ij|, a complex entry's modulus, a Hermitian diagonal's |real part|). Ranges of
// entries are scanned in any order and split, by any threads, and their scans merged: the result
// is the same bit for bit (a maximum, exact). Before any route interface/non_finite_check scans
// each rank's local part of sub(A) with it; on the direct one-stage path the backend's
// upload_triangle (core/backend.hpp) scans the triangle it copies with it, so that A is read once.
#pragma once
#include "base/scalar.hpp"

namespace pipevd {

// What a scan of the referenced triangle found.
struct EntryScan {
  bool non_finite = false;  // a NaN or an infinity there
  // The largest |a_ij| there, PDSYEVD's scaling's norm (the route needs no pass of its own over A
  // or its copy). Meaningless where non_finite.
  double max_abs = 0;
};

// A scan in progress: what the entries read so far hold.
class EntryScanMax {
 public:
  // A diagonal entry: PZLANHE takes its real part only (a Hermitian diagonal is real; PZHEEVD
  // ignores the imaginary parts there, though a NaN in them is still refused).
  void add_diagonal(double v);
  void add_diagonal(Complex v);
  // Entries a[0, count) off the diagonal.
  void add_range(const double* a, long count);
  void add_range(const Complex* a, long count);
  // Entries a[0, count) of one column of the triangle, among them the diagonal's, a[diagonal],
  // where 0 <= diagonal < count (any other value: the diagonal is not among them).
  template <class S>
  void add_column_part(const S* a, long count, long diagonal) {
    if (diagonal < 0 || diagonal >= count) return add_range(a, count);
    add_range(a, diagonal);
    add_diagonal(a[diagonal]);
    add_range(a + diagonal + 1, count - diagonal - 1);
  }
  // What another scan (of other entries) found.
  void add(const EntryScanMax& other);
  EntryScan result() const { return {!finite_, modulus_}; }

 private:
  double modulus_ = 0;
  bool finite_ = true;
};

}  // namespace pipevd
