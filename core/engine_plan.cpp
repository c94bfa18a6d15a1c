#include "core/engine_plan.hpp"

#include <algorithm>
#include <cmath>

#include "core/dbbr.hpp"

namespace pipevd {

EngineLayout plan_engine_layout(long n, int ranks, long b, double slack, long wave_rows) {
  EngineLayout L;
  L.n = n;
  const long be = effective_bandwidth(n, b);
  // Whole units of b columns, the first ranks one more where they do not divide evenly (where DBBR
  // keeps these columns, PIPEVD_DBBR_COLUMNS=blockwise, later ranks already do more of it: every
  // earlier panel updates their columns); the last rank also takes the n mod b remainder.
  const long units = n / be, base = units / ranks, extra = units % ranks;
  L.col_begin.assign(ranks + 1, n);
  for (int e = 0; e < ranks; ++e) L.col_begin[e] = be * (e * base + std::min<long>(e, extra));
  L.col_begin[ranks] = n;
  const std::vector<long> h = back_transformation_heights(n, ranks, slack, wave_rows);
  L.row_begin.assign(ranks + 1, 0);
  for (int e = 0; e < ranks; ++e) L.row_begin[e + 1] = L.row_begin[e] + h[e];
  return L;
}

std::vector<long> back_transformation_heights(long n, int ranks, double slack, long wave_rows) {
  std::vector<long> h(std::max(0, ranks), 0);
  if (ranks <= 0) return h;
  if (wave_rows > 0 && ranks > 1) {
    // The waves the equal share needs; the other ranks fill theirs up to (1 + slack) n / E, or
    // completely where that takes a whole wave off rank 0 (rank 0 also runs the D&C on its GPU,
    // which costs about as much as one wave of BC-back, so it should have a wave fewer).
    const long share = (n + ranks - 1) / ranks;
    const long cap = (share + wave_rows - 1) / wave_rows * wave_rows;
    const long others = ranks - 1;
    long each =
        std::min({cap, static_cast<long>(std::floor((1 + slack) * static_cast<double>(n) / ranks)),
                  n / others});
    each = std::max(each, std::min(share, n / others));  // rank 0 takes no more than the others
    // Only where the others run two waves or more and rank 0 keeps rows: below that a whole wave
    // would move SBR-back's and the final GEMM's rows too, for a D&C far shorter than a wave.
    const long full = std::max(each, std::min(cap, n / others));
    auto waves = [&](long rows) { return (rows + wave_rows - 1) / wave_rows; };
    if (cap >= 2 * wave_rows && n - others * full > 0 &&
        waves(n - others * full) < waves(n - others * each))
      each = full;
    for (int e = 1; e < ranks; ++e) h[e] = each;
    h[0] = n - others * each;
    return h;
  }
  const long first =
      ranks == 1
          ? n
          : std::clamp(static_cast<long>(std::floor((1 - slack) * static_cast<double>(n) / ranks)),
                       0L, n);
  h[0] = first;
  const long rest = n - first, others = ranks - 1;
  for (int e = 1; e < ranks; ++e) h[e] = rest / others + (e - 1 < rest % others ? 1 : 0);
  return h;
}

}  // namespace pipevd
