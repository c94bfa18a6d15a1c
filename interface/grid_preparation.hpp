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

// After the real grid creation returned `ictxt` (negative: this process is outside the grid, and
// nothing is done), the outermost in its thread, outside any pipevd call: every process of the
// grid comes here alike. Collective over the grid's processes whatever the setting: one BLACS
// combine agrees whether every one of them has the setting on and could hold off its calls at once
// (one_call_at_a_time taken without waiting, so a thread inside a call elsewhere cannot deadlock
// it); only then do they prepare (rank 0's other settings agreed, every branch alike). Never
// throws; a failure leaves the preparation to the first call.
void prepare_at_grid_creation(int ictxt) noexcept;

// On an engine rank of `ec`, at a call's start: whether a grid's creation began ec's NCCL
// communicator and no call has waited for it since; true once, then false. The same answer on
// every engine rank of `ec`.
bool take_nccl_begun_at_grid(const EngineComm& ec);

// The preparations' threads joined (a communicator begun is then made or failed) and what they
// began forgotten: at pipevd_release(), before the NCCL communicators are destroyed, and at
// MPI_Finalize.
void finish_grid_preparations();

// For tests: the outermost grid creations outside a pipevd call that this process is in (their
// gate agreed, whatever the setting); of those, the ones whose processes agreed on the preparation
// (the setting on and the calls held off on every one); of those, the ones where this process began
// an NCCL communicator.
struct GridPreparationCounts {
  long interposed = 0, agreed = 0, nccl_begun = 0;
};
GridPreparationCounts grid_preparation_counts();
// Whether a grid's creation began ec's communicator and no call has taken it (local, for tests).
bool nccl_begun_at_grid(const EngineComm& ec);

}  // namespace pipevd
