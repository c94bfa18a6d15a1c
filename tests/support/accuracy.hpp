// Accuracy measures of an eigendecomposition, on full (gathered) column-major matrices:
// residual ||A Z - Z diag(w)||_F / (||A||_F n eps), orthogonality ||Z^T Z - I||_F / (n eps).
#pragma once
#include <vector>

namespace pipevd::test {

double residual(int n, const std::vector<double>& a, const std::vector<double>& z,
                const std::vector<double>& w);
double orthogonality(int n, const std::vector<double>& z);
// max_i |w_i - v_i| / max(max_i |v_i|, tiny): eigenvalue difference scaled by the spectrum's norm.
double eigenvalue_difference(const std::vector<double>& w, const std::vector<double>& v);

// The threshold ScaLAPACK's own tester (pdseptst, THRESH in SEP.dat) applies to both measures.
constexpr double kScalapackThreshold = 100.0;

// Full symmetric matrix from the triangle 'L' or 'U' of a (the other triangle ignored).
std::vector<double> symmetrize(int n, const std::vector<double>& a, char uplo);

// Eigenvalues by LAPACK dsyevd (ascending).
std::vector<double> lapack_eigenvalues(int n, std::vector<double> a);

}  // namespace pipevd::test
