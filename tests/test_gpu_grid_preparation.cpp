// PIPEVD_PREPARE_AT_GRID=1 on 4 GPUs (PIPEVD_BACKEND=gpu, one engine rank per GPU): creating a
// 2 x 2 grid begins the engine's NCCL communicator on every engine rank (the cache holds it); the
// first PDSYEVD on that grid (n = 6001, the two-stage engine) takes that communicator instead of
// beginning its own, makes none, and is accurate (residual and orthogonality under ScaLAPACK's
// threshold); pipevd_release() destroys it.
#include <gtest/gtest.h>

#include <vector>

#include "core/backend_factory.hpp"
#include "include/pipevd.h"
#include "interface/grid_preparation.hpp"
#include "interface/policy.hpp"
#include "interface/route_engine_comm.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

TEST(GpuGridPreparation, FirstCallTakesTheCommunicatorBegunAtTheGrid) {
  ASSERT_EQ(world_size(), 4);
  const Policy& policy = process_policy().policy;
  ASSERT_TRUE(policy.prepare_at_grid);
  const long made_before = gpu_nccl_communicators_made();
  const BlacsGrid grid(2, 2);
  ASSERT_TRUE(grid.in_grid());
  EXPECT_EQ(grid_preparation_counts().nccl_begun, 1);
  // The communicators the route takes (cached by the grid's preparation: nothing collective here).
  const EngineComm& ec = route_engine_comm(grid.ictxt, policy, true, gpu_visible_devices());
  ASSERT_EQ(ec.engine_ranks(), 4);
  ASSERT_GE(ec.engine_rank, 0);
  EXPECT_TRUE(nccl_begun_at_grid(ec));
  EXPECT_TRUE(gpu_nccl_held(ec.engine, ec.device));

  const int n = 6001;
  const BlockCyclicLayout layout{n, n, 64, 64, 0, 0, 0};
  DistributedMatrix a(grid, layout), a_copy(grid, layout), z(grid, layout);
  const auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 83); };
  a.fill(entry);
  a_copy.fill(entry);
  std::vector<double> w(n);
  ASSERT_EQ(call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc), 0);
  EXPECT_STREQ(pipevd_last_path(), "two_stage");
  EXPECT_FALSE(nccl_begun_at_grid(ec)) << "the call did not take the grid's communicator";
  EXPECT_EQ(gpu_nccl_communicators_made() - made_before, 1) << "the call made a communicator";
  EXPECT_LT(distributed_residual(n, a_copy.data(), z.data(), z.desc, w), kScalapackThreshold);
  EXPECT_LT(distributed_orthogonality(n, z.data(), z.desc), kScalapackThreshold);

  pipevd_release();
  EXPECT_FALSE(gpu_nccl_held(ec.engine, ec.device));
}

}  // namespace
}  // namespace pipevd::test
