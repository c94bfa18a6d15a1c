// Eigenvalues of a symmetric tridiagonal T by parallel bisection (core/sturm_bisection.hpp): the
// host's preparation (scaling, e^2, pivmin, Gershgorin interval, tolerances), shared with the GPU
// kernel, and the host implementation on std::threads. The engine's JOBZ = 'N' stage 3 on the GPU
// backend; on the host backend the reference dsterf stays the default (EngineBackend).
#pragma once

#include <vector>

#include "core/sturm_bisection.hpp"

namespace pipevd {

// The scaled arrays a SturmProblem points to (host memory).
struct SturmArrays {
  std::vector<double> d, e2;
};

// Fills `arrays` from T = (d, e) (n diagonal, n - 1 off-diagonal entries) and returns the problem
// pointing into them. abstol <= 0: ulp * ||T|| (dstebz's default), else the caller's, in T's
// units. A T with a NaN or Inf entry gives lo = hi = NaN (see tridiagonal_eigenvalues_bisection).
SturmProblem prepare_sturm(long n, const double* d, const double* e, SturmArrays& arrays,
                           double abstol = 0);

// The n eigenvalues of T, ascending, into w (d and e are not modified); threads <= 0: the
// hardware's. Returns 0, or 1 when T has a NaN or Inf entry (w is then NaN), the place where
// dsterf would report a failure to converge.
int tridiagonal_eigenvalues_bisection(long n, const double* d, const double* e, double* w,
                                      int threads = 0, double abstol = 0);

}  // namespace pipevd
