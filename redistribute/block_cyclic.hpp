// Block-cyclic index arithmetic in one dimension: which global indices of a submatrix a process
// coordinate owns, as runs that are contiguous both globally and in the process's local array.
#pragma once
#include <vector>

namespace pipevd {

// A submatrix of a block-cyclic distributed matrix: rows [ia, ia+m) and columns [ja, ja+n) of the
// global matrix (0-based offsets), described as ScaLAPACK's descriptor describes it.
struct BlockCyclicView {
  long m = 0, n = 0;    // submatrix size
  long ia = 0, ja = 0;  // 0-based offsets of the submatrix in the global matrix
  int mb = 1, nb = 1;   // row and column block sizes
  int rsrc = 0, csrc = 0;
  int nprow = 1, npcol = 1;
  long lld = 1;  // leading dimension of the local arrays
};

// Builds the view of A(IA:IA+M-1, JA:JA+N-1) from a ScaLAPACK descriptor (IA, JA 1-based as in
// ScaLAPACK) and the grid shape.
BlockCyclicView view_of(const int* desc, long ia, long ja, long m, long n, int nprow, int npcol);

// A run of indices owned by one process coordinate: global indices [global, global+len) of the
// submatrix (0-based, relative to its offset) are local indices [local, local+len).
struct Run {
  long global = 0;
  long local = 0;
  long len = 0;
};

// The runs that process coordinate p owns of global indices [offset, offset+count) of a dimension
// distributed with block size nb from source src over nprocs processes; ascending order. Global
// indices in the runs are relative to offset.
std::vector<Run> owned_runs(long offset, long count, int nb, int src, int nprocs, int p);

// The part of run r inside the (submatrix-relative) range [lo, hi); len 0 when they do not meet.
Run clip(const Run& r, long lo, long hi);

}  // namespace pipevd
