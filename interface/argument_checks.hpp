// PDSYEVD's argument checks, reproduced so every bad call gets ScaLAPACK 2.2's INFO and message.
#pragma once
#include "interface/pdsyevd_call.hpp"

namespace pipevd {

struct PdsyevdCheck {
  bool quick_return = false;  // N = 0: PDSYEVD returns at once, INFO untouched
  int info = 0;               // ScaLAPACK's INFO: 0 or -(argument) or -(100*argument + field)
  bool query = false;         // LWORK = -1: a workspace query
  int lwmin = 0;              // WORK(1) as PDSYEVD reports it
  int liwmin = 0;             // IWORK(1) as PDSYEVD reports it
};

// Collective over the BLACS grid of DESCZ's context, like PDSYEVD's own checks (the global check
// of PCHK1MAT makes INFO agree on every process). With allow_jobz_n, JOBZ = 'N' (pipevd's
// extension, only where the engine takes the call) passes the JOBZ check. Writes WORK(1) and
// IWORK(1) exactly where PDSYEVD writes them (once the descriptors have passed CHK1MAT).
PdsyevdCheck check_pdsyevd_arguments(const PdsyevdCall& call, bool allow_jobz_n);

}  // namespace pipevd
