// Where one PDSYEVD or PZHEEVD call goes: the engine (on a backend) or the real ScaLAPACK.
#pragma once
#include <string>

#include "interface/policy.hpp"

namespace pipevd {

enum class Route { Scalapack, Host, Gpu };
const char* to_string(Route r);

struct Decision {
  Route route = Route::Scalapack;
  std::string why;    // for PIPEVD_VERBOSE
  std::string error;  // non-empty: the policy asks for something this build or machine cannot do
};

struct EngineAvailability {
  bool host = false;  // the host engine is built in
  bool gpu = false;   // the GPU engine is built in and a device is visible
  // Largest n either engine takes (0: no limit). Stage 3 by dstedc stops at 46340 (its 32-bit
  // workspace 1 + 4n + n^2); core/tridiagonal_dc, which both engines use beyond it, has no limit.
  long max_n = 0;
  int gpu_devices = 0;  // visible devices (agreed: the fewest any caller rank sees)
};

// Pure function of the policy, the problem size and what is available; the same on every rank.
// auto: the GPU engine where available, else ScaLAPACK (the host engine only when asked for).
// PDSYEVD and PZHEEVD alike: both engines run both paths over complex Hermitian matrices, so
// PIPEVD_ENGINE_PATH never changes the route (core/engine_path.hpp chooses the path after it).
Decision decide(const Policy& policy, int n, const EngineAvailability& available);

// What this build and this process offer.
EngineAvailability engine_availability();

}  // namespace pipevd
