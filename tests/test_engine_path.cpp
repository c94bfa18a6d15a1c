// The engine's path (core/engine_path.hpp): the crossover table's choices at its boundaries, read
// from the table itself (its numbers are replaced by device measurements), the forcing setting,
// the host engine, and the reasons PIPEVD_VERBOSE prints.
#include <gtest/gtest.h>

#include <iterator>
#include <stdexcept>
#include <string>

#include "core/engine_path.hpp"

namespace pipevd {
namespace {

EnginePath path_of(long n, bool vectors, int gpus) {
  return choose_engine_path(n, vectors, gpus, EnginePathSetting::Auto).path;
}

TEST(EnginePathTable, RowsAscendAndStartAtOneGpu) {
  ASSERT_GT(std::size(kOneStageCrossover), 0u);
  EXPECT_EQ(kOneStageCrossover[0].gpus, 1);
  for (std::size_t i = 1; i < std::size(kOneStageCrossover); ++i)
    EXPECT_GT(kOneStageCrossover[i].gpus, kOneStageCrossover[i - 1].gpus);
  for (const OneStageCrossover& r : kOneStageCrossover) {
    EXPECT_GE(r.below_with_vectors, 0);
    EXPECT_GE(r.below_values_only, 0);
  }
}

// At each row: one below the crossover is one-stage, the crossover itself two-stage.
TEST(EnginePathTable, EachRowsBoundary) {
  for (const OneStageCrossover& r : kOneStageCrossover)
    for (bool vectors : {true, false}) {
      const long below = vectors ? r.below_with_vectors : r.below_values_only;
      SCOPED_TRACE("gpus=" + std::to_string(r.gpus) + " vectors=" + std::to_string(vectors));
      EXPECT_EQ(one_stage_below(vectors, r.gpus), below);
      if (below > 1) EXPECT_EQ(path_of(below - 1, vectors, r.gpus), EnginePath::OneStage);
      EXPECT_EQ(path_of(below, vectors, r.gpus), EnginePath::TwoStage);
      EXPECT_EQ(path_of(below + 1, vectors, r.gpus), EnginePath::TwoStage);
    }
}

// A GPU count between rows takes the row below it; beyond the last, the last.
TEST(EnginePathTable, GpuCountsBetweenAndBeyondRows) {
  const std::size_t rows = std::size(kOneStageCrossover);
  for (std::size_t i = 0; i < rows; ++i) {
    const OneStageCrossover& r = kOneStageCrossover[i];
    const int next = i + 1 < rows ? kOneStageCrossover[i + 1].gpus : r.gpus + 100;
    for (int g = r.gpus; g < next; ++g) {
      EXPECT_EQ(one_stage_below(true, g), r.below_with_vectors) << g;
      EXPECT_EQ(one_stage_below(false, g), r.below_values_only) << g;
    }
  }
}

TEST(EnginePath, ForcedPathsIgnoreTheTable) {
  for (long n : {1L, 100L, 4000L, 100000L})
    for (int gpus : {0, 1, 4}) {
      EXPECT_EQ(choose_engine_path(n, true, gpus, EnginePathSetting::OneStage).path,
                EnginePath::OneStage);
      EXPECT_EQ(choose_engine_path(n, false, gpus, EnginePathSetting::TwoStage).path,
                EnginePath::TwoStage);
    }
  EXPECT_EQ(choose_engine_path(10, true, 1, EnginePathSetting::OneStage).reason,
            "PIPEVD_ENGINE_PATH=one_stage");
  EXPECT_EQ(choose_engine_path(10, true, 1, EnginePathSetting::TwoStage).reason,
            "PIPEVD_ENGINE_PATH=two_stage");
}

// The host engine's auto is two-stage at every n (the table is the GPU's).
TEST(EnginePath, HostEngineAutoIsTwoStage) {
  for (long n : {1L, 37L, 1000L}) {
    const EnginePathChoice c = choose_engine_path(n, true, 0, EnginePathSetting::Auto);
    EXPECT_EQ(c.path, EnginePath::TwoStage);
    EXPECT_EQ(c.reason, "host engine");
  }
}

// The reasons of PIPEVD_VERBOSE's per-call line ("path=<path> (<reason>)").
TEST(EnginePath, ReasonsNameTheTableEntry) {
  const long v1 = one_stage_below(true, 1), n2 = one_stage_below(false, 2);
  EXPECT_EQ(choose_engine_path(v1 - 1, true, 1, EnginePathSetting::Auto).reason,
            "n=" + std::to_string(v1 - 1) + " < " + std::to_string(v1) + ", 1 GPU, table");
  EXPECT_EQ(choose_engine_path(v1, true, 1, EnginePathSetting::Auto).reason,
            "n=" + std::to_string(v1) + " >= " + std::to_string(v1) + ", 1 GPU, table");
  EXPECT_EQ(choose_engine_path(n2, false, 2, EnginePathSetting::Auto).reason,
            "n=" + std::to_string(n2) + " >= " + std::to_string(n2) + ", 2 GPUs, jobz=N, table");
  EXPECT_STREQ(to_string(EnginePath::OneStage), "one_stage");
  EXPECT_STREQ(to_string(EnginePath::TwoStage), "two_stage");
}

TEST(EnginePath, SettingNames) {
  EXPECT_EQ(engine_path_setting("auto"), EnginePathSetting::Auto);
  EXPECT_EQ(engine_path_setting("two_stage"), EnginePathSetting::TwoStage);
  EXPECT_EQ(engine_path_setting("one_stage"), EnginePathSetting::OneStage);
  EXPECT_THROW(engine_path_setting("fast"), std::invalid_argument);
}

// Complex Hermitian matrices on GPUs: auto follows the complex table (its own crossover, not the
// real one), and says so; a forced setting is honoured on one GPU and several.
TEST(EnginePath, HermitianOnGpusFollowsTheComplexTable) {
  for (int gpus : {1, 2, 4, 8})
    for (bool vectors : {true, false}) {
      const long below = hermitian_one_stage_below(vectors, gpus);
      ASSERT_GT(below, 1);
      const EnginePathChoice under =
          choose_hermitian_engine_path(below - 1, vectors, gpus, EnginePathSetting::Auto);
      EXPECT_EQ(under.path, EnginePath::OneStage);
      EXPECT_NE(under.reason.find("complex table"), std::string::npos) << under.reason;
      EXPECT_NE(under.reason.find(" < " + std::to_string(below)), std::string::npos)
          << under.reason;
      EXPECT_EQ(choose_hermitian_engine_path(below, vectors, gpus, EnginePathSetting::Auto).path,
                EnginePath::TwoStage);
      for (long n : {100L, below, 100000L}) {
        const EnginePathChoice two =
            choose_hermitian_engine_path(n, vectors, gpus, EnginePathSetting::TwoStage);
        EXPECT_EQ(two.path, EnginePath::TwoStage);
        EXPECT_EQ(two.reason, "PIPEVD_ENGINE_PATH=two_stage");
        const EnginePathChoice one =
            choose_hermitian_engine_path(n, vectors, gpus, EnginePathSetting::OneStage);
        EXPECT_EQ(one.path, EnginePath::OneStage);
        EXPECT_EQ(one.reason, "PIPEVD_ENGINE_PATH=one_stage");
      }
    }
  // The complex table's rows are its own: JOBZ = 'N' never above 'V', never above with more GPUs.
  for (std::size_t i = 0; i < std::size(kHermitianOneStageCrossover); ++i) {
    const OneStageCrossover& r = kHermitianOneStageCrossover[i];
    EXPECT_EQ(hermitian_one_stage_below(true, r.gpus), r.below_with_vectors);
    EXPECT_LE(r.below_values_only, r.below_with_vectors);
    if (i > 0)
      EXPECT_LE(r.below_with_vectors, kHermitianOneStageCrossover[i - 1].below_with_vectors);
  }
}

TEST(EnginePath, HermitianOnTheHostEngineChoosesAsReal) {
  for (auto s : {EnginePathSetting::Auto, EnginePathSetting::TwoStage, EnginePathSetting::OneStage})
    for (long n : {10L, 100000L}) {
      const EnginePathChoice c = choose_hermitian_engine_path(n, true, 0, s);
      const EnginePathChoice r = choose_engine_path(n, true, 0, s);
      EXPECT_EQ(c.path, r.path);
      EXPECT_EQ(c.reason, r.reason);
    }
  EXPECT_EQ(choose_hermitian_engine_path(50, true, 0, EnginePathSetting::Auto).path,
            EnginePath::TwoStage);
}

}  // namespace
}  // namespace pipevd
