// Stage 2 on the host: bulge chasing, symmetric band -> tridiagonal, keeping every reflector.
#pragma once

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

// The same d and e (bitwise) without keeping the reflectors (JOBZ = 'N': no n^2/2 doubles of U).
void bulge_chase_values(long n, long b, const double* ab, long ldab, double* d, double* e);

// The working matrix of bulge chasing: lower band storage with 2b - 1 subdiagonals, the band plus
// room for the bulge (the b x b block below the band that a step's right update fills).
class BulgeBand {
 public:
  // Copies B (lower band storage, bandwidth layout.b) in.
  BulgeBand(const ReflectorLayout& layout, const double* ab, long ldab);
  // B(i, j) for i >= j, i - j < 2b.
  double& operator()(long i, long j) { return a_[static_cast<std::size_t>((i - j) + j * ld_)]; }
  // B(i, j) for |i - j| < 2b, through symmetry.
  double& sym(long i, long j) { return i >= j ? (*this)(i, j) : (*this)(j, i); }

 private:
  long ld_;
  std::vector<double> a_;
};

// Step t of sweep s: generates H(s,t) (v: b doubles, tau) and applies it to `a`. Reads and writes
// only entries B(i, j) with i in [first_row, min(n, first_row + length + b)) and j in [c,
// first_row + length), c = s for t = 0 and first_row - b otherwise.
void chase_step(BulgeBand& a, const ReflectorLayout& layout, long s, long t, double* v,
                double& tau);

}  // namespace pipevd::host
