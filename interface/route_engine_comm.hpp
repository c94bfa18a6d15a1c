// The communicators a call on a grid takes on the two-stage route, and whether its engine talks
// through NCCL: one place for the route and for the preparation at grid creation, so that the
// preparation begins exactly the communicator the route's first call looks up.
#pragma once
#include "base/engine_layout.hpp"
#include "interface/policy.hpp"

namespace pipevd {

// The caller and engine communicators of grid `ictxt`: on the host, PIPEVD_ENGINE_RANKS or every
// node-local rank as engine ranks; on GPUs, one engine rank per GPU the node's ranks see
// (redistribute/gpu_assignment.hpp, at most PIPEVD_ENGINE_RANKS per node), EngineComm::device the
// GPU it drives (`devices`: the fewest any caller rank sees, agreed over the grid). Collective over
// the grid's processes, cached (redistribute/engine_comm.hpp).
const EngineComm& route_engine_comm(int ictxt, const Policy& policy, bool on_gpu, int devices);

// Whether the GPU engine on `ec` talks through NCCL: several engine ranks, each on a GPU of its own
// (PIPEVD_GPU_SHARING sends through MPI). The same on every caller rank.
bool engine_uses_nccl(const EngineComm& ec, const Policy& policy);

}  // namespace pipevd
