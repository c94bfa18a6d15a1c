// Non-finite input, found before any route: PDSYEVD (or PZHEEVD) on a NaN or Inf in A returns NaN
// eigenpairs with INFO = 0 (or ScaLAPACK's DLASCL stops the job), so every caller rank checks the
// referenced triangle of its local part of sub(A) and the grid agrees, before the engine or
// ScaLAPACK sees A.
#pragma once
#include <mpi.h>

#include "interface/eigen_call.hpp"

namespace pipevd {

// Collective over `grid` (the call's, engine_comm.hpp's grid_comm). One pass over this rank's
// local entries of A(IA:IA+N-1, JA:JA+N-1) in the triangle UPLO names (the other may hold anything)
// on `threads` threads; true on every rank where any rank holds a NaN or an infinity there.
bool agreed_non_finite(const PdsyevdCall& call, MPI_Comm grid, int threads);
// PZHEEVD's Hermitian A: an entry is non-finite where either part is.
bool agreed_non_finite(const PzheevdCall& call, MPI_Comm grid, int threads);

}  // namespace pipevd
