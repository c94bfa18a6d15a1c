// Complex Hermitian test matrices and their checks (PZHEEVD's tests): A = Q diag(lambda) Q^H with a
// random unitary Q, a block-cyclic complex matrix (a real DistributedMatrix of twice the rows: the
// same bytes, real and imaginary parts interleaved), and the accuracy measures on full copies.
#pragma once
#include <complex>
#include <functional>
#include <vector>

#include "tests/support/distributed_matrix.hpp"

namespace pipevd::test {

using Complex = std::complex<double>;

// The full n x n Hermitian Q diag(lambda) Q^H (column-major), Q unitary from the QR factorization
// of a seeded random complex matrix; exactly Hermitian (real diagonal).
std::vector<Complex> hermitian_with_eigenvalues(const std::vector<double>& lambda, unsigned seed);

// An m x m complex block-cyclic matrix (square nb blocks, RSRC/CSRC, LLD lld_extra beyond need).
struct ComplexDistributedMatrix {
  ComplexDistributedMatrix(const BlacsGrid& grid, int m, int nb, int rsrc = 0, int csrc = 0,
                           int lld_extra = 0);
  // f(i, j) for every local element (global 0-based indices), once each; with threads > 1 from
  // that many threads at once, as DistributedMatrix::fill.
  void fill(const std::function<Complex(long, long)>& f, int threads = 1);
  // The whole matrix, column-major, on every rank (collective over MPI_COMM_WORLD).
  std::vector<Complex> gather(const BlacsGrid& grid) const;
  Complex* data() { return reinterpret_cast<Complex*>(real.data()); }
  const Complex* data() const { return reinterpret_cast<const Complex*>(real.local.data()); }
  std::size_t local_size() const { return real.local.size() / 2; }

  DistributedMatrix real;  // the same storage, described as doubles
  int desc[9] = {};        // the complex descriptor
};

// ||A Z - Z diag(w)||_F / (||A||_F n eps) and ||Z^H Z - I||_F / (n eps) on full n x n matrices.
double hermitian_residual(int n, const std::vector<Complex>& a, const std::vector<Complex>& z,
                          const std::vector<double>& w);
double unitary_orthogonality(int n, const std::vector<Complex>& z);

// Eigenvalues of the full Hermitian n x n matrix (its lower triangle) by LAPACK zheevd, ascending.
std::vector<double> lapack_hermitian_eigenvalues(int n, std::vector<Complex> a);

}  // namespace pipevd::test
