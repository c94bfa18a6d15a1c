// What both directions of the redistribution establish before they plan: the layout matches the
// call, the caller's grid and the block-cyclic view of the operand, this process's rank, and a
// clock that charges elapsed time to PhaseTimes.
#pragma once
#include <mpi.h>

#include "base/engine_layout.hpp"
#include "redistribute/block_cyclic.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/exchange.hpp"

namespace pipevd {

class PhaseClock {
 public:
  explicit PhaseClock(PhaseTimes* times) : times_(times), t_(MPI_Wtime()) {}
  // Charges the time since the last lap to `phase`.
  void lap(double PhaseTimes::*phase) {
    const double now = MPI_Wtime();
    if (times_) times_->*phase += now - t_;
    t_ = now;
  }

 private:
  PhaseTimes* times_;
  double t_;
};

// Throws std::invalid_argument (naming `who`) when the layout does not match n or the engine.
void check_layout(const char* who, long n, const EngineLayout& layout, const EngineComm& comm);

struct ExchangeSetup {
  GridMap grid;
  BlockCyclicView view;  // the n x n operand at (i, j) of desc
  int me = 0, size = 0;  // rank and size of comm.caller
};

// The grid of desc's context and the operand's view; throws std::logic_error (naming `who`) when
// comm.caller is not the caller communicator of that grid.
ExchangeSetup setup_exchange(const char* who, long n, const int* desc, long i, long j,
                             const EngineComm& comm);

}  // namespace pipevd
