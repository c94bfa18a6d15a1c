#include "core/engine_path.hpp"

#include <iterator>
#include <stdexcept>

namespace pipevd {

const char* to_string(EnginePath p) {
  switch (p) {
    case EnginePath::TwoStage:
      return "two_stage";
    case EnginePath::OneStage:
      return "one_stage";
  }
  return "?";
}

EnginePathSetting engine_path_setting(const std::string& name) {
  if (name == "auto") return EnginePathSetting::Auto;
  if (name == "two_stage") return EnginePathSetting::TwoStage;
  if (name == "one_stage") return EnginePathSetting::OneStage;
  throw std::invalid_argument("engine path '" + name +
                              "' is not one of auto, two_stage, one_stage");
}

long one_stage_below(bool want_vectors, int gpus) {
  const OneStageCrossover* row = std::begin(kOneStageCrossover);
  for (const OneStageCrossover& r : kOneStageCrossover)
    if (r.gpus <= gpus) row = &r;
  return want_vectors ? row->below_with_vectors : row->below_values_only;
}

EnginePathChoice choose_engine_path(long n, bool want_vectors, int gpus,
                                    EnginePathSetting setting) {
  switch (setting) {
    case EnginePathSetting::TwoStage:
      return {EnginePath::TwoStage, "PIPEVD_ENGINE_PATH=two_stage"};
    case EnginePathSetting::OneStage:
      return {EnginePath::OneStage, "PIPEVD_ENGINE_PATH=one_stage"};
    case EnginePathSetting::Auto:
      break;
  }
  if (gpus <= 0) return {EnginePath::TwoStage, "host engine"};
  const long below = one_stage_below(want_vectors, gpus);
  const std::string where = std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
                            (want_vectors ? "" : ", jobz=N") + ", table";
  if (n < below)
    return {EnginePath::OneStage,
            "n=" + std::to_string(n) + " < " + std::to_string(below) + ", " + where};
  return {EnginePath::TwoStage,
          "n=" + std::to_string(n) + " >= " + std::to_string(below) + ", " + where};
}

EnginePathChoice choose_hermitian_engine_path(long n, bool want_vectors, int gpus,
                                              EnginePathSetting setting) {
  if (gpus <= 0 || setting != EnginePathSetting::Auto)
    return choose_engine_path(n, want_vectors, gpus, setting);
  // The crossover table is the real kernels'. The GPU engine's complex two-stage kernels (bulge
  // chasing, BC-back) are not yet tuned or measured against cuSOLVER's one-stage solver, so auto
  // keeps the one-stage path at every n and the two-stage engine runs only where forced.
  return {EnginePath::OneStage,
          "complex on GPUs: one_stage unless PIPEVD_ENGINE_PATH=two_stage, the complex two-stage "
          "kernels not yet measured against it"};
}

}  // namespace pipevd
