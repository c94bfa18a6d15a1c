// Shared pieces of the redistribution tests: grid shapes, a BLACS grid over any list of world
// ranks, engine layouts, entries of the test matrices.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/engine_layout.hpp"
#include "base/scalapack_api.hpp"
#include "tests/support/distributed_matrix.hpp"

extern "C" {
void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridexit(int ictxt);
}

namespace pipevd::test {

// Every (nprow, npcol) with nprow * npcol == size.
inline std::vector<std::pair<int, int>> all_grid_shapes(int size) {
  std::vector<std::pair<int, int>> shapes;
  for (int r = 1; r <= size; ++r)
    if (size % r == 0) shapes.push_back({r, size / r});
  return shapes;
}

// A BLACS grid whose process (pr, pc) is world rank usermap[pr + pc * nprow]; processes not in
// the map do not take part and get ictxt -1.
struct MappedGrid {
  MappedGrid(int nprow_, int npcol_, std::vector<int> usermap) : nprow(nprow_), npcol(npcol_) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int sys = 0;
    Cblacs_get(0, 0, &sys);
    int ctxt = sys;
    // Every world rank calls gridmap; those outside the map get a negative context.
    Cblacs_gridmap(&ctxt, usermap.data(), nprow, nprow, npcol);
    for (int k = 0; k < nprow * npcol; ++k)
      if (usermap[k] == me) {
        ictxt = ctxt;
        myrow = k % nprow;
        mycol = k / nprow;
      }
  }
  ~MappedGrid() {
    if (in_grid()) Cblacs_gridexit(ictxt);
  }
  MappedGrid(const MappedGrid&) = delete;
  MappedGrid& operator=(const MappedGrid&) = delete;
  bool in_grid() const { return myrow >= 0; }

  int ictxt = -1, nprow = 0, npcol = 0, myrow = -1, mycol = -1;
};

// An entry of a general (non-symmetric) test matrix, distinct for every (i, j).
inline double general_entry(long i, long j) {
  uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(j) * 31 + 7;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 32;
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0) + static_cast<double>(i);
}

inline double nan_value() { return std::numeric_limits<double>::quiet_NaN(); }

// Uneven column boundaries (growing widths, zero widths for small n).
inline std::vector<long> uneven_partition(long n, int parts) {
  std::vector<long> b(parts + 1);
  const long denom = static_cast<long>(parts) * (parts + 1);
  for (int e = 0; e <= parts; ++e) b[e] = n * e * (e + 1) / denom;
  return b;
}

// Boundaries of the blockwise layout that a 1 x parts block-cyclic grid with block nb gives.
inline std::vector<long> block_partition(long n, int parts, long nb) {
  std::vector<long> b(parts + 1);
  for (int e = 0; e <= parts; ++e) b[e] = std::min(n, e * nb);
  b[parts] = n;
  return b;
}

// The coordinates of this process in a grid (from BlacsGrid or MappedGrid).
struct GridInfo {
  int ictxt = -1, nprow = 1, npcol = 1, myrow = -1, mycol = -1;
  template <class G>
  static GridInfo of(const G& g) {
    return {g.ictxt, g.nprow, g.npcol, g.myrow, g.mycol};
  }
};

// A block-cyclic matrix on any grid, with its own index arithmetic (independent of pipevd's).
struct TestMatrix {
  TestMatrix(const GridInfo& g, const BlockCyclicLayout& l) : grid(g), layout(l) {
    local_rows = numroc_(&l.m, &l.mb, &g.myrow, &l.rsrc, &g.nprow);
    local_cols = numroc_(&l.n, &l.nb, &g.mycol, &l.csrc, &g.npcol);
    const int lld = std::max(1, local_rows) + l.lld_extra;
    int info = 0;
    descinit_(desc, &l.m, &l.n, &l.mb, &l.nb, &l.rsrc, &l.csrc, &g.ictxt, &lld, &info);
    local.assign(static_cast<size_t>(lld) * std::max(1, local_cols), 0.0);
  }
  int lld() const { return desc[8]; }
  long row_of(int il) const {
    return global_index(il, layout.mb, grid.myrow, layout.rsrc, grid.nprow);
  }
  long col_of(int jl) const {
    return global_index(jl, layout.nb, grid.mycol, layout.csrc, grid.npcol);
  }
  template <class F>
  void fill(F&& f) {
    for (int jl = 0; jl < local_cols; ++jl)
      for (int il = 0; il < local_rows; ++il)
        local[il + static_cast<size_t>(jl) * lld()] = f(row_of(il), col_of(jl));
  }

  GridInfo grid;
  BlockCyclicLayout layout;
  int desc[9] = {};
  int local_rows = 0, local_cols = 0;
  std::vector<double> local;
};

// World ranks of the engine ranks of `comm` (engine rank order).
inline std::vector<int> engine_world_ranks(const EngineComm& comm) {
  MPI_Group caller, world;
  MPI_Comm_group(comm.caller, &caller);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> out(comm.engine_to_caller.size());
  MPI_Group_translate_ranks(caller, static_cast<int>(out.size()), comm.engine_to_caller.data(),
                            world, out.data());
  MPI_Group_free(&caller);
  MPI_Group_free(&world);
  return out;
}

}  // namespace pipevd::test
