// block_cyclic_to_engine when every caller process runs on one node: no messages. Each process
// writes what it stores of the triangle (each element once in place, once mirrored) straight into
// the engine ranks' segments of a node window (node_window.hpp), at the element's place in the
// engine's columns; after a barrier each engine rank copies its segment into a_cols. Two copies
// of each element, both on all of each process's threads; no counts, so no 2^31 limit either.
#pragma once
#include "redistribute/engine_layout.hpp"
#include "redistribute/exchange.hpp"
#include "redistribute/exchange_setup.hpp"

namespace pipevd {

// Collective over comm.caller, which ranks_on_this_node() says is on one node. Arguments as
// block_cyclic_to_engine's, after its setup.
void block_cyclic_to_engine_on_node(char uplo, long n, const double* a, const ExchangeSetup& setup,
                                    const EngineLayout& layout, const EngineComm& comm,
                                    double* a_cols, int threads, PhaseClock& clock,
                                    PhaseTimes* times);

}  // namespace pipevd
