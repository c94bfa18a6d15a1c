// Route::Host: one PDSYEVD call on the host engine (core/ on the host backend): block-cyclic A ->
// engine layout -> run_engine -> Z back in DESCZ, W on every caller rank; ScaLAPACK's scaling of A.
#pragma once
#include "interface/pdsyevd_call.hpp"
#include "interface/policy.hpp"

namespace pipevd {

// Collective over the grid of DESCA. Arguments have passed check_pdsyevd_arguments (N > 0, not a
// query). Sets *call.info (0, or the D&C failure code > 0 as PDSYEVD reports it) and returns it.
int run_host_engine(const PdsyevdCall& call, const Policy& policy);

}  // namespace pipevd
