// Engine ranks by GPU: which caller ranks drive which GPUs (redistribute/gpu_assignment), as a pure
// rule and through engine_comm_for_gpus on MPI ranks that pretend to see GPUs (made-up UUIDs),
// so the node's GPU shapes of a cluster are checked without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "redistribute/engine_comm.hpp"
#include "redistribute/gpu_assignment.hpp"
#include "tests/redistribute_support.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd::test {
namespace {

GpuUuid gpu(int k) {
  GpuUuid u{};
  u[0] = 0xab;
  u[15] = static_cast<unsigned char>(k);
  return u;
}

std::vector<GpuUuid> gpus(int first, int count) {
  std::vector<GpuUuid> v;
  for (int k = first; k < first + count; ++k) v.push_back(gpu(k));
  return v;
}

// The GPUs driven (by UUID), each at most once, and how many engine ranks there are.
std::multiset<int> driven(const std::vector<NodeMember>& m, const std::vector<int>& device) {
  std::multiset<int> out;
  for (size_t i = 0; i < m.size(); ++i)
    if (device[i] >= 0) out.insert(m[i].visible.at(device[i])[15]);
  return out;
}

std::vector<NodeMember> all_see(int ranks, int first_rank, int g) {
  std::vector<NodeMember> m(ranks);
  for (int r = 0; r < ranks; ++r) m[r] = {first_rank + r, gpus(0, g)};
  return m;
}

TEST(GpuAssignment, EveryRankSeesEveryGpuOneEngineRankPerGpu) {
  for (int g : {1, 2, 4, 8})
    for (int ranks : {1, 3, 4, 16}) {
      const auto m = all_see(ranks, 0, g);
      const auto d = assign_engine_gpus(m, {ranks, 0, false});
      const auto used = driven(m, d);
      EXPECT_EQ(used.size(), static_cast<size_t>(std::min(g, ranks))) << g << " " << ranks;
      EXPECT_EQ(std::set<int>(used.begin(), used.end()).size(), used.size());
    }
}

TEST(GpuAssignment, EachRankSeesItsOwnGpuEveryGpuUsed) {
  // Slurm --gpus-per-task=1: rank r sees GPU r only; 16 ranks on 4 GPUs: rank r sees GPU r % 4.
  for (int ranks : {4, 16}) {
    std::vector<NodeMember> m(ranks);
    for (int r = 0; r < ranks; ++r) m[r] = {r, {gpu(r % 4)}};
    const auto d = assign_engine_gpus(m, {ranks, 0, false});
    EXPECT_EQ(driven(m, d), (std::multiset<int>{0, 1, 2, 3}));
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(d[r] >= 0, r < 4) << r;
  }
}

TEST(GpuAssignment, TwoGridsOfConsecutiveRanksTakeDisjointGpus) {
  // 16 ranks on a node of 4 GPUs, two k-point groups of 8 consecutive ranks each.
  const auto a = all_see(8, 0, 4), b = all_see(8, 8, 4);
  const auto used_a = driven(a, assign_engine_gpus(a, {16, 0, false}));
  const auto used_b = driven(b, assign_engine_gpus(b, {16, 0, false}));
  EXPECT_EQ(used_a, (std::multiset<int>{0, 1}));
  EXPECT_EQ(used_b, (std::multiset<int>{2, 3}));
  // Four groups of 4 ranks on 4 GPUs: one GPU each.
  for (int k = 0; k < 4; ++k) {
    const auto m = all_see(4, 4 * k, 4);
    EXPECT_EQ(driven(m, assign_engine_gpus(m, {16, 0, false})), (std::multiset<int>{k}));
  }
}

TEST(GpuAssignment, CapAndSharing) {
  const auto m = all_see(8, 0, 4);
  const auto capped = assign_engine_gpus(m, {8, 2, false});
  EXPECT_EQ(driven(m, capped).size(), 2u);
  EXPECT_GE(capped[0], 0);  // the lowest-ranked keep theirs
  // Sharing: the first max_engines ranks, on GPU rank mod |visible|.
  const auto shared = assign_engine_gpus(all_see(4, 0, 1), {4, 2, true});
  EXPECT_EQ(shared, (std::vector<int>{0, 0, -1, -1}));
  // A rank that sees no GPU is never an engine rank.
  std::vector<NodeMember> blind{{0, {}}, {1, gpus(0, 1)}};
  EXPECT_EQ(assign_engine_gpus(blind, {2, 0, false}), (std::vector<int>{-1, 0}));
}

TEST(GpuAssignment, LauncherCountBelowTheRanksSeenMeansTheGridIsTheNode) {
  const auto m = all_see(4, 0, 4);
  EXPECT_EQ(driven(m, assign_engine_gpus(m, {2, 0, false})).size(), 4u);
}

// Through MPI: each rank pretends to see its own GPU (rank r sees GPU r), every GPU gets an
// engine rank, and EngineComm::device is the ordinal (0) of that GPU.
TEST(EngineCommForGpus, OwnGpuPerRankGivesAnEngineRankEach) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  BlacsGrid grid(1, size, 'R');
  const EngineComm& ec = engine_comm_for_gpus(grid.ictxt, {gpu(rank)}, 0, false);
  EXPECT_EQ(ec.engine_ranks(), size);
  EXPECT_EQ(ec.device, 0);
  EXPECT_EQ(&engine_comm_for_gpus(grid.ictxt, {gpu(rank)}, 0, false), &ec);  // cached
}

// Every rank sees two GPUs: two engine ranks, on different ordinals, whoever they are. (A cap of
// 4, above the GPU count, keeps this apart from the previous test's cache entry: a process's
// visible GPUs are not part of the key, since they do not change outside tests.)
TEST(EngineCommForGpus, SharedVisibilityOneEngineRankPerGpu) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  BlacsGrid grid(size, 1, 'C');
  const EngineComm& ec = engine_comm_for_gpus(grid.ictxt, gpus(0, 2), 4, false);
  EXPECT_EQ(ec.engine_ranks(), std::min(size, 2));
  int mask = ec.device >= 0 ? 1 << ec.device : 0;
  MPI_Allreduce(MPI_IN_PLACE, &mask, 1, MPI_INT, MPI_SUM, ec.caller);
  EXPECT_EQ(mask, size >= 2 ? 3 : 1);  // a sum of distinct bits: each GPU driven once
}

// Sharing (PIPEVD_GPU_SHARING): every rank sees the same one GPU and drives it, and each knows how
// many engine ranks of its node share it (they split its free memory).
TEST(EngineCommForGpus, SharedGpuCountsItsEngineRanks) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  BlacsGrid grid(1, size, 'R');
  const EngineComm& ec = engine_comm_for_gpus(grid.ictxt, gpus(0, 1), 0, true);
  EXPECT_EQ(ec.engine_ranks(), size);
  EXPECT_EQ(ec.device, 0);
  EXPECT_EQ(ec.device_sharers, size);
  // Without sharing, one engine rank drives it alone.
  const EngineComm& alone = engine_comm_for_gpus(grid.ictxt, gpus(0, 1), 16, false);
  EXPECT_EQ(alone.engine_ranks(), 1);
  if (alone.engine_rank >= 0) EXPECT_EQ(alone.device_sharers, 1);
}

// Two grids on one node (the ranks' halves, k-point-group style) calling at once, every rank seeing
// the same 4 GPUs: no GPU driven by both grids, and every GPU driven where each grid has 2 ranks.
TEST(EngineCommForGpus, TwoGridsOnOneNodeTakeDisjointGpus) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size < 2 || size % 2) GTEST_SKIP() << "needs an even number of ranks";
  std::vector<int> low(size / 2), high(size / 2);
  for (int r = 0; r < size / 2; ++r) low[r] = r, high[r] = size / 2 + r;
  MappedGrid a(size / 2, 1, low), b(size / 2, 1, high);
  const MappedGrid& mine = a.in_grid() ? a : b;
  const EngineComm& ec = engine_comm_for_gpus(mine.ictxt, gpus(0, 4), 8, false);
  int mask = ec.device >= 0 ? 1 << ec.device : 0, total = 0, overlap = 0;
  MPI_Allreduce(&mask, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mask, &overlap, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
  EXPECT_EQ(total, overlap) << "a GPU driven by two engine ranks";
  if (size == 4) EXPECT_EQ(total, 15);
}

}  // namespace
}  // namespace pipevd::test
