// The matrices of a comparison run, by spectrum name. Every solver of a run gets the same matrix
// (same generator, same seed), whatever grid or blocking it runs on.
// 'random' (tests/support's random symmetric matrix), and, where tests/support/spectra is in the
// tree, the six spectra of the pipelined paper's Table 2 (A = Q diag(lambda) Q^T: cluster0,
// cluster1, geometric, arithmetic, normal, uniform), whose exact eigenvalues are then the
// reference.
// Complex Hermitian runs (pipevd-bench --scalar complex) get the twins: a random Hermitian matrix
// (real part as 'random', an antisymmetric imaginary part, a real diagonal), and the same spectra
// as A = Q diag(lambda) Q^H with a random unitary Q (tests/support/hermitian).
#pragma once
#include <string>
#include <vector>

#include "tests/support/distributed_matrix.hpp"
#include "tests/support/hermitian.hpp"

namespace pipevd::bench {

std::vector<std::string> available_spectra();

// Fills `a` (n x n) with the named test matrix. exact_eigenvalues is left empty where the
// spectrum is not known in advance. False, with `why`, for an unknown spectrum.
bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::DistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why);
bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::ComplexDistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why);

// Entry (i, j) of the random Hermitian matrix: conj of entry (j, i), real on the diagonal.
test::Complex random_hermitian_entry(long i, long j, unsigned seed);

}  // namespace pipevd::bench
