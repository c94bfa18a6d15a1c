// A prescribed spectrum's test matrix formed on one GPU: Q diag(lambda) Q^T (Q diag(lambda) Q^H for
// the complex Hermitian twin) with Q from the QR factorization of a matrix of N(0, 1) entries
// (cuRAND's Philox, seeded), by cuSOLVER (geqrf, orgqr/ungqr) and cuBLAS (dgmm, gemm), then made
// exactly symmetric (Hermitian, real diagonal) as (A + A^T)/2 on the device. It replaces the host's
// LAPACK formation (tests/support/spectra, the oracle) where that takes minutes: the same
// distribution of Q (Haar-like), not the same bits; the same seed gives the same bits on one
// machine.
// On the calling process's current device; nothing here is collective.
#pragma once
#include <complex>
#include <vector>

namespace pipevd::bench {

// The full n x n matrix with eigenvalues lambda (n = lambda.size(), any order), column-major.
// Throws std::runtime_error where the device lacks the memory (about three n x n arrays and
// cuSOLVER's workspace; checked before anything is allocated) or on a CUDA, cuRAND, cuSOLVER or
// cuBLAS failure, with the reason.
std::vector<double> gpu_matrix_with_eigenvalues(const std::vector<double>& lambda, unsigned seed);
std::vector<std::complex<double>> gpu_hermitian_with_eigenvalues(const std::vector<double>& lambda,
                                                                 unsigned seed);

}  // namespace pipevd::bench
