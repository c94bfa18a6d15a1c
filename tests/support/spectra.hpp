// Test matrices with a prescribed spectrum: the six distributions of the pipelined paper's Table 2
// (cluster0, cluster1, geometric and arithmetic with condition number 1e8 and largest eigenvalue
// 1e6, as LAPACK's dlatms modes 1-4 define them; normal; uniform), and A = Q diag(lambda) Q^T with
// a random orthogonal Q from the QR factorization of a random matrix.
#pragma once
#include <vector>

namespace pipevd::test {

enum class Spectrum { Cluster0, Cluster1, Geometric, Arithmetic, Normal, Uniform };
inline constexpr Spectrum kAllSpectra[] = {Spectrum::Cluster0,  Spectrum::Cluster1,
                                           Spectrum::Geometric, Spectrum::Arithmetic,
                                           Spectrum::Normal,    Spectrum::Uniform};
const char* to_string(Spectrum s);

// n eigenvalues, ascending. Cluster0: max, then n-1 at max/cond; cluster1: n-1 at max, one at
// max/cond; geometric: max * cond^(-i/(n-1)); arithmetic: max * (1 - i/(n-1) (1 - 1/cond));
// normal: N(0, 1); uniform: U(0, 1) (seeded).
std::vector<double> eigenvalues_of(Spectrum s, long n, unsigned seed, double cond = 1e8,
                                   double max = 1e6);

// The full symmetric n x n matrix Q diag(lambda) Q^T (column-major), Q orthogonal from a seeded
// random matrix; lambda may be in any order.
std::vector<double> matrix_with_eigenvalues(const std::vector<double>& lambda, unsigned seed);

}  // namespace pipevd::test
