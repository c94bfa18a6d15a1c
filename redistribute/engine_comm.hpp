// The caller's processes as an MPI communicator, recovered from a BLACS context, and the engine
// ranks among them: node-local ranks 0..g-1 of each node (one per GPU). Built once per context
// process set and g, then cached until MPI_Finalize.
#pragma once
#include <vector>

#include "base/engine_layout.hpp"
#include "redistribute/gpu_assignment.hpp"

namespace pipevd {

// Collective over the processes of the grid `ictxt` (only they call it). The caller communicator
// holds exactly the grid's processes, ranked in BLACS pnum order; engine_ranks_per_node >= 0
// (0: no engine ranks, the caller communicator alone). The cache is not thread-safe: call from one
// thread per process (as PDSYEVD is called).
const EngineComm& engine_comm_for(int ictxt, int engine_ranks_per_node);

// The same for the GPU engine: engine ranks chosen by assign_engine_gpus from every node member's
// visible GPUs (`visible`: this rank's, by UUID in device-ordinal order), at most max_engines per
// node (0: no cap); EngineComm::device is the ordinal this engine rank drives. Collective over the
// grid's processes; cached like engine_comm_for.
const EngineComm& engine_comm_for_gpus(int ictxt, const std::vector<GpuUuid>& visible,
                                       int max_engines, bool sharing);

// One engine rank for the whole grid (the one-stage path, core/one_stage.hpp): of the ranks that
// engine_comm_for(ictxt, 1) (visible == nullptr: the host engine) or engine_comm_for_gpus(ictxt,
// *visible, 1, false) makes engine ranks, the lowest caller rank alone, on its device. Collective
// over the grid's processes; cached likewise.
const EngineComm& engine_comm_for_one(int ictxt, const std::vector<GpuUuid>* visible);

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
