// Stage 2 on the host: bulge chasing, symmetric (or Hermitian) band -> tridiagonal, keeping every
// reflector.
#pragma once

#include <complex>
#include <vector>

#include "core/reflector_store.hpp"

namespace pipevd::host {

// Reduces the symmetric band matrix B (order n, bandwidth b, lower band storage ab/ldab as in
// core/band_storage.hpp, ldab >= min(b, n-1) + 1; ab is not modified) to the tridiagonal
// T = Q_b^T B Q_b (std::invalid_argument for n < 0, b < 0 or a too small ldab):
//   d[0 .. n-1]  diagonal of T,
//   e[0 .. n-2]  subdiagonal of T (e may be null when n <= 1),
//   U            every reflector of Q_b, in the layout of core/reflector_store.hpp (made here, with
//                U.layout = {n, min(b, n-1)}: a bandwidth past n-1 is the full lower triangle).
// The reference algorithm: sweep s = 0 .. n-3 annihilates column s below the subdiagonal, then
// chases the bulge down in steps of b (LAPACK dsb2st's kernels), one sweep after the other. Any
// schedule that starts step (s,t) only after the step ReflectorLayout::prerequisite(s,t) of sweep
// s-1 (the GPU's pipelined sweeps) gives bitwise the same results with the same step arithmetic.
void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                 ReflectorStore& U);
// The Hermitian band (zhb2st's kernels): the real tridiagonal T = D^H Q_b^H B Q_b D, e >= 0, with
// U.phase holding D (core/reflector_store.hpp).
void bulge_chase(long n, long b, const std::complex<double>* ab, long ldab, double* d, double* e,
                 ComplexReflectorStore& U);

// The same d and e (bitwise) without keeping the reflectors (JOBZ = 'N': no n^2/2 elements of U).
void bulge_chase_values(long n, long b, const double* ab, long ldab, double* d, double* e);

// The working matrix of bulge chasing: lower band storage with 2b - 1 subdiagonals, the band plus
// room for the bulge (the b x b block below the band that a step's right update fills).
template <class T>
class BasicBulgeBand {
 public:
  // Copies B (lower band storage, bandwidth layout.b) in.
  BasicBulgeBand(const ReflectorLayout& layout, const T* ab, long ldab);
  // B(i, j) for i >= j, i - j < 2b.
  T& operator()(long i, long j) { return a_[static_cast<std::size_t>((i - j) + j * ld_)]; }
  // B(i, j) for |i - j| < 2b, through symmetry (the conjugate above the diagonal).
  T herm(long i, long j) const;

 private:
  long ld_;
  std::vector<T> a_;
};
using BulgeBand = BasicBulgeBand<double>;

// Step t of sweep s: generates H(s,t) (v: b elements, tau) and applies it to `a` (H^H from the
// left, H from the right). Reads and writes only entries B(i, j) with i in [first_row,
// min(n, first_row + length + b)) and j in [c, first_row + length), c = s for t = 0 and
// first_row - b otherwise.
template <class T>
void chase_step(BasicBulgeBand<T>& a, const ReflectorLayout& layout, long s, long t, T* v, T& tau);

}  // namespace pipevd::host
