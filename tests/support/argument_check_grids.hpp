// What the argument-check tests (PDSYEVD's and PZHEEVD's) share: the grids every case runs on and
// their names, descriptors that can also describe a process outside the grid, and the stack
// painting that makes ScaLAPACK's read of an unset UPLO flag defined.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd::test {

// ScaLAPACK 2.2's PDSYEVD and PZHEEVD set their UPLO flag only once CHK1MAT has passed on this
// process, yet always send it to PCHK1MAT / PCHK2MAT: where CHK1MAT failed, the UPLO compared over
// the grid is whatever lies in the flag's stack slot, and a stale value on one process changes
// INFO everywhere. Painting the stack below the call with UPLO's truth value makes that garbage
// read as the UPLO the caller passed: the one defined answer, and the one pipevd gives. Not
// instrumented by AddressSanitizer: it would put redzones, which the function may not write,
// between the array and the top of the frame (or the array on its fake stack), leaving the stack
// just below the call unpainted.
__attribute__((noinline, no_sanitize_address)) inline void paint_stack(unsigned char byte) {
  volatile unsigned char below[16 * 1024];
  for (std::size_t i = 0; i < sizeof(below); ++i) below[i] = byte;
}

// A descriptor for an m x m matrix on grid (BLACS's DESCINIT without its checks, so that it can
// also describe a process outside the grid).
inline void describe(const BlacsGrid& grid, int m, int nb, int rsrc, int csrc, int* d) {
  const int lld =
      grid.in_grid() ? std::max(1, numroc_(&m, &nb, &grid.myrow, &rsrc, &grid.nprow)) : 1;
  const int v[9] = {1, grid.ictxt, m, m, nb, nb, rsrc, csrc, lld};
  std::copy(v, v + 9, d);
}

// DESCA and DESCZ of a call's arguments `g` (its desca and descz) alike, as describe() makes one.
template <class Args>
void describe_a_and_z(const BlacsGrid& grid, int m, int nb, int rsrc, int csrc, Args& g) {
  describe(grid, m, nb, rsrc, csrc, g.desca);
  describe(grid, m, nb, rsrc, csrc, g.descz);
}

struct GridCase {
  int nprow, npcol;
  char order;
};

// The grids every case runs on: squarest, 1 x P, P x 1, and column-major ones.
inline std::vector<GridCase> grids() {
  const int p = world_size();
  const GridShape sq = squarest_grid(p);
  std::vector<GridCase> g = {{sq.nprow, sq.npcol, 'R'}, {1, p, 'R'}, {p, 1, 'R'}};
  if (sq.nprow > 1 && sq.npcol > 1) g.push_back({sq.nprow, sq.npcol, 'C'});
  if (p > 1) g.push_back({sq.npcol, sq.nprow, 'C'});
  return g;
}

// A grid's name in a case's message: its shape and order, "2x3R".
inline std::string grid_name(const BlacsGrid& grid, char order) {
  return std::to_string(grid.nprow) + "x" + std::to_string(grid.npcol) + order;
}

}  // namespace pipevd::test
