// The one-stage path's solver on the CPU: LAPACK's dsyevd on one dense symmetric matrix, zheevd on
// a Hermitian one (the host engine's one-stage path, and EngineBackend::symmetric_eigensolver's and
// hermitian_eigensolver's defaults).
#pragma once
#include <complex>

namespace pipevd {

// Eigenvalues (ascending, into w) and, with want_vectors, eigenvectors (over a) of the n x n
// symmetric a, lower triangle read. Returns dsyevd's INFO (> 0: the solve did not converge).
// Throws ConfigurationError where dsyevd's workspace exceeds its 32-bit integers.
int dense_eigenpairs(bool want_vectors, long n, double* a, long lda, double* w);

// The same for the n x n Hermitian a, triangle uplo ('L' or 'U') read: zheevd's INFO.
int dense_hermitian_eigenpairs(bool want_vectors, char uplo, long n, std::complex<double>* a,
                               long lda, double* w);

}  // namespace pipevd
