#include "tests/support/blacs_grid.hpp"

#include <mpi.h>

#include <cstddef>

extern "C" {
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ictxt);
void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap, int nprow, int npcol);
void blacs_get_(const int* ictxt, const int* what, int* val);
void blacs_gridinit_(int* ictxt, const char* order, const int* nprow, const int* npcol,
                     std::size_t order_len);
void blacs_gridmap_(int* ictxt, int* usermap, const int* ldumap, const int* nprow,
                    const int* npcol);
}

namespace pipevd::test {

namespace {

// The system context both interfaces start from (BLACS_GET's "what" 0 on context 0).
int system_context(BlacsEntry entry) {
  int sys = 0;
  const int zero = 0;
  if (entry == BlacsEntry::C)
    Cblacs_get(0, 0, &sys);
  else
    blacs_get_(&zero, &zero, &sys);
  return sys;
}

}  // namespace

BlacsGrid::BlacsGrid(int nprow_, int npcol_, char order, BlacsEntry entry) {
  ictxt = system_context(entry);
  const char ord[2] = {order, 0};
  if (entry == BlacsEntry::C)
    Cblacs_gridinit(&ictxt, ord, nprow_, npcol_);
  else
    blacs_gridinit_(&ictxt, ord, &nprow_, &npcol_, 1);
  nprow = nprow_;
  npcol = npcol_;
  if (world_rank() < nprow_ * npcol_) Cblacs_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
}

BlacsGrid::BlacsGrid(int nprow_, int npcol_, const std::vector<int>& usermap, BlacsEntry entry)
    : nprow(nprow_), npcol(npcol_) {
  int ctxt = system_context(entry);
  std::vector<int> map = usermap;
  if (entry == BlacsEntry::C)
    Cblacs_gridmap(&ctxt, map.data(), nprow_, nprow_, npcol_);
  else
    blacs_gridmap_(&ctxt, map.data(), &nprow_, &nprow_, &npcol_);
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
