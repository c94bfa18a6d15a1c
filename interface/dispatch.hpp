// The flow of one PDSYEVD or PZHEEVD call: checks, workspace query, decision, engine or ScaLAPACK,
// report.
#pragma once
#include <string>

#include "interface/eigen_call.hpp"

namespace pipevd {

void run_pdsyevd(const PdsyevdCall& call);
void run_pzheevd(const PzheevdCall& call);

// This process's last call: "two_stage" or "one_stage" (the engine's path, core/engine_path.hpp),
// "scalapack" (forwarded), or "" (nothing computed: an error, a query, N = 0, or no call yet).
const char* last_call_path();

// PIPEVD_TEST_NODES, taken once (node communicators are cached after it), before the first
// communicators a call or a grid's preparation builds; the error that names a bad spec, or "".
std::string use_pretend_nodes(const std::string& spec);

}  // namespace pipevd
