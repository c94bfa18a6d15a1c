// The engine's options from the process policy (interface/policy: the one place PIPEVD_* settings
// are read and checked): DBBR's b and k, the stage-3 solver and the D&C's threads, merge path,
// staging and verbosity. The route and the benches that call run_engine directly both use it.
#pragma once
#include "core/engine.hpp"
#include "interface/policy.hpp"

namespace pipevd {

EngineOptions engine_options(const Policy& policy, bool want_vectors);

}  // namespace pipevd
