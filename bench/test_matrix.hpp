// The matrices of a comparison run, by spectrum name. Every solver of a run gets the same matrix
// (same generator, same seed), whatever grid or blocking it runs on.
// 'random' (tests/support's random symmetric matrix), and, where tests/support/spectra is in the
// tree, the six spectra of the pipelined paper's Table 2 (A = Q diag(lambda) Q^T: cluster0,
// cluster1, geometric, arithmetic, normal, uniform), whose exact eigenvalues are then the
// reference.
// Complex Hermitian runs (pipevd-bench --scalar complex) get the twins: a random Hermitian matrix
// (real part as 'random', an antisymmetric imaginary part, a real diagonal), and the same spectra
// as A = Q diag(lambda) Q^H with a random unitary Q (tests/support/hermitian).
// A prescribed spectrum's matrix is formed whole: by LAPACK on every rank (the oracle), or, given a
// former (bench/gpu_spectrum_matrix), once on world rank 0 and broadcast, so that every rank holds
// the same bits and the O(n^3) work is not repeated per rank.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tests/support/distributed_matrix.hpp"
#include "tests/support/hermitian.hpp"

namespace pipevd::bench {

std::vector<std::string> available_spectra();

// Why `spectrum` names no test matrix, with the names that do.
std::string unknown_spectrum(const std::string& spectrum);

// Whether `spectrum` is one whose eigenvalues are prescribed (A = Q diag(lambda) Q^T, O(n^3) to
// form), not 'random' (filled entry by entry) or an unknown name.
bool is_prescribed_spectrum(const std::string& spectrum);

// A prescribed spectrum's full n x n matrix (column-major) from its eigenvalues (lambda, n of
// them, ascending) and the run's seed. May throw; the message says why.
template <class T>
using SpectrumFormer =
    std::function<std::vector<T>(const std::vector<double>& lambda, unsigned seed)>;

// Fills `a` (n x n) with the named test matrix. exact_eigenvalues is left empty where the
// spectrum is not known in advance. False, with `why`, for an unknown spectrum.
// With on_root, a prescribed spectrum's matrix is formed by on_root on world rank 0 alone and
// broadcast whole (collective over MPI_COMM_WORLD: every rank passes one or every rank none);
// where it throws there, false on every rank, `why` its message and `a` untouched.
// `threads` fill the local array at once (the same bits for any count).
bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::DistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why, const SpectrumFormer<double>& on_root = nullptr,
                          int threads = 1);
bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::ComplexDistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why, const SpectrumFormer<test::Complex>& on_root = nullptr,
                          int threads = 1);

// Entry (i, j) of the random Hermitian matrix: conj of entry (j, i), real on the diagonal.
test::Complex random_hermitian_entry(long i, long j, unsigned seed);

}  // namespace pipevd::bench
