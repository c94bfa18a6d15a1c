// The harness's fills on several threads (tests/support's DistributedMatrix::fill and
// ComplexDistributedMatrix::fill, bench/test_matrix's generate_test_matrix): for every thread
// count, the same bits as one thread's, and as the entry function written element by element
// through global_index (what a fill means), on the squarest grid of the world's ranks, with block
// sizes, source processes and leading dimensions that leave partial blocks and padding.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "bench/test_matrix.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd::test {
namespace {

const int kThreadCounts[] = {1, 2, 3, 8, 1000};

// m's local array as f defines it, element by element (padding left zero).
std::vector<double> by_element(const DistributedMatrix& m,
                               const std::function<double(long, long)>& f) {
  std::vector<double> x(m.local.size(), 0.0);
  const int lld = m.desc[8];
  for (int jl = 0; jl < m.local_cols; ++jl)
    for (int il = 0; il < m.local_rows; ++il)
      x[il + static_cast<size_t>(jl) * lld] =
          f(global_index(il, m.layout.mb, m.myrow, m.layout.rsrc, m.nprow),
            global_index(jl, m.layout.nb, m.mycol, m.layout.csrc, m.npcol));
  return x;
}

struct Shape {
  int m, n, nb, rsrc, csrc, lld_extra;
};
const Shape kShapes[] = {
    {1, 1, 8, 0, 0, 0}, {37, 37, 5, 1, 0, 3}, {64, 41, 8, 0, 1, 0}, {200, 200, 16, 1, 1, 1}};

TEST(ThreadedFill, RealSameBitsForEveryThreadCount) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  const auto f = [](long i, long j) { return random_symmetric_entry(i, j, 11) + 1e-3 * i; };
  for (const Shape& s : kShapes) {
    const BlockCyclicLayout layout{s.m,        s.n, s.nb, s.nb, s.rsrc % g.nprow, s.csrc % g.npcol,
                                   s.lld_extra};
    for (int threads : kThreadCounts) {
      SCOPED_TRACE("m = " + std::to_string(s.m) + ", threads = " + std::to_string(threads));
      DistributedMatrix a(g, layout);
      a.fill(f, threads);
      EXPECT_TRUE(bitwise_equal(a.local, by_element(a, f)));
    }
  }
}

TEST(ThreadedFill, ComplexSameBitsForEveryThreadCount) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  const auto f = [](long i, long j) { return bench::random_hermitian_entry(i, j, 5); };
  // The real view's element (i, j) is the real part of complex element (i / 2, j) for even i, its
  // imaginary part for odd i.
  const auto as_doubles = [&](long i, long j) {
    const Complex v = f(i / 2, j);
    return i % 2 == 0 ? v.real() : v.imag();
  };
  for (const Shape& s : kShapes) {
    for (int threads : kThreadCounts) {
      SCOPED_TRACE("m = " + std::to_string(s.m) + ", threads = " + std::to_string(threads));
      ComplexDistributedMatrix a(g, s.m, s.nb, s.rsrc % g.nprow, s.csrc % g.npcol, s.lld_extra);
      a.fill(f, threads);
      EXPECT_TRUE(bitwise_equal(a.real.local, by_element(a.real, as_doubles)));
    }
  }
}

TEST(ThreadedFill, GeneratedMatricesSameForEveryThreadCount) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  for (const std::string spectrum : {"random", "geometric"}) {
    const int n = 45, nb = 8;
    DistributedMatrix real_one(g, {n, n, nb, nb});
    ComplexDistributedMatrix complex_one(g, n, nb);
    std::vector<double> w_one, w;
    std::string why;
    ASSERT_TRUE(bench::generate_test_matrix(spectrum, 3, g, real_one, w_one, &why)) << why;
    ASSERT_TRUE(bench::generate_test_matrix(spectrum, 3, g, complex_one, w_one, &why)) << why;
    for (int threads : kThreadCounts) {
      SCOPED_TRACE(spectrum + ", threads = " + std::to_string(threads));
      DistributedMatrix real(g, {n, n, nb, nb});
      ComplexDistributedMatrix cplx(g, n, nb);
      ASSERT_TRUE(bench::generate_test_matrix(spectrum, 3, g, real, w, &why, nullptr, threads))
          << why;
      EXPECT_TRUE(bitwise_equal(real.local, real_one.local));
      ASSERT_TRUE(bench::generate_test_matrix(spectrum, 3, g, cplx, w, &why, nullptr, threads))
          << why;
      EXPECT_TRUE(bitwise_equal(cplx.real.local, complex_one.real.local));
    }
  }
}

}  // namespace
}  // namespace pipevd::test
