// The engine's options from the process policy (interface/policy: the one place PIPEVD_* settings
// are read and checked): DBBR's b and k, SBR-back's order, the stage-3 solver and the D&C's
// threads, merge path, staging and verbosity. The route and the benches that call run_engine
// directly both use it.
#pragma once
#include "core/backend_factory.hpp"
#include "core/engine.hpp"
#include "interface/policy.hpp"

namespace pipevd {

// gpu_engine_ranks: the engine ranks where the engine runs on GPUs (0 on the host engine), for
// the defaults that depend on them.
EngineOptions engine_options(const Policy& policy, bool want_vectors, int gpu_engine_ranks = 0);

// PIPEVD_DBBR_COLUMNS=auto: cyclic from 4 engine ranks on GPUs, where the busiest rank's share of
// the shrinking trailing matrix costs DBBR more than the cyclic columns' exchange and per-panel
// packing (bench/RESULTS.md, DBBR's columns); blockwise on fewer, where it does not, and on the
// host engine, which nobody times.
bool dbbr_cyclic_by_default(int gpu_engine_ranks);

// A GPU backend's settings (every PIPEVD_GPU_* value) and the host threads of its copies of the
// caller's arrays (1: the backend's own default). The one mapping of the policy onto them;
// gpu/backend_settings maps them onto the backend.
GpuBackendSettings gpu_backend_settings(const Policy& policy, int host_threads = 1);

}  // namespace pipevd
