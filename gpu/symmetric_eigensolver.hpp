// The GPU backend's one-stage solver: cuSOLVER's cusolverDnXsyevd (64-bit API) on one dense
// symmetric matrix in device memory (EngineBackend::symmetric_eigensolver of gpu::GpuBackend), or
// on one Hermitian matrix of CUDA_C_64F (hermitian_eigensolver).
#pragma once
#include <cusolverDn.h>

#include <complex>

#include "core/backend.hpp"

namespace pipevd::gpu {

// Eigenvalues of the n x n symmetric a (device, lower triangle read) ascending into w (host) and,
// with want_vectors, the eigenvectors over a; on the stream `solver` is bound to, finished on
// return. Device workspace comes from `mem` (its pool; a failed allocation is OutOfMemory, as is
// cuSOLVER's ALLOC_FAILED); any other cuSOLVER failure or an illegal argument (devInfo < 0) is a
// DeviceError. Returns devInfo: 0, or > 0 where the solve did not converge (LAPACK dsyevd's
// convention, which PDSYEVD's INFO follows for a failed tridiagonal solve).
int cusolver_syevd(EngineBackend& mem, cusolverDnHandle_t solver, cusolverDnParams_t params,
                   bool want_vectors, long n, double* a, long lda, double* w);

// The same for the n x n Hermitian a (device, complex<double>, triangle uplo 'L' or 'U' read):
// LAPACK zheevd's convention.
int cusolver_heevd(EngineBackend& mem, cusolverDnHandle_t solver, cusolverDnParams_t params,
                   bool want_vectors, char uplo, long n, std::complex<double>* a, long lda,
                   double* w);

}  // namespace pipevd::gpu
