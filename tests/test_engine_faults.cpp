// An engine failure (core/fault_injection: out of memory, a device or a communication error) on
// any one engine rank is agreed over the caller ranks: under PIPEVD_BACKEND=host every rank returns
// the same INFO (-1002 out of memory, -1003 otherwise), A and W untouched, nothing aborts or hangs;
// the next call, fault cleared, is right. After the set-up, and at the end of each engine stage,
// one engine rank's failure is agreed; at the engine's start only one every engine rank meets (a
// lone rank's failure there, with the others already in the engine's collectives, is the window
// engine_route.cpp documents).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/fault_injection.hpp"
#include "interface/info_codes.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

// Each step's failure on one engine rank (or all, at "engine"; rank 0 alone at "dc", the D&C's
// thread there), of each kind, for an n x n call.
void expect_every_rank_agrees(int n, const std::vector<std::string>& steps) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int nb = 8;
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, 0};
  auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 17); };
  std::vector<double> full(static_cast<std::size_t>(n) * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) full[i + j * n] = entry(i, j);
  const std::vector<double> w_ref = lapack_eigenvalues(n, full);
  // Every caller rank is an engine rank of the host engine (one per GPU on the device).
  std::vector<int> each_rank;
  for (int r = 0; r < world_size(); ++r) each_rank.push_back(r);
  for (const std::string& step : steps)
    for (int rank : step == "engine" ? std::vector<int>{kEveryEngineRank}
                    : step == "dc"   ? std::vector<int>{0}
                                     : each_rank)
      for (auto kind :
           {FaultInjection::OutOfMemory, FaultInjection::Device, FaultInjection::Communication}) {
        SCOPED_TRACE(std::string(step) + " on engine rank " + std::to_string(rank) + " kind " +
                     std::to_string(kind));
        DistributedMatrix a(grid, layout), z(grid, layout);
        a.fill(entry);
        const std::vector<double> a_before = a.local;
        std::vector<double> w(n, -1.5);
        const char jobz = step == "eigenvalues" ? 'N' : 'V';  // that stage is JOBZ = 'N''s
        set_fault_injection({step, rank, kind});
        const int info =
            call_pdsyevd(jobz, 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
        set_fault_injection({});
        const int want =
            kind == FaultInjection::OutOfMemory ? kInfoOutOfMemory : kInfoEngineFailure;
        EXPECT_EQ(info, want);
        EXPECT_TRUE(same_on_every_rank(info)) << "ranks returned different INFO";
        EXPECT_EQ(a.local, a_before) << "A changed";
        for (double v : w) ASSERT_EQ(v, -1.5) << "W changed";
        // The next call, without the fault, is right.
        ASSERT_EQ(
            call_pdsyevd(jobz, 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc),
            0);
        EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
      }
}

TEST(EngineFaults, OneRanksFailureIsEveryRanksInfo) {
  expect_every_rank_agrees(61, {"setup", "engine", "dbbr", "bulge_chasing", "dc", "sbr_back",
                                "bc_back", "gemm", "eigenvalues"});
}

// With the D&C's top merge folded into the final GEMM (PIPEVD_DC_FOLD=on, stage 3 by dc, n past a
// leaf): a failure in the product with Q_pre, or in the GEMM with M after it, as well.
TEST(EngineFaults, FoldedProductFailureIsEveryRanksInfo) {
  const char* fold = std::getenv("PIPEVD_DC_FOLD");
  if (!fold || std::string(fold) != "on") GTEST_SKIP() << "PIPEVD_DC_FOLD=on unset";
  expect_every_rank_agrees(200, {"pre_gemm", "gemm"});
}

}  // namespace
}  // namespace pipevd::test
