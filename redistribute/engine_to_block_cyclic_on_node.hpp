// engine_to_block_cyclic when every caller process runs on one node: no messages. Each engine rank
// copies its rows of Z into its segment of a node window (node_window.hpp), contiguous; after a
// barrier every process reads the parts of its local Z from the engine ranks' segments straight
// into z (each piece a contiguous run on both sides). Two copies of each element, on all of each
// process's threads, the second on every process; no counts, so no 2^31 limit. Past
// ExchangeOptions::node_segment_bytes in rounds (window_rounds.hpp), round r taking Z's columns
// [r c, (r + 1) c) of every engine rank's rows.
#pragma once
#include "base/engine_layout.hpp"
#include "redistribute/exchange.hpp"
#include "redistribute/exchange_setup.hpp"

namespace pipevd {

// Collective over comm.caller, which ranks_on_this_node() says is on one node. Arguments as
// engine_to_block_cyclic's, after its setup; of the options: streaming_stores, node_segment_bytes
// and window_populate_threads. false (on every rank, nothing moved) when the MPI gives no shared
// window. T: double or std::complex<double> (redistribute/element.hpp).
template <class T>
bool engine_to_block_cyclic_on_node(const ExchangeOptions& options, long n, const T* z_rows,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* z, int threads, PhaseClock& clock,
                                    PhaseTimes* times);

}  // namespace pipevd
