#include "interface/decision.hpp"

#include "core/backend_factory.hpp"

namespace pipevd {

const char* to_string(Route r) {
  switch (r) {
    case Route::Scalapack:
      return "scalapack";
    case Route::Host:
      return "host";
    case Route::Gpu:
      return "gpu";
  }
  return "?";
}

namespace {

bool within_limit(int n, const EngineAvailability& a) { return a.max_n == 0 || n <= a.max_n; }

std::string limit_error(const char* backend, int n, const EngineAvailability& a) {
  return std::string("PIPEVD_BACKEND=") + backend + ", but n = " + std::to_string(n) +
         " exceeds the engines' limit " + std::to_string(a.max_n) +
         " (CPU D&C with 32-bit LAPACK workspace)";
}

}  // namespace

Decision decide(const Policy& policy, int n, const EngineAvailability& available) {
  Decision d;
  switch (policy.backend) {
    case Backend::Scalapack:
      d.why = "PIPEVD_BACKEND=scalapack";
      return d;
    case Backend::Host:
      if (!available.host)
        d.error = "PIPEVD_BACKEND=host, but this build has no host engine";
      else if (!within_limit(n, available))
        d.error = limit_error("host", n, available);
      d.route = Route::Host;
      d.why = "PIPEVD_BACKEND=host";
      return d;
    case Backend::Gpu:
      if (!available.gpu)
        d.error = "PIPEVD_BACKEND=gpu, but no GPU engine with a visible device";
      else if (!within_limit(n, available))
        d.error = limit_error("gpu", n, available);
      d.route = Route::Gpu;
      d.why = "PIPEVD_BACKEND=gpu";
      return d;
    case Backend::Auto:
      break;
  }
  if (n < policy.min_n) {
    d.why = "auto: n < PIPEVD_MIN_N=" + std::to_string(policy.min_n);
  } else if (!within_limit(n, available)) {
    d.why = "auto: n above the engines' limit " + std::to_string(available.max_n);
  } else if (available.gpu) {
    d.route = Route::Gpu;
    d.why = "auto: GPU engine";
  } else {
    // The host engine is the GPU engine's reference, not a CPU solver: slower than ScaLAPACK and
    // several times its memory per rank. It runs only where asked for (PIPEVD_BACKEND=host).
    d.why = "auto: no GPU engine on every rank";
  }
  return d;
}

EngineAvailability engine_availability() {
  EngineAvailability a;
  a.host = true;  // the host engine (core/ on host/) is always built
  // Stage 3 by core/tridiagonal_dc has no 32-bit limit (the host engine takes it over dstedc's
  // n <= 46340); ScaLAPACK's descriptors hold int, and memory is the practical limit.
  a.max_n = 0;
  a.gpu_devices = gpu_visible_devices();  // the device count is asked once per process
  a.gpu = a.gpu_devices > 0;
  return a;
}

}  // namespace pipevd
