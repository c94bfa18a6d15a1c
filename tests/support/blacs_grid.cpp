#include "tests/support/blacs_grid.hpp"

#include <mpi.h>

extern "C" {
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ictxt);
void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap, int nprow, int npcol);
}

namespace pipevd::test {

BlacsGrid::BlacsGrid(int nprow_, int npcol_, char order) {
  int sys = 0;
  Cblacs_get(0, 0, &sys);
  ictxt = sys;
  const char ord[2] = {order, 0};
  Cblacs_gridinit(&ictxt, ord, nprow_, npcol_);
  nprow = nprow_;
  npcol = npcol_;
  if (world_rank() < nprow_ * npcol_) Cblacs_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
}

BlacsGrid::BlacsGrid(int nprow_, int npcol_, const std::vector<int>& usermap)
    : nprow(nprow_), npcol(npcol_) {
  int sys = 0;
  Cblacs_get(0, 0, &sys);
  int ctxt = sys;
  std::vector<int> map = usermap;
  Cblacs_gridmap(&ctxt, map.data(), nprow_, nprow_, npcol_);
  for (int k = 0; k < nprow_ * npcol_; ++k)
    if (map[k] == world_rank()) {
      ictxt = ctxt;
      Cblacs_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
    }
}

BlacsGrid::~BlacsGrid() {
  if (in_grid()) Cblacs_gridexit(ictxt);
}

GridShape squarest_grid(int size) {
  int r = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) r = d;
  return {r, size / r};
}

GridShape grid_shape(char code) {
  const int p = world_size();
  if (code == 'r') return {1, p};
  if (code == 'c') return {p, 1, 'C'};
  return squarest_grid(p);
}

bool same_on_every_rank(int value) {
  int lo = value, hi = value;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

}  // namespace pipevd::test
