// Forwarding to the real ScaLAPACK PDSYEVD: the routine that calls declined by pipevd reach.
#pragma once
#include "interface/pdsyevd_call.hpp"

namespace pipevd::scalapack {

// The real pdsyevd_ (the next definition after libpipevd in symbol search order), or an error that
// says why it could not be found. Resolved once.
struct RealPdsyevd {
  pdsyevd_fn fn = nullptr;
  const char* error = nullptr;  // set when fn is null
};
const RealPdsyevd& real_pdsyevd();

// Calls ScaLAPACK's PDSYEVD with the caller's arguments when IA = JA = IZ = JZ = 1, with a WORK of
// its own where the caller's LWORK (ScaLAPACK's LWMIN) is too small for PDSYEVD's own PDORMTR.
// ScaLAPACK 2.2's PDSYEVD mishandles submatrices (it initialises Z at (1,1) instead of (IZ,JZ)),
// so for offsets the submatrix is copied with PDGEMR2D to a fresh IA = JA = 1 matrix on the same
// grid and blocking, solved there, and Z copied back into the caller's (IZ, JZ).
// Arguments must already have passed the PDSYEVD checks.
void forward_pdsyevd(const PdsyevdCall& call);

}  // namespace pipevd::scalapack
