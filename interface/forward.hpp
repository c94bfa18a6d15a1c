// Forwarding to the real ScaLAPACK: the routines that calls declined by pipevd reach.
#pragma once
#include <cstddef>

#include "interface/eigen_call.hpp"

namespace pipevd::scalapack {

// The real routine (the next definition after libpipevd in symbol search order), or an error that
// says why it could not be found. Resolved once.
template <class Fn>
struct RealRoutine {
  Fn fn = nullptr;
  const char* error = nullptr;  // set when fn is null
};
using RealPdsyevd = RealRoutine<pdsyevd_fn>;
using RealPzheevd = RealRoutine<pzheevd_fn>;
const RealPdsyevd& real_routine(const PdsyevdCall&);
const RealPzheevd& real_routine(const PzheevdCall&);

// A fresh n x n copy at (1, 1) on process (0, 0) of `desca`'s grid with its blocking (where the
// forwards solve a submatrix): its descriptor and the local entries this process holds of it.
struct FreshCopy {
  int desc[kDescLen];
  std::size_t local = 0;
};
FreshCopy fresh_copy(int n, const int* desca);

// Calls ScaLAPACK's PDSYEVD with the caller's arguments when IA = JA = IZ = JZ = 1, with a WORK of
// its own where the caller's LWORK (ScaLAPACK's LWMIN) is too small for PDSYEVD's own PDORMTR.
// ScaLAPACK 2.2's PDSYEVD mishandles submatrices (it initialises Z at (1,1) instead of (IZ,JZ)),
// so for offsets the submatrix is copied with PDGEMR2D to a fresh IA = JA = 1 matrix on the same
// grid and blocking, solved there, and Z copied back into the caller's (IZ, JZ).
// Arguments must already have passed the PDSYEVD checks.
void forward_call(const PdsyevdCall& call);

// ScaLAPACK's PZHEEVD likewise: the caller's arguments where sub(A) and sub(Z) start at (1, 1) on
// process (0, 0), with an IWORK of its own where the caller's LIWORK (which PZHEEVD does not
// check) is below its LIWMIN; otherwise (offsets, a nonzero RSRC or CSRC, which PZHEEVD's checks
// let through but its tridiagonal gather and PDSTEDC do not handle) a PZGEMR2D copy at (1, 1) on
// process (0, 0), solved there, Z copied back. Arguments must have passed the PZHEEVD checks.
void forward_call(const PzheevdCall& call);

}  // namespace pipevd::scalapack
