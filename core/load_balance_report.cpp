#include "core/load_balance_report.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace pipevd {
namespace {

// The GEMM stage's wait for rank 0's D&C is idle time, not work.
double busy(const EngineStats& s) {
  return s.dbbr + s.bulge_chasing + s.sbr_back + s.bc_back + s.gemm - s.dc_wait;
}
double back(const EngineStats& s) { return s.sbr_back + s.bc_back + s.gemm - s.dc_wait; }

double max_over_mean(const std::vector<double>& v) {
  double mx = 0, sum = 0;
  for (double x : v) {
    mx = std::max(mx, x);
    sum += x;
  }
  return sum > 0 ? mx / (sum / static_cast<double>(v.size())) : 1.0;
}

}  // namespace

LoadBalance load_balance_report(MPI_Comm engine, const EngineLayout& layout,
                                const EngineStats& stats) {
  int rank = 0, size = 1;
  MPI_Comm_rank(engine, &rank);
  MPI_Comm_size(engine, &size);
  constexpr int kFields = 8;
  const double mine[kFields] = {stats.dbbr,    stats.bulge_chasing, stats.dc,    stats.sbr_back,
                                stats.bc_back, stats.gemm,          stats.total, stats.dc_wait};
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(size) * kFields : 0);
  MPI_Gather(mine, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, engine);
  LoadBalance lb;
  if (rank != 0) return lb;
  std::vector<EngineStats> st(static_cast<std::size_t>(size));
  std::vector<double> busy_s, back_s;
  std::string text;
  char line[320];
  for (int r = 0; r < size; ++r) {
    const double* f = &all[static_cast<std::size_t>(r) * kFields];
    EngineStats& s = st[static_cast<std::size_t>(r)];
    s.dbbr = f[0];
    s.bulge_chasing = f[1];
    s.dc = f[2];
    s.sbr_back = f[3];
    s.bc_back = f[4];
    s.gemm = f[5];
    s.total = f[6];
    s.dc_wait = f[7];
    busy_s.push_back(busy(s));
    back_s.push_back(back(s));
    std::snprintf(line, sizeof line,
                  "pipevd: load balance rank=%d cols=%ld rows=%ld dbbr=%.4f bc=%.4f dc=%.4f "
                  "sbr_back=%.4f bc_back=%.4f gemm=%.4f (of it waiting for D&C %.4f) busy=%.4f "
                  "engine=%.4f s\n",
                  r, layout.width(r), layout.height(r), s.dbbr, s.bulge_chasing, s.dc, s.sbr_back,
                  s.bc_back, s.gemm, s.dc_wait, busy_s.back(), s.total);
    text += line;
  }
  lb.busy_imbalance = max_over_mean(busy_s);
  lb.back_imbalance = max_over_mean(back_s);
  std::snprintf(line, sizeof line,
                "pipevd: load balance over %d engine ranks: imbalance (max/mean) busy=%.3f "
                "back_transformation=%.3f\n",
                size, lb.busy_imbalance, lb.back_imbalance);
  text += line;
  lb.text = text;
  return lb;
}

}  // namespace pipevd
