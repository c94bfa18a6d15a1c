// How many group lanes (gpu/group_lanes.cuh) a tensor-core BC-back launch gets per row block by
// default: host arithmetic only, so the CPU tests hold it.
#pragma once
#include <algorithm>

namespace pipevd::gpu {

// Rounds of resident blocks that `row_blocks` row blocks of `lanes` lanes take. Only whole row
// blocks count: a row block whose lanes do not all fit a round stalls its running lanes (group g
// waits for group g - 1, which a missing lane holds) until a whole row block's slots free, so a
// round runs floor(resident / lanes) row blocks.
inline long group_lane_rounds(long row_blocks, long resident, long lanes) {
  const long per_round = std::max(1L, resident / lanes);
  return (row_blocks + per_round - 1) / per_round;
}

// Lanes in [1, most] for `row_blocks` row blocks on `resident` resident blocks that minimise the
// time in units of one lane's row block, group_lane_rounds / lanes, where more than one lane costs
// kLaneCost more (each lane starts a step behind the one before and waits on its progress): the
// fewest lanes within 2% of the best. One lane where the row blocks fill whole rounds; for
// 82 row blocks on 132 SMs 3 (2 rounds of 44 row blocks x 3 lanes), for 101 5, for 192 2.
inline constexpr double kLaneCost = 0.06;
inline long group_lanes_for_rounds(long row_blocks, long resident, long most) {
  if (row_blocks <= 0 || resident <= 0 || most <= 1) return 1;
  auto time = [&](long k) {
    return static_cast<double>(group_lane_rounds(row_blocks, resident, k)) /
           static_cast<double>(k) * (k > 1 ? 1 + kLaneCost : 1.0);
  };
  double best = time(1);
  for (long k = 2; k <= most; ++k) best = std::min(best, time(k));
  for (long k = 1; k <= most; ++k)
    if (time(k) <= best * 1.02) return k;
  return 1;
}

}  // namespace pipevd::gpu
