// Stage 3, the eigenpairs of the tridiagonal T on the CPU (LAPACK), for every backend: D&C by
// dstedc (pipelined paper §3.3, run by engine rank 0 in a thread while the back transformation
// runs), eigenvalues only by dsterf.
#pragma once

namespace pipevd {

// T = Q_d diag(d) Q_d^T: on return d holds the eigenvalues (ascending) and qd (n x n, leading
// dimension n) the eigenvectors; e (n - 1 entries) is destroyed. Returns dstedc's INFO.
int tridiagonal_eigenpairs(long n, double* d, double* e, double* qd);

// Eigenvalues of T only (ascending, in d); returns dsterf's INFO.
int tridiagonal_eigenvalues(long n, double* d, double* e);
// The same by dsterf on copies: d and e kept, the eigenvalues in w.
int tridiagonal_eigenvalues_copy(long n, const double* d, const double* e, double* w);

}  // namespace pipevd
