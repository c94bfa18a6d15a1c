// The caller's processes as an MPI communicator, recovered from a BLACS context, and the engine
// ranks among them: node-local ranks 0..g-1 of each node (one per GPU). Built once per context
// process set and g, then cached until MPI_Finalize.
#pragma once
#include <vector>

#include "redistribute/engine_layout.hpp"

namespace pipevd {

// Collective over the processes of the grid `ictxt` (only they call it). The caller communicator
// holds exactly the grid's processes, ranked in BLACS pnum order; engine_ranks_per_node >= 0
// (0: no engine ranks, the caller communicator alone). The cache is not thread-safe: call from one
// thread per process (as PDSYEVD is called).
const EngineComm& engine_comm_for(int ictxt, int engine_ranks_per_node);

// The grid's processes as a communicator (engine_comm_for's caller), cached likewise. Collective
// over the grid's processes the first time.
MPI_Comm grid_comm(int ictxt);

// Where each grid coordinate lives in the caller communicator of engine_comm_for(ictxt, ...).
struct GridMap {
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  std::vector<int> caller_rank;  // caller rank of (pr, pc) at pr * npcol + pc
  std::vector<int> prow, pcol;   // grid coordinate of each caller rank
};

// Local: BLACS calls only.
GridMap grid_map(int ictxt);

}  // namespace pipevd
