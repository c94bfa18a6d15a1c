// The tensor-core BC-back's lane count under PIPEVD_GPU_BC_LANES=fill (gpu/group_lanes_choice.hpp)
// against the rounds model it minimises, computed here by brute force.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/group_lanes_choice.hpp"

namespace pipevd::gpu {
namespace {

double rounds_per_lane(long row_blocks, long resident, long k) {
  return std::ceil(static_cast<double>(row_blocks * k) / static_cast<double>(resident)) /
         static_cast<double>(k);
}

// Within [1, most], within 5% of the best count's time, and no fewer lanes would also be.
TEST(GroupLanesChoice, FewestLanesWithinFivePercentOfTheBest) {
  for (long resident : {1L, 7L, 132L, 264L})
    for (long most = 1; most <= 8; ++most)
      for (long row_blocks = 1; row_blocks <= 600; ++row_blocks) {
        const long k = group_lanes_filling(row_blocks, resident, most);
        SCOPED_TRACE("R=" + std::to_string(row_blocks) + " S=" + std::to_string(resident) +
                     " most=" + std::to_string(most) + " k=" + std::to_string(k));
        ASSERT_GE(k, 1);
        ASSERT_LE(k, most);
        double best = rounds_per_lane(row_blocks, resident, 1);
        for (long j = 2; j <= most; ++j)
          best = std::min(best, rounds_per_lane(row_blocks, resident, j));
        EXPECT_LE(rounds_per_lane(row_blocks, resident, k), best * 1.05);
        for (long j = 1; j < k; ++j)
          EXPECT_GT(rounds_per_lane(row_blocks, resident, j), best * 1.05);
      }
}

// The cases it is for, on an H100 / H200 (132 SMs, one 128-row block each): n = 49152 on 4 GPUs,
// whose ranks hold 82 and 101 row blocks (one lane under the auto rule, a round 62% and 77% full);
// n = 32768 on 4 GPUs (58 and 66 row blocks: two lanes, as the resident-left-over rule gives); one
// GPU at 32768 (256 row blocks: two full rounds whatever the lanes, so one).
TEST(GroupLanesChoice, RowBlocksOfTheFourGpuEngine) {
  EXPECT_EQ(group_lanes_filling(101, 132, 8), 5);
  EXPECT_EQ(group_lanes_filling(99, 132, 8), 4);
  EXPECT_EQ(group_lanes_filling(58, 132, 8), 2);
  EXPECT_EQ(group_lanes_filling(66, 132, 8), 2);
  EXPECT_EQ(group_lanes_filling(256, 132, 8), 1);
  EXPECT_EQ(group_lanes_filling(132, 132, 8), 1);
}

TEST(GroupLanesChoice, DegenerateInputsTakeOneLane) {
  EXPECT_EQ(group_lanes_filling(0, 132, 8), 1);
  EXPECT_EQ(group_lanes_filling(10, 0, 8), 1);
  EXPECT_EQ(group_lanes_filling(10, 132, 1), 1);
  EXPECT_EQ(group_lanes_filling(10, 132, 0), 1);
}

}  // namespace
}  // namespace pipevd::gpu
