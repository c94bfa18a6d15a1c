// A block-cyclic matrix for tests: its descriptor and local storage, filled from a function of the
// global (0-based) indices, and gathered back to a full column-major copy on every rank.
#pragma once
#include <functional>
#include <vector>

#include "tests/support/blacs_grid.hpp"

namespace pipevd::test {

struct BlockCyclicLayout {
  int m = 0, n = 0, mb = 1, nb = 1, rsrc = 0, csrc = 0;
  int lld_extra = 0;  // LLD larger than needed by this much
};

struct DistributedMatrix {
  DistributedMatrix(const BlacsGrid& grid, const BlockCyclicLayout& layout);
  // f(i, j) for every local element (global 0-based indices). With threads > 1, f runs on that
  // many threads at once (each on its own local columns): it must be safe to call concurrently.
  // Every element gets f's value, whatever the thread count.
  void fill(const std::function<double(long, long)>& f, int threads = 1);
  // The whole m x n matrix, column-major, on every rank (collective over MPI_COMM_WORLD).
  std::vector<double> gather(const BlacsGrid& grid) const;
  double* data() { return local.data(); }

  int desc[9] = {};
  int local_rows = 0, local_cols = 0;
  std::vector<double> local;
  BlockCyclicLayout layout;
  int myrow = -1, mycol = -1, nprow = 1, npcol = 1;
};

// Global index of local index l (0-based) on process coordinate p (block size nb, source src).
long global_index(int l, int nb, int p, int src, int nprocs);

// body(first, last) over [0, count) in at most `threads` contiguous parts at once
// (base/parallel_for.hpp's parallel_for_ranges, one part a thread), one of them on the calling
// thread; returns when every part has.
void for_column_parts(long count, int threads, const std::function<void(long, long)>& body);

// A deterministic random symmetric matrix: entry (i, j) from a hash of (min, max, seed) in [-1, 1).
double random_symmetric_entry(long i, long j, unsigned seed);

}  // namespace pipevd::test
