// The load-balance report (PIPEVD_VERBOSE >= 1): every engine rank's stage times and the
// imbalance of the whole call (pipelined paper §3.4: the row heights are planned so that all
// ranks finish together).
#pragma once
#include <mpi.h>

#include <string>

#include "base/engine_layout.hpp"
#include "core/engine.hpp"

namespace pipevd {

struct LoadBalance {
  // max / mean over the ranks of the busy time (the main thread's stages: DBBR, bulge chasing,
  // SBR-back, BC-back, GEMM less its wait for the D&C result) and of the back transformation
  // alone (SBR-back + BC-back + GEMM less that wait: what the row heights balance). 1 is perfect
  // balance.
  double busy_imbalance = 1, back_imbalance = 1;
  std::string text;  // a line per rank and the summary (rank 0 only)
};

// Collective over `engine`; rank 0's result holds the text.
LoadBalance load_balance_report(MPI_Comm engine, const EngineLayout& layout,
                                const EngineStats& stats);

}  // namespace pipevd
