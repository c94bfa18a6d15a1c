// Stage 2 on the host: bulge chasing, symmetric band -> tridiagonal, keeping every reflector.
#pragma once

#include "core/reflector_store.hpp"

namespace pipevd::host {

// Reduces the symmetric band matrix B (order n, bandwidth b, lower band storage ab/ldab as in
// core/band_storage.hpp; ab is not modified) to the tridiagonal T = Q_b^T B Q_b:
//   d[0 .. n-1]  diagonal of T,
//   e[0 .. n-2]  subdiagonal of T (e may be null when n <= 1),
//   U            every reflector of Q_b, in the layout of core/reflector_store.hpp (resized here).
// b >= n - 1 is allowed (the band is then the full lower triangle). The reference algorithm:
// sweep s = 0 .. n-3 annihilates column s below the subdiagonal, then chases the bulge down in
// steps of b (LAPACK dsb2st's kernels), one sweep after the other.
void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                 ReflectorStore& U);

}  // namespace pipevd::host
