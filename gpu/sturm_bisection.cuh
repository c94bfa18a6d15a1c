// The GPU's eigenvalues-only tridiagonal solver: core/sturm_bisection.hpp's bisection, one CUDA
// thread per eigenvalue, all n at once.
#pragma once
#include <cuda_runtime.h>

#include "core/sturm_bisection.hpp"

namespace pipevd::gpu {

// w[i] (device, n entries) = eigenvalue i of the problem p, whose d and e2 are device arrays
// (prepared on the host by prepare_sturm and copied). Asynchronous on `stream`; not sorted.
void bisect_eigenvalues(const SturmProblem& p, double* w, cudaStream_t stream);

}  // namespace pipevd::gpu
