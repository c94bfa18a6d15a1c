// One interposed PDSYEVD call on a random symmetric matrix of order n, distributed over the
// squarest grid of the world's ranks (nb = 32, LLD above n: the engine copies A rather than use
// the caller's array), for tests about what a call leaves behind rather than what it computes.
#pragma once
#include <vector>

#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {

// INFO of the call.
inline int call_pdsyevd_on_random(char jobz, int n, unsigned seed) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const BlockCyclicLayout layout{n, n, 32, 32, 0, 0, 1};
  DistributedMatrix a(grid, layout), z(grid, layout);
  a.fill([seed](long i, long j) { return random_symmetric_entry(i, j, seed); });
  std::vector<double> w(n);
  return call_pdsyevd(jobz, 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
}

}  // namespace pipevd::test
