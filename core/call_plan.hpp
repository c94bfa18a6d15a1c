// The route's "plan" step: what one call runs, fixed before anything moves. The engine layout over
// the engine ranks (on several GPUs with eigenvectors the heights follow BC-back's waves, with the
// pipelined paper's load-balance slack, §3.4), the memory fit on every engine rank (agreed over the
// caller ranks, core/memory_check.hpp), and the overlaps this rank's memory plan allows.
#pragma once
#include <mpi.h>

#include "base/engine_layout.hpp"

namespace pipevd {

struct CallPlanInput {
  long n = 0;
  int engine_ranks = 1;
  int engine_rank = -1;   // this rank's place among the engine ranks; -1: not an engine rank
  long b = 32, k = 1024;  // DBBR's bandwidth and outer block (EngineOptions)
  bool want_vectors = true;
  bool on_gpu = false;
  long wave_rows = 0;              // BC-back's rows at once on engine rank 0's device (0: unknown)
  long free_bytes = -1;            // this engine rank's free device memory (< 0: unlimited)
  long memory_limit = 0;           // PIPEVD_GPU_MEMORY_LIMIT (0: none)
  bool symmetric_product = false;  // DBBR's A W by the one-triangle kernel (its workspace counts)
};

struct CallPlan {
  EngineLayout layout;
  // EngineOptions' overlaps, chosen where this rank's memory plan with them fits: SBR-back next
  // to bulge chasing (a GPU with eigenvectors), and engine rank 0's D&C started at SBR-back
  // (several GPUs; one GPU keeps it after, where BC-back outlasts it).
  bool overlap_sbr_back = false;
  bool dc_at_sbr_back = false;
  // This engine rank's planned peak of device memory with those overlaps (0: not on a GPU).
  long device_bytes = 0;
};

// Collective over `caller` (every caller rank, engine or not). Throws EngineMemoryShortage on every
// caller rank alike where some engine rank cannot fit the plan without overlaps.
CallPlan plan_call(MPI_Comm caller, const CallPlanInput& in);

}  // namespace pipevd
