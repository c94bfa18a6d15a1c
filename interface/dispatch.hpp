// The flow of one PDSYEVD call: checks, workspace query, decision, engine or ScaLAPACK, report.
#pragma once
#include "interface/pdsyevd_call.hpp"

namespace pipevd {

void run_pdsyevd(const PdsyevdCall& call);

}  // namespace pipevd
