// Non-finite input, found before any route: PDSYEVD (or PZHEEVD) on a NaN or Inf in A returns NaN
// eigenpairs with INFO = 0 (or ScaLAPACK's DLASCL stops the job), so every caller rank checks the
// referenced triangle of its local part of sub(A) and the grid agrees, before the engine or
// ScaLAPACK sees A. One kind of call is scanned later, by the same arithmetic: a grid of one rank
// whose call the engine takes on its direct one-stage path has its triangle scanned as the upload
// copies it (interface/engine_route.hpp's entry_scan_at_upload), still before anything is computed.
#pragma once
#include <mpi.h>

#include "core/entry_scan.hpp"
#include "interface/eigen_call.hpp"

namespace pipevd {

// Collective over `grid` (the call's, engine_comm.hpp's grid_comm): what one pass over the
// referenced triangle of A finds (core/entry_scan.hpp), agreed over the grid (non_finite where
// some rank holds a NaN or an infinity there, the largest max_abs of all). The pass goes over this
// rank's local entries of A(IA:IA+N-1, JA:JA+N-1) in the triangle UPLO names (the other may hold
// anything) on `threads` threads.
EntryScan agreed_entry_scan(const PdsyevdCall& call, MPI_Comm grid, int threads);
// PZHEEVD's Hermitian A: an entry is non-finite where either part is.
EntryScan agreed_entry_scan(const PzheevdCall& call, MPI_Comm grid, int threads);

}  // namespace pipevd
