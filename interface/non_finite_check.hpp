// Non-finite input, found before any route: PDSYEVD (or PZHEEVD) on a NaN or Inf in A returns NaN
// eigenpairs with INFO = 0 (or ScaLAPACK's DLASCL stops the job), so every caller rank checks the
// referenced triangle of its local part of sub(A) and the grid agrees, before the engine or
// ScaLAPACK sees A.
#pragma once
#include <mpi.h>

#include "interface/eigen_call.hpp"

namespace pipevd {

// What one pass over the referenced triangle of A finds, agreed over the grid.
struct EntryScan {
  bool non_finite = false;  // some rank holds a NaN or an infinity there
  // The largest |a_ij| there (PDLANSY's / PZLANHE's 'M' norm, modulus for complex entries), for
  // PDSYEVD's scaling: the route needs no pass of its own over A or its copy. Meaningless where
  // non_finite.
  double max_abs = 0;
};

// Collective over `grid` (the call's, engine_comm.hpp's grid_comm). One pass over this rank's
// local entries of A(IA:IA+N-1, JA:JA+N-1) in the triangle UPLO names (the other may hold anything)
// on `threads` threads.
EntryScan agreed_entry_scan(const PdsyevdCall& call, MPI_Comm grid, int threads);
// PZHEEVD's Hermitian A: an entry is non-finite where either part is.
EntryScan agreed_entry_scan(const PzheevdCall& call, MPI_Comm grid, int threads);

}  // namespace pipevd
