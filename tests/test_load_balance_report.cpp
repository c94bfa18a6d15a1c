// The load-balance report (core/load_balance_report): gathered per-rank stage times, a line per
// rank, and the imbalance max/mean of the busy time and of the back transformation.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "core/engine_plan.hpp"
#include "core/load_balance_report.hpp"

namespace pipevd {
namespace {

TEST(LoadBalanceReport, ImbalanceIsMaxOverMeanOfTheGatheredTimes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const EngineLayout layout = plan_engine_layout(1000, size, 32);
  // Rank r: DBBR r + 1 s, back transformation (SBR-back + BC-back + GEMM) 2 (r + 1) s, D&C 9 s on
  // rank 0 only (not busy time of the main thread).
  EngineStats st;
  st.dbbr = rank + 1.0;
  st.sbr_back = 0.5 * (rank + 1);
  st.bc_back = 1.0 * (rank + 1);
  st.gemm = 0.5 * (rank + 1);
  st.dc = rank == 0 ? 9.0 : 0.0;
  st.total = 10;
  st.gemm += 4.0;  // and 4 s of it waiting for D&C: not busy
  st.dc_wait = 4.0;
  const LoadBalance lb = load_balance_report(MPI_COMM_WORLD, layout, st);
  if (rank != 0) {
    EXPECT_TRUE(lb.text.empty());
    return;
  }
  // busy_r = 3 (r + 1): max / mean = size / ((size + 1) / 2); the same for the back part.
  const double want = size / ((size + 1) / 2.0);
  EXPECT_NEAR(lb.busy_imbalance, want, 1e-12);
  EXPECT_NEAR(lb.back_imbalance, want, 1e-12);
  for (int r = 0; r < size; ++r)
    EXPECT_NE(lb.text.find("load balance rank=" + std::to_string(r) +
                           " cols=" + std::to_string(layout.width(r)) +
                           " rows=" + std::to_string(layout.height(r))),
              std::string::npos)
        << lb.text;
  EXPECT_NE(lb.text.find("over " + std::to_string(size) + " engine ranks"), std::string::npos);
}

}  // namespace
}  // namespace pipevd
