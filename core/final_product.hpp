// Stage 5 of the engine (core/engine.cpp): each engine rank's rows of the eigenvectors,
// Z(rows, :) = X Q_d with X = Q_sb(rows, :), from engine rank 0's stage-3 result. Q_d whole: its
// n x n broadcast and one GEMM. Folded (core/tridiagonal_dc.hpp's DcFold): Q_pre's diagonal blocks
// broadcast and Y = X Q_pre (one GEMM per block), X and Q_pre released, then M broadcast and
// Z = Y M, so that a rank holds no more than with Q_d whole; engine rank 0 keeps its D&C's buffers
// (core/memory_plan.hpp counts them).
#pragma once
#include <mpi.h>

#include <vector>

#include "base/page_array.hpp"
#include "core/backend.hpp"
#include "core/timeline.hpp"
#include "core/tridiagonal_dc.hpp"

namespace pipevd {

// Engine rank 0's stage-3 result (nothing on the other ranks): dstedc's Q_d in host memory, or
// tridiagonal_dc's in the memory of the D&C's companion backend, whole (dc.m) or folded.
struct TridiagonalResult {
  PageArray<double> q_host;  // freed into the kernel, not the D&C thread's malloc arena
  DcFold dc;
};

// This engine rank's side of stage 5.
struct FinalProductRank {
  long n = 0, h = 0, ldx = 1;  // X and Z: h x n, leading dimension ldx
  DeviceBuffer* x = nullptr;   // X, in `be`'s memory; released once folded Y is formed
  double* z_rows = nullptr;    // Z, host
};

// Stage 5's parts on the timeline, each ended by a synchronisation (only with a timeline).
class StageParts {
 public:
  StageParts(EngineBackend& be, Timeline* timeline, double start)
      : be_(be), timeline_(timeline), start_(start) {}
  void done(const char* name);

 private:
  EngineBackend& be_;
  Timeline* timeline_;
  double start_;
};

// Collective over `engine`, with the D&C's INFO (0: multiply) and whether rank 0 folded agreed on
// every rank: Z's rows as above, each local part's failure agreed as the stages' are
// (core/failure_agreement). Rank 0's result is released on return, `be` done with it.
void final_product(EngineBackend& be, MPI_Comm engine, bool multiply, bool folded,
                   const FinalProductRank& me, TridiagonalResult& from_rank0, StageParts& parts);

}  // namespace pipevd
