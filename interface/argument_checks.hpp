// PDSYEVD's and PZHEEVD's argument checks, reproduced so every bad call gets ScaLAPACK 2.2's INFO
// and message, and every query its workspace answers.
#pragma once
#include "interface/eigen_call.hpp"

namespace pipevd {

struct ArgumentCheck {
  bool quick_return = false;  // N = 0: the routine returns at once (PZHEEVD's INFO = 0 set)
  int info = 0;               // ScaLAPACK's INFO: 0 or -(argument) or -(100*argument + field)
  bool query = false;         // a workspace query (LWORK = -1; for PZHEEVD also LRWORK or LIWORK)
  int lwmin = 0;              // WORK(1) as the routine reports it
  int lrwmin = 0;             // RWORK(1) (PZHEEVD)
  int liwmin = 0;             // IWORK(1)
};

// Collective over the BLACS grid of call_context(call), like the routine's own checks (the global
// check of PCHK1MAT / PCHK2MAT makes INFO agree on every process). With allow_jobz_n, JOBZ = 'N'
// (pipevd's extension, only where the engine takes the call) passes the JOBZ check. Writes WORK(1),
// RWORK(1) and IWORK(1) exactly where the routine writes them (once the descriptors have passed
// CHK1MAT).
ArgumentCheck check_arguments(const PdsyevdCall& call, bool allow_jobz_n);
ArgumentCheck check_arguments(const PzheevdCall& call, bool allow_jobz_n);

// The workspace answers the routine leaves on a successful exit.
void write_workspace_answers(const PdsyevdCall& call, const ArgumentCheck& check);
void write_workspace_answers(const PzheevdCall& call, const ArgumentCheck& check);

}  // namespace pipevd
