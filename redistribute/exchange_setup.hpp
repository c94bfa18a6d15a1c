// What both directions of the redistribution establish before they plan: the layout matches the
// call, the caller's grid and the block-cyclic view of the operand, this process's rank, the
// threads that pack and unpack, whether the node window takes the exchange, and a clock that
// charges elapsed time to PhaseTimes.
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
  int threads = 1;       // that pack and unpack: redistribution_threads' for options.threads
  // Whether the node window may take the exchange: options.node_memory asks for it and
  // comm.caller is several processes, all on this node (for one process the message path only
  // copies in place, one pass where the window takes two).
  bool node_window = false;
};

// The grid of desc's context, the operand's view, the threads and whether the node window may be
// used; throws std::logic_error (naming `who`) when comm.caller is not the caller communicator of
// that grid. Collective over comm.caller (node_window.hpp's ranks_on_this_node).
ExchangeSetup setup_exchange(const char* who, long n, const int* desc, long i, long j,
                             const EngineComm& comm, const ExchangeOptions& options);

}  // namespace pipevd
