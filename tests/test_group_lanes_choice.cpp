// The tensor-core BC-back's default lane count (gpu/group_lanes_choice.hpp) against the rounds
// model it minimises, computed here by brute force.
#include <gtest/gtest.h>

#include <string>

#include "gpu/group_lanes_choice.hpp"

namespace pipevd::gpu {
namespace {

// Rounds of whole row blocks: a round holds floor(resident / k) row blocks of k lanes.
double model_time(long row_blocks, long resident, long k) {
  long per_round = resident / k, rounds = 0;
  if (per_round < 1) per_round = 1;
  for (long left = row_blocks; left > 0; left -= per_round) ++rounds;
  return static_cast<double>(rounds) / static_cast<double>(k) * (k > 1 ? 1 + kLaneCost : 1.0);
}

// Within [1, most], within 2% of the best count's time, and no fewer lanes would also be.
TEST(GroupLanesChoice, FewestLanesWithinTwoPercentOfTheBest) {
  for (long resident : {1L, 7L, 132L, 264L})
    for (long most = 1; most <= 8; ++most)
      for (long row_blocks = 1; row_blocks <= 600; ++row_blocks) {
        const long k = group_lanes_for_rounds(row_blocks, resident, most);
        SCOPED_TRACE("R=" + std::to_string(row_blocks) + " S=" + std::to_string(resident) +
                     " most=" + std::to_string(most) + " k=" + std::to_string(k));
        ASSERT_GE(k, 1);
        ASSERT_LE(k, most);
        double best = model_time(row_blocks, resident, 1);
        for (long j = 2; j <= most; ++j) best = std::min(best, model_time(row_blocks, resident, j));
        EXPECT_LE(model_time(row_blocks, resident, k), best * 1.02);
        for (long j = 1; j < k; ++j) EXPECT_GT(model_time(row_blocks, resident, j), best * 1.02);
      }
}

// A row block's lanes that do not all fit the round do not count in it.
TEST(GroupLanesChoice, RoundsCountWholeRowBlocks) {
  EXPECT_EQ(group_lane_rounds(82, 132, 8), 6);  // 16 row blocks a round, not 16.5
  EXPECT_EQ(group_lane_rounds(82, 132, 3), 2);
  EXPECT_EQ(group_lane_rounds(132, 132, 1), 1);
  EXPECT_EQ(group_lane_rounds(133, 132, 1), 2);
  EXPECT_EQ(group_lane_rounds(5, 4, 8), 5);  // more lanes than slots: one row block a round
}

// The heights it is for, on an H100 / H200 (132 SMs, one 128-row block each): n = 49152 on 4 GPUs
// (ranks of 82 and 101 row blocks) and on 2 (192), n = 32768 on 4 (58 to 66) and on 1 (256).
TEST(GroupLanesChoice, RowBlocksOfTheEngine) {
  EXPECT_EQ(group_lanes_for_rounds(82, 132, 8), 3);
  EXPECT_EQ(group_lanes_for_rounds(101, 132, 8), 5);
  EXPECT_EQ(group_lanes_for_rounds(192, 132, 8), 2);
  EXPECT_EQ(group_lanes_for_rounds(58, 132, 8), 2);
  EXPECT_EQ(group_lanes_for_rounds(64, 132, 8), 2);
  EXPECT_EQ(group_lanes_for_rounds(66, 132, 8), 2);
  EXPECT_EQ(group_lanes_for_rounds(256, 132, 8), 1);
  EXPECT_EQ(group_lanes_for_rounds(132, 132, 8), 1);
  EXPECT_EQ(group_lanes_for_rounds(16, 132, 8), 8);
}

TEST(GroupLanesChoice, DegenerateInputsTakeOneLane) {
  EXPECT_EQ(group_lanes_for_rounds(0, 132, 8), 1);
  EXPECT_EQ(group_lanes_for_rounds(10, 0, 8), 1);
  EXPECT_EQ(group_lanes_for_rounds(10, 132, 1), 1);
  EXPECT_EQ(group_lanes_for_rounds(10, 132, 0), 1);
}

}  // namespace
}  // namespace pipevd::gpu
