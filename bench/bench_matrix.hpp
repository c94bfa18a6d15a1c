// The block-cyclic matrix of a pipevd-bench run by element type: tests/support's DistributedMatrix
// for real symmetric problems (double), its ComplexDistributedMatrix for complex Hermitian ones
// (Complex), behind one interface so the driver's loop is written once for both.
#pragma once
#include <vector>

#include "bench/peers/solver.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/hermitian.hpp"

namespace pipevd::bench {

template <class T>
struct BenchMatrix;

template <>
struct BenchMatrix<double> {
  BenchMatrix(const test::BlacsGrid& grid, int n, int nb) : m(grid, {n, n, nb, nb}) {}
  double* data() { return m.data(); }
  const double* data() const { return m.local.data(); }
  const int* desc() const { return m.desc; }
  long local_rows() const { return m.local_rows; }
  long local_cols() const { return m.local_cols; }
  // The local elements as doubles (a complex element is two): zeroing and perturbing them.
  std::vector<double>& doubles() { return m.local; }

  test::DistributedMatrix m;
};

template <>
struct BenchMatrix<solvers::Complex> {
  BenchMatrix(const test::BlacsGrid& grid, int n, int nb) : m(grid, n, nb) {}
  solvers::Complex* data() { return m.data(); }
  const solvers::Complex* data() const { return m.data(); }
  const int* desc() const { return m.desc; }
  long local_rows() const { return m.real.local_rows / 2; }
  long local_cols() const { return m.real.local_cols; }
  std::vector<double>& doubles() { return m.real.local; }

  test::ComplexDistributedMatrix m;
};

}  // namespace pipevd::bench
