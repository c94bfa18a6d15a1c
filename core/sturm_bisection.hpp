// Eigenvalues of a symmetric tridiagonal T by bisection on Sturm counts (LAPACK dstebz's method),
// one eigenvalue per call, so that n of them run in parallel (host threads or one CUDA thread
// each). The same functions run on the host and in the GPU kernel (gpu/sturm_bisection.cu).
//
// Count. The number of eigenvalues of T below x is the number of negative pivots of the LDL^T
// factorisation of T - x I: q_0 = d_0 - x, q_i = (d_i - x) - e_{i-1}^2 / q_{i-1}. A pivot with
// |q| <= pivmin is replaced by -pivmin (dstebz's safeguard): no division by zero, and with
// pivmin = safmin * max(1, max e^2) the quotient e^2 / q stays below 1/safmin < overflow.
//
// Scaling. The problem is scaled by a power of two (exact, in two factors so that each is a
// normal double even for subnormal or near-DBL_MAX entries) to max|T| in [0.5, 1) before: then
// e^2 <= 1 cannot overflow and d - x - e^2/q stays finite at any T's scale (1e-300 .. 1e300).
// Entries tiny against max|T| may underflow in e^2: an absolute change far below eps * ||T||.
//
// Tolerance. Bisection stops when hi - lo <= max(abstol, reltol * max(|lo|, |hi|)) and returns the
// midpoint (dlaebz's test). abstol = ulp * ||T||_gersh, dstebz's default: the same absolute error
// class, O(eps ||T||), as dsterf and ScaLAPACK PDSYEVD's dstedc, at <= ~54 halvings per
// eigenvalue; reltol = 2 ulp refines eigenvalues large against abstol further.
//
// Bitwise equality of host and device. The count uses only subtraction and IEEE division (exact
// rounding on both); the one product in the loop is written mul_rn so that no FMA contraction can
// change it on the device. Interval and tolerances come from the host (prepare_sturm).
#pragma once

#include "core/reflector_store.hpp"  // PIPEVD_HOST_DEVICE

namespace pipevd {

// The scaled problem every eigenvalue's bisection reads (pointers to host or device arrays).
struct SturmProblem {
  long n = 0;
  const double* d = nullptr;   // scaled diagonal, n entries
  const double* e2 = nullptr;  // squares of the scaled off-diagonal, n - 1 entries
  double pivmin = 0;           // smallest pivot magnitude
  double lo = 0, hi = 0;       // Gershgorin interval (widened): count(lo) = 0, count(hi) = n
  double abstol = 0, reltol = 0;
  // Eigenvalue of the caller's T = scaled eigenvalue * unscale * unscale2: 2^k in two powers of
  // two, because 2^k alone overflows (k = 1024, entries near DBL_MAX) or is not representable.
  double unscale = 1, unscale2 = 1;
};

PIPEVD_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// Number of eigenvalues of the scaled T less than x.
PIPEVD_HOST_DEVICE inline long sturm_count(const SturmProblem& p, double x) {
  double q = p.d[0] - x;
  if (q <= p.pivmin && q >= -p.pivmin) q = -p.pivmin;
  long count = q < 0 ? 1 : 0;
  for (long i = 1; i < p.n; ++i) {
    q = (p.d[i] - x) - p.e2[i - 1] / q;
    if (q <= p.pivmin && q >= -p.pivmin) q = -p.pivmin;
    count += q < 0 ? 1 : 0;
  }
  return count;
}

// The i-th smallest eigenvalue (0-based) of the caller's T: bisection keeps count(lo) <= i <
// count(hi) on [p.lo, p.hi].
PIPEVD_HOST_DEVICE inline double bisect_eigenvalue(const SturmProblem& p, long i) {
  double lo = p.lo, hi = p.hi;
  // 2100 halvings exhaust any double interval; the tolerance test ends far sooner.
  for (int it = 0; it < 2100; ++it) {
    const double alo = lo < 0 ? -lo : lo, ahi = hi < 0 ? -hi : hi;
    const double rel = mul_rn(p.reltol, alo > ahi ? alo : ahi);
    const double tol = p.abstol > rel ? p.abstol : rel;
    const double mid = mul_rn(0.5, lo + hi);
    if (hi - lo <= tol || mid <= lo || mid >= hi) break;
    if (sturm_count(p, mid) > i)
      hi = mid;
    else
      lo = mid;
  }
  return mul_rn(mul_rn(mul_rn(0.5, lo + hi), p.unscale), p.unscale2);
}

}  // namespace pipevd
