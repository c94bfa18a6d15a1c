// The harness's accuracy measures on one GPU, for sizes where the CPU's PDGEMMs would take longer
// than the solvers they check: the same quantities as tests/support/distributed_accuracy
// (residual ||A Z - Z diag(w)||_F / (||A||_F n eps), orthogonality ||Z^T Z - I||_F / (n eps)) from
// the full matrices on the calling process, by cuBLAS on its current device.
// The complex overload measures a Hermitian decomposition (Z^H Z - I), one panel of columns of the
// product at a time (panel_columns, 0: about 2^27 elements a panel; a test sets it small).
#pragma once
#include <complex>
#include <vector>

namespace pipevd::bench {

// a, z: n x n column-major (lda = n). Throws std::runtime_error on a CUDA or cuBLAS failure.
void gpu_residual_orthogonality(int n, const double* a, const double* z,
                                const std::vector<double>& w, double* residual,
                                double* orthogonality);
void gpu_residual_orthogonality(int n, const std::complex<double>* a, const std::complex<double>* z,
                                const std::vector<double>& w, double* residual,
                                double* orthogonality, long panel_columns = 0);

}  // namespace pipevd::bench
