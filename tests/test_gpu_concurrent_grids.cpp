// Two grids on one node that call pdsyevd_ at the same time, each on its own BLACS context (VASP's
// k-point groups): each grid gets ScaLAPACK's eigenvalues and an accurate Z, with its engine ranks
// on GPUs of its own (redistribute/gpu_assignment; PIPEVD_VERBOSE=1 names them, and ctest fails a
// run where a grid took fewer engine ranks than its share of the GPUs).
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

TEST(ConcurrentGrids, EachGridGetsScalapacksAnswer) {
  const int size = world_size(), half = size / 2;
  if (size < 2 || size % 2) GTEST_SKIP() << "needs an even number of ranks";
  std::vector<int> low(half), high(half);
  for (int r = 0; r < half; ++r) low[r] = r, high[r] = half + r;
  BlacsGrid a(half, 1, low), b(half, 1, high);
  const bool first = a.in_grid();
  const BlacsGrid& grid = first ? a : b;
  const int n = first ? 1999 : 2011, nb = first ? 64 : 48;  // different problems, odd n
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, 2};
  DistributedMatrix m(grid, layout), m_ref(grid, layout), z(grid, layout), z_ref(grid, layout);
  auto entry = [&](long i, long j) { return random_symmetric_entry(i, j, first ? 71 : 73); };
  m.fill(entry);
  m_ref.fill(entry);
  std::vector<double> w(n), w_ref(n);
  ASSERT_EQ(call_pdsyevd('V', 'L', n, m.data(), 1, 1, m.desc, w.data(), z.data(), 1, 1, z.desc), 0);
  ASSERT_EQ(call_scalapack_pdsyevd('V', 'L', n, m_ref.data(), 1, 1, m_ref.desc, w_ref.data(),
                                   z_ref.data(), 1, 1, z_ref.desc),
            0);
  EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
  m.fill(entry);
  EXPECT_LT(distributed_residual(n, m.data(), z.data(), z.desc, w), kScalapackThreshold);
  EXPECT_LT(distributed_orthogonality(n, z.data(), z.desc), kScalapackThreshold);
}

}  // namespace
}  // namespace pipevd::test
