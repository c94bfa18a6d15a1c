// block_cyclic_to_engine when every caller process runs on one node: no messages, the processes
// copy through a node window (node_window.hpp) on all their threads. Two ways:
//  - push: each process writes what it stores of the triangle (each element once in place, once
//    mirrored) straight into the engine ranks' segments at the element's place in their columns;
//    after a barrier each engine rank copies its segment into a_cols (contiguous).
//  - pull: each process copies the stored triangle of its local array into its segment (a
//    contiguous copy per local column); after a barrier each engine rank reads its columns'
//    elements from every process's segment straight into a_cols (in place and mirrored). Fewer
//    bytes than push (the triangle, not the full columns, goes through the window), but only
//    engine ranks work in the second copy.
// Past ExchangeOptions::node_segment_bytes in rounds (window_rounds.hpp): push's round r takes
// every engine rank's columns [r c, (r + 1) c) of its own; pull's a share of every process's local
// columns, spread over all of them so that every engine rank reads in every round.
// No counts, so no 2^31 limit either.
#pragma once
#include "base/engine_layout.hpp"
#include "redistribute/before_writes.hpp"
#include "redistribute/exchange.hpp"
#include "redistribute/exchange_setup.hpp"

namespace pipevd {

// Collective over comm.caller, which ranks_on_this_node() says is on one node. Arguments as
// block_cyclic_to_engine's, after its setup; of the options: node_memory (push or pull),
// streaming_stores, node_segment_bytes (in rounds past it: window_rounds.hpp) and
// window_populate_threads. before_writes is called before the first copy into a_cols (after the
// window is made and the first round written into it). false (on every rank, nothing moved, the
// hook not called) when the MPI gives no shared window. T: double or std::complex<double>
// (redistribute/element.hpp).
template <class T>
bool block_cyclic_to_engine_on_node(const ExchangeOptions& options, char uplo, long n, const T* a,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* a_cols, int threads,
                                    BeforeWrites& before_writes, PhaseClock& clock,
                                    PhaseTimes* times);

}  // namespace pipevd
