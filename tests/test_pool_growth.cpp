// The pool's staged growth decided (core/pool_growth.hpp): whole unless asked, and where asked only
// where the plan has a DBBR stage below its peak and the device keeps room for one more later
// buffer beside the peak; the second step maps only what the pool lacks of the peak; and the
// memory plan's numbers the decision reads (core/memory_plan.hpp).
#include <gtest/gtest.h>

#include <string>

#include "base/engine_layout.hpp"
#include "core/engine_plan.hpp"
#include "core/memory_check.hpp"
#include "core/memory_plan.hpp"
#include "core/pool_growth.hpp"

namespace pipevd {
namespace {

constexpr long GiB = 1L << 30;

TEST(PoolGrowth, WholeUnlessAsked) {
  const PoolGrowth g = plan_pool_growth(false, 24 * GiB, 10 * GiB, 8 * GiB, 140 * GiB);
  EXPECT_FALSE(g.staged);
  EXPECT_EQ(g.first_bytes, 24 * GiB);
  EXPECT_EQ(g.peak_bytes, 24 * GiB);
  EXPECT_STREQ(g.whole_because, "") << "not asked: nothing to explain";
}

TEST(PoolGrowth, StagedWhereAskedAndRoomy) {
  const PoolGrowth g = plan_pool_growth(true, 24 * GiB, 10 * GiB, 8 * GiB, 140 * GiB);
  EXPECT_TRUE(g.staged);
  EXPECT_EQ(g.first_bytes, 10 * GiB);
  EXPECT_EQ(g.peak_bytes, 24 * GiB);
  EXPECT_STREQ(g.whole_because, "");
}

TEST(PoolGrowth, WholeWithAReasonWhereStagingCannotHelpOrFit) {
  const auto whole = [](const PoolGrowth& g, const std::string& why) {
    EXPECT_FALSE(g.staged) << why;
    EXPECT_EQ(g.first_bytes, g.peak_bytes) << why;
    EXPECT_EQ(std::string(g.whole_because), why);
  };
  whole(plan_pool_growth(true, 24 * GiB, 0, 8 * GiB, 140 * GiB), "no DBBR stage before the peak");
  whole(plan_pool_growth(true, 24 * GiB, 24 * GiB, 8 * GiB, 140 * GiB), "DBBR's stage is the peak");
  whole(plan_pool_growth(true, 24 * GiB, 10 * GiB, 8 * GiB, -1),
        "the device's free memory is unknown");
  // The peak fits with its margin, the peak and one later buffer do not.
  const long usable = 24 * GiB + engine_memory_margin(24 * GiB) + GiB;
  ASSERT_TRUE(engine_memory_fits(24 * GiB, usable));
  whole(plan_pool_growth(true, 24 * GiB, 10 * GiB, 8 * GiB, usable),
        "no room for a later buffer beside the peak");
  const long roomy = 32 * GiB + engine_memory_margin(32 * GiB);
  EXPECT_TRUE(plan_pool_growth(true, 24 * GiB, 10 * GiB, 8 * GiB, roomy).staged);
  EXPECT_FALSE(plan_pool_growth(true, 24 * GiB, 10 * GiB, 8 * GiB, roomy - 1).staged);
}

TEST(PoolGrowth, NothingToGrow) {
  for (bool staged : {false, true}) {
    const PoolGrowth g = plan_pool_growth(staged, 0, 0, 0, 140 * GiB);
    EXPECT_FALSE(g.staged);
    EXPECT_EQ(g.first_bytes, 0);
    EXPECT_EQ(g.peak_bytes, 0);
  }
}

// The second step: only what the pool lacks of the peak (the pool's free ranges serve the rest).
TEST(PoolGrowth, RestIsWhatThePoolLacks) {
  EXPECT_EQ(pool_rest_bytes(24 * GiB, 10 * GiB), 14 * GiB);
  EXPECT_EQ(pool_rest_bytes(24 * GiB, 0), 24 * GiB);
  EXPECT_EQ(pool_rest_bytes(24 * GiB, 24 * GiB), 0);
  EXPECT_EQ(pool_rest_bytes(24 * GiB, 30 * GiB), 0);
  EXPECT_EQ(pool_rest_bytes(0, 0), 0);
  EXPECT_EQ(pool_rest_bytes(24 * GiB, -1), 24 * GiB);
}

// The second step asks once no free range of the pool can serve it (it is then mapped anew), or
// when the engine needs the memory whatever they hold.
TEST(PoolGrowth, RestIsDueOnceTheFreeRangesCannotServeIt) {
  // DBBR has not drawn on the first step's 10 GiB yet: 14 GiB lacking cannot come from them.
  EXPECT_EQ(pool_rest_due(24 * GiB, 10 * GiB, 10 * GiB, false), 14 * GiB);
  // A peak closer to the first step: 6 GiB lacking would be served by the 10 free, mapping nothing.
  EXPECT_EQ(pool_rest_due(16 * GiB, 10 * GiB, 10 * GiB, false), -1);
  EXPECT_EQ(pool_rest_due(16 * GiB, 10 * GiB, 6 * GiB, false), -1);
  EXPECT_EQ(pool_rest_due(16 * GiB, 10 * GiB, 6 * GiB - 1, false), 6 * GiB);  // DBBR drew on them
  EXPECT_EQ(pool_rest_due(16 * GiB, 10 * GiB, 10 * GiB, true), 6 * GiB);      // DBBR's end
  // DBBR mapped more itself: only what still lacks.
  EXPECT_EQ(pool_rest_due(16 * GiB, 12 * GiB, 1 * GiB, false), 4 * GiB);
  EXPECT_EQ(pool_rest_due(16 * GiB, 16 * GiB, 8 * GiB, false), 0);
  EXPECT_EQ(pool_rest_due(16 * GiB, 16 * GiB, 8 * GiB, true), 0);
}

// The memory plan's numbers: DBBR's stage with the libraries' margin within the peak, below it
// with eigenvectors (the back transformation's stages are larger), and the largest later buffer
// at least Q_d's n x n (every rank multiplies by it) and at most the peak.
TEST(PoolGrowth, MemoryPlanGivesTheStageAndTheLargestLaterBuffer) {
  for (int ranks : {1, 2, 4}) {
    for (bool cyclic : {false, true}) {
      const long n = 8192, b = 32, k = 1024;
      const EngineLayout L = plan_engine_layout(n, ranks, b);
      for (int rank = 0; rank < ranks; ++rank) {
        const EngineMemoryPlan p = plan_engine_memory(L, rank, b, k, true, true, true, false, true,
                                                      ranks > 1, 1, cyclic && ranks > 1);
        const std::string at = std::to_string(ranks) + " ranks, rank " + std::to_string(rank) +
                               (cyclic ? " cyclic" : " blockwise");
        EXPECT_GT(p.libraries, 0) << at;
        EXPECT_EQ(p.dbbr_bytes(), sizeof(double) * (p.dbbr + p.libraries)) << at;
        EXPECT_LT(p.dbbr_bytes(), p.peak_bytes()) << at;
        EXPECT_GE(p.largest_later_buffer, n * n) << at;
        EXPECT_LE(p.largest_later_buffer, p.peak) << at;
      }
    }
  }
  // Eigenvalues only: bulge chasing's working band, the largest buffer after DBBR.
  const EngineLayout L = plan_engine_layout(4096, 2, 32);
  const EngineMemoryPlan p = plan_engine_memory(L, 0, 32, 1024, false);
  EXPECT_GT(p.largest_later_buffer, 4096 * 64);
  EXPECT_LE(p.largest_later_buffer, p.peak);
}

}  // namespace
}  // namespace pipevd
