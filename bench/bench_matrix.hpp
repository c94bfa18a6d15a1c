// The block-cyclic matrix of a pipevd-bench run by element type: tests/support's DistributedMatrix
// for real symmetric problems (double), its ComplexDistributedMatrix for complex Hermitian ones
// (Complex), behind one interface so the driver's loop is written once for both.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "base/parallel_for.hpp"
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

// Threads for the harness's own passes over its host arrays (filling, copying, zeroing):
// OMP_NUM_THREADS where set (the device scripts give each rank its share of the cores), else the
// machine's cores.
inline int host_threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int asked = env ? std::atoi(env) : 0;
  return asked > 0 ? asked : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// A solver's local array beside a BenchMatrix (its A to overwrite, its Z), in the same layout: left
// uninitialized by its allocation, so that its first pages are touched by the threads of the first
// copy or zeroing, not by one thread beforehand (a single thread's passes over fresh memory run
// well below the memory's bandwidth).
template <class T>
class LocalArray {
 public:
  explicit LocalArray(std::size_t doubles) : size_(doubles), p_(new double[doubles]) {}
  T* data() { return reinterpret_cast<T*>(p_.get()); }
  double* begin() { return p_.get(); }
  double* end() { return p_.get() + size_; }
  // The elements of `from` (as many doubles), on `threads` threads.
  void copy(const std::vector<double>& from, int threads) {
    parallel_memcpy(p_.get(), from.data(), static_cast<long>(size_), threads);
  }
  void zero(int threads) {
    for_each_copy_piece(static_cast<long>(size_), threads, [&](long begin, long count) {
      std::fill(p_.get() + begin, p_.get() + begin + count, 0.0);
    });
  }

 private:
  std::size_t size_;
  std::unique_ptr<double[]> p_;
};

}  // namespace pipevd::bench
