#include "redistribute/exchange_setup.hpp"

#include <stdexcept>
#include <string>

#include "base/scalapack_api.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"

namespace pipevd {

void check_layout(const char* who, long n, const EngineLayout& layout, const EngineComm& comm) {
  if (layout.n != n || layout.engine_ranks() != static_cast<int>(comm.engine_to_caller.size()))
    throw std::invalid_argument(std::string(who) + ": layout does not match n or engine ranks");
}

ExchangeSetup setup_exchange(const char* who, long n, const int* desc, long i, long j,
                             const EngineComm& comm, const ExchangeOptions& options) {
  ExchangeSetup s;
  s.grid = grid_map(desc[scalapack::CTXT_]);
  s.view = view_of(desc, i, j, n, n, s.grid.nprow, s.grid.npcol);
  MPI_Comm_rank(comm.caller, &s.me);
  MPI_Comm_size(comm.caller, &s.size);
  if (s.grid.caller_rank[s.grid.myrow * s.grid.npcol + s.grid.mycol] != s.me)
    throw std::logic_error(std::string(who) + ": comm is not the caller comm of this grid");
  s.threads = redistribution_threads(options.threads, ranks_on_this_node(comm.caller));
  s.node_window = options.node_memory != NodeMemory::off && several_on_one_node(comm.caller);
  return s;
}

}  // namespace pipevd
