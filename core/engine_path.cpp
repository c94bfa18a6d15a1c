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

namespace {

template <std::size_t R>
long below_in(const OneStageCrossover (&table)[R], bool want_vectors, int gpus) {
  const OneStageCrossover* row = std::begin(table);
  for (const OneStageCrossover& r : table)
    if (r.gpus <= gpus) row = &r;
  return want_vectors ? row->below_with_vectors : row->below_values_only;
}

// A forced setting, the host engine, or the table's crossover `below` (named `table` in the
// reason).
EnginePathChoice choose(long n, bool want_vectors, int gpus, EnginePathSetting setting, long below,
                        const char* table) {
  switch (setting) {
    case EnginePathSetting::TwoStage:
      return {EnginePath::TwoStage, "PIPEVD_ENGINE_PATH=two_stage"};
    case EnginePathSetting::OneStage:
      return {EnginePath::OneStage, "PIPEVD_ENGINE_PATH=one_stage"};
    case EnginePathSetting::Auto:
      break;
  }
  if (gpus <= 0) return {EnginePath::TwoStage, "host engine"};
  const std::string where = std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") +
                            (want_vectors ? "" : ", jobz=N") + ", " + table;
  if (n < below)
    return {EnginePath::OneStage,
            "n=" + std::to_string(n) + " < " + std::to_string(below) + ", " + where};
  return {EnginePath::TwoStage,
          "n=" + std::to_string(n) + " >= " + std::to_string(below) + ", " + where};
}

}  // namespace

long one_stage_below(bool want_vectors, int gpus) {
  return below_in(kOneStageCrossover, want_vectors, gpus);
}

long hermitian_one_stage_below(bool want_vectors, int gpus) {
  return below_in(kHermitianOneStageCrossover, want_vectors, gpus);
}

EnginePathChoice choose_engine_path(long n, bool want_vectors, int gpus,
                                    EnginePathSetting setting) {
  return choose(n, want_vectors, gpus, setting, one_stage_below(want_vectors, gpus), "table");
}

EnginePathChoice choose_hermitian_engine_path(long n, bool want_vectors, int gpus,
                                              EnginePathSetting setting) {
  return choose(n, want_vectors, gpus, setting, hermitian_one_stage_below(want_vectors, gpus),
                "complex table");
}

}  // namespace pipevd
