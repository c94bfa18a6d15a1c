// Elementwise kernels of the complex Hermitian engine on the GPU backend: LAPACK's laset and the
// Hermitian mirror (the other triangle conjugated). Column-major device arrays of
// cuDoubleComplex (laid out as std::complex<double>); work is queued on `stream`.
#pragma once
#include <cuComplex.h>
#include <cuda_runtime.h>

namespace pipevd::gpu {

// a(i, j) = beta for i == j, alpha otherwise, over the m x n a.
void fill_complex(cudaStream_t stream, long m, long n, cuDoubleComplex alpha, cuDoubleComplex beta,
                  cuDoubleComplex* a, long lda);

// The n x n a made Hermitian from its triangle uplo ('L' or 'U'): the other strict triangle becomes
// the conjugate of the stored one (whatever it held, NaN included, is never read) and the
// diagonal's imaginary parts are zeroed, as zheevd reads a Hermitian matrix.
void mirror_hermitian(cudaStream_t stream, char uplo, long n, cuDoubleComplex* a, long lda);

}  // namespace pipevd::gpu
