// How many group lanes (gpu/group_lanes.cuh) a tensor-core BC-back launch gets per row block: host
// arithmetic only, so the CPU tests hold it.
#pragma once
#include <algorithm>

namespace pipevd::gpu {

// BcBackTunables::group_lanes's request for filled rounds (group_lanes_filling); 0 asks for the
// lanes the resident blocks left over by the row blocks allow, k > 0 for k.
constexpr int kFillGroupLanes = -1;

// Lanes in [1, most] for `row_blocks` row blocks on `resident` resident blocks that minimise the
// rounds model's time, ceil(R K / resident) / K of one lane's (the row block's K lanes share its
// groups; the ticket order runs the R K blocks in rounds of `resident`), taking the fewest lanes
// within 5% of the best: every lane adds a step of lag and its progress waits. Where the row
// blocks leave no resident block over (R near or above `resident`), the resident-left-over rule
// gives one lane and a round's idle slots; more lanes fill them: R = 101 on 132 takes 5 (4 rounds
// of 132, 0.8 of one lane's time).
inline long group_lanes_filling(long row_blocks, long resident, long most) {
  if (row_blocks <= 0 || resident <= 0 || most <= 1) return 1;
  auto model = [&](long k) {
    return static_cast<double>((row_blocks * k + resident - 1) / resident) / static_cast<double>(k);
  };
  double best = model(1);
  for (long k = 2; k <= most; ++k) best = std::min(best, model(k));
  for (long k = 1; k <= most; ++k)
    if (model(k) <= best * 1.05) return k;
  return 1;
}

}  // namespace pipevd::gpu
