// The accuracy measures of tests/support/accuracy.hpp computed on block-cyclic matrices where they
// live (PDGEMM, PDLANGE), so they scale to sizes no rank can hold whole: the same definitions,
// residual ||A Z - Z diag(w)||_F / (||A||_F n eps) and orthogonality ||Z^T Z - I||_F / (n eps).
// Collective over the grid of `desc`; A and Z share one descriptor (IA = JA = 1). The complex
// overloads (PZGEMM, PZLANGE; `desc` counts COMPLEX*16 elements) measure a Hermitian
// decomposition, with Z^H in place of Z^T.
#pragma once
#include <complex>
#include <vector>

namespace pipevd::test {

double distributed_residual(int n, const double* a, const double* z, const int* desc,
                            const std::vector<double>& w);
double distributed_orthogonality(int n, const double* z, const int* desc);
double distributed_residual(int n, const std::complex<double>* a, const std::complex<double>* z,
                            const int* desc, const std::vector<double>& w);
double distributed_orthogonality(int n, const std::complex<double>* z, const int* desc);

}  // namespace pipevd::test
