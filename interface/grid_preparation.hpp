// PIPEVD_PREPARE_AT_GRID: the device readied for a grid's processes when BLACS creates the grid
// (interface/grid_interposition.cpp), long before the grid's first PDSYEVD, instead of at that
// call's start. Where a call on the grid would take the GPU engine with NCCL between its engine
// ranks, each engine rank begins the NCCL communicator the route would take (its unique id over
// MPI, in the creating thread) and makes it, after its CUDA context, in a thread of its own; the
// grid's creation returns at once. The first call finds the communicator in the cache and waits for
// it there (gpu/nccl_communicators.hpp); a failed making is dropped and made again by that call, as
// one that fails at the call.
#pragma once
#include "base/engine_layout.hpp"

namespace pipevd {

// Whether PIPEVD_PREPARE_AT_GRID is on in this process (read once).
bool grid_preparation_enabled();

// After the real grid creation returned `ictxt` (negative: this process is outside the grid), the
// outermost in its thread, outside any pipevd call. Collective over the grid's processes, which
// must all have the setting on: the grid agrees on rank 0's policy and every process takes the
// same branches. Never throws; a failure leaves the preparation to the first call.
void prepare_at_grid_creation(int ictxt);

// On an engine rank of `ec`, at a call's start: whether a grid's creation began ec's NCCL
// communicator and no call has waited for it since; true once, then false. The same answer on
// every engine rank of `ec`.
bool take_nccl_begun_at_grid(const EngineComm& ec);

// The preparations' threads joined (a communicator begun is then made or failed) and what they
// began forgotten: at pipevd_release(), before the NCCL communicators are destroyed, and at
// MPI_Finalize.
void finish_grid_preparations();

// For tests: grid creations whose processes agreed on the preparation (the setting on, outermost,
// outside a pipevd call), and of those where this process began an NCCL communicator.
struct GridPreparationCounts {
  long agreed = 0, nccl_begun = 0;
};
GridPreparationCounts grid_preparation_counts();
// Whether a grid's creation began ec's communicator and no call has taken it (local, for tests).
bool nccl_begun_at_grid(const EngineComm& ec);

}  // namespace pipevd
