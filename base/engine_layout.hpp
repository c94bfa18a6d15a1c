// The engine's blockwise layout (pipelined paper §3.2) and the processes that hold it.
//
// Input side: engine rank e holds columns [col_begin[e], col_begin[e+1]) of the FULL symmetric
// n x n matrix (both triangles), all n rows, column-major with leading dimension n.
// Output side: engine rank e holds rows [row_begin[e], row_begin[e+1]) of Z, all n columns,
// column-major with leading dimension max(1, height(e)).
// Widths and heights may differ per rank (and may be zero).
#pragma once
#include <mpi.h>

#include <vector>

namespace pipevd {

struct EngineLayout {
  long n = 0;
  std::vector<long> col_begin;  // E+1 entries: 0 = col_begin[0] <= ... <= col_begin[E] = n
  std::vector<long> row_begin;  // E+1 entries: 0 = row_begin[0] <= ... <= row_begin[E] = n

  int engine_ranks() const { return static_cast<int>(col_begin.size()) - 1; }
  long width(int e) const { return col_begin[e + 1] - col_begin[e]; }
  long height(int e) const { return row_begin[e + 1] - row_begin[e]; }
};

// The caller's processes (those of the BLACS grid) and, among them, the engine ranks.
struct EngineComm {
  MPI_Comm caller = MPI_COMM_NULL;    // the grid's processes; rank = BLACS pnum order
  MPI_Comm engine = MPI_COMM_NULL;    // engine ranks only; MPI_COMM_NULL elsewhere
  int engine_rank = -1;               // rank in `engine`, -1 on ranks that only send and receive
  std::vector<int> engine_to_caller;  // caller rank of engine rank e
  int device = -1;  // the device ordinal this engine rank drives (engine_comm_for_gpus), else -1
  int device_sharers = 1;  // engine ranks of this node driving that device (PIPEVD_GPU_SHARING)

  int engine_ranks() const { return static_cast<int>(engine_to_caller.size()); }
};

}  // namespace pipevd
