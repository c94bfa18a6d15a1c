// A BLACS process grid over MPI_COMM_WORLD for tests: created and released with the object.
#pragma once
#include <vector>

namespace pipevd::test {

// Which of BLACS' interfaces makes a grid: the C one (Cblacs_gridinit, Cblacs_gridmap) or the
// Fortran one (blacs_gridinit_, blacs_gridmap_), as a Fortran code reaches it.
enum class BlacsEntry { C, Fortran };

struct BlacsGrid {
  // order 'R' (row-major) or 'C' (column-major), as Cblacs_gridinit takes it. Ranks beyond
  // nprow*npcol are not in the grid (in_grid() false).
  BlacsGrid(int nprow, int npcol, char order = 'R', BlacsEntry entry = BlacsEntry::C);
  // A grid of the world ranks usermap[pr + pc * nprow] (Cblacs_gridmap; every world rank calls it,
  // those not in the map are outside the grid).
  BlacsGrid(int nprow, int npcol, const std::vector<int>& usermap,
            BlacsEntry entry = BlacsEntry::C);
  ~BlacsGrid();
  BlacsGrid(const BlacsGrid&) = delete;
  BlacsGrid& operator=(const BlacsGrid&) = delete;
  bool in_grid() const { return myrow >= 0 && myrow < nprow && mycol >= 0 && mycol < npcol; }

  int ictxt = -1, nprow = 0, npcol = 0, myrow = -1, mycol = -1;
};

// Grid shapes (nprow, npcol) that use all of `size` ranks: 1 x size, size x 1 and the squarest.
struct GridShape {
  int nprow, npcol;
  char order = 'R';  // BLACS process order for Cblacs_gridinit
};
GridShape squarest_grid(int size);
// A test case's shape code over P = world_size() ranks: 'r' 1 x P, 'c' P x 1 in column-major
// order, else the squarest.
GridShape grid_shape(char code);

int world_size();

// Whether every rank of MPI_COMM_WORLD holds the same `value` (collective), e.g. the INFO a call
// returned.
bool same_on_every_rank(int value);
int world_rank();

}  // namespace pipevd::test
