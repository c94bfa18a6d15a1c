// BLACS' grid creation through pipevd (interface/grid_interposition.cpp) with
// PIPEVD_PREPARE_AT_GRID on or off, through the C and the Fortran interfaces: every grid creation
// is interposed and its gate agreed once (not again for gridinit's own gridmap, not on processes
// outside the grid), whatever the setting; the grid's processes agree on a preparation where the
// setting is on on every one of them, never where it is off on any (an MPMD launch whose ranks
// differ: no hang), and never for a grid ScaLAPACK makes inside a pipevd call (PDGEMR2D in a
// forwarded call), nor where another thread of one of them is inside a call (it does not wait for
// that call); a PDSYEVD call on the grid afterwards still equals ScaLAPACK's. Without a GPU the
// agreement finds no GPU engine and begins nothing: the NCCL part is test_gpu_grid_preparation's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <future>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "base/scalapack_api.hpp"
#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "include/pipevd.h"
#include "interface/call_scope.hpp"
#include "interface/grid_preparation.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

long agreed() { return grid_preparation_counts().agreed; }
long interposed() { return grid_preparation_counts().interposed; }

// Preparations per grid of the world ranks below `ranks`: 1 where each of them has the setting on
// (their environments may differ), else 0. Collective over the world.
long expected_per_grid(int ranks = world_size()) {
  int on = world_rank() >= ranks || grid_preparation_enabled() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &on, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return on;
}

class GridCreation : public testing::TestWithParam<BlacsEntry> {};

TEST_P(GridCreation, GridinitIsPreparedOnceWhereOn) {
  const GridShape shape = squarest_grid(world_size());
  const long expected = expected_per_grid();
  const long before = agreed(), interposed_before = interposed();
  const BlacsGrid grid(shape.nprow, shape.npcol, 'R', GetParam());
  ASSERT_TRUE(grid.in_grid());
  EXPECT_EQ(interposed() - interposed_before, 1);
  EXPECT_EQ(agreed() - before, expected);
  EXPECT_EQ(grid_preparation_counts().nccl_begun, 0);  // no GPU engine here
}

TEST_P(GridCreation, GridmapPreparesOnlyTheGridsProcesses) {
  // Every rank but the last (on one rank, that rank) in a 1 x k grid: the last is outside.
  const int k = world_size() > 1 ? world_size() - 1 : 1;
  std::vector<int> map(k);
  std::iota(map.begin(), map.end(), 0);
  const long expected = expected_per_grid(k);
  const long before = agreed(), interposed_before = interposed();
  const BlacsGrid grid(1, k, map, GetParam());
  const bool inside = world_rank() < k;
  ASSERT_EQ(grid.in_grid(), inside);
  EXPECT_EQ(interposed() - interposed_before, inside ? 1 : 0);
  EXPECT_EQ(agreed() - before, inside ? expected : 0);
}

TEST_P(GridCreation, PdsyevdAfterwardsEqualsScalapack) {
  const GridShape shape = squarest_grid(world_size());
  const BlacsGrid grid(shape.nprow, shape.npcol, 'C', GetParam());
  const int n = 157;
  const BlockCyclicLayout layout{n, n, 16, 16, 0, 0, 2};
  DistributedMatrix a(grid, layout), a_ref(grid, layout), z(grid, layout), z_ref(grid, layout);
  const auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 71); };
  a.fill(entry);
  a_ref.fill(entry);
  std::vector<double> w(n), w_ref(n), full(static_cast<std::size_t>(n) * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) full[i + j * n] = entry(i, j);
  ASSERT_EQ(call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc), 0);
  EXPECT_STRNE(pipevd_last_path(), "");  // computed by pipevd's route (engine or forward)
  ASSERT_EQ(call_scalapack_pdsyevd('V', 'L', n, a_ref.data(), 1, 1, a_ref.desc, w_ref.data(),
                                   z_ref.data(), 1, 1, z_ref.desc),
            0);
  EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
  const std::vector<double> zf = z.gather(grid);
  EXPECT_LT(residual(n, full, zf, w), kScalapackThreshold);
  EXPECT_LT(orthogonality(n, zf), kScalapackThreshold);
}

INSTANTIATE_TEST_SUITE_P(Entries, GridCreation, testing::Values(BlacsEntry::C, BlacsEntry::Fortran),
                         [](const testing::TestParamInfo<BlacsEntry>& info) {
                           return std::string(info.param == BlacsEntry::C ? "C" : "Fortran");
                         });

// A grid created while another thread of rank 0 is inside a pipevd call (its hold on the process
// taken here by a thread of the test): rank 0 cannot hold off its calls, so no process prepares,
// and the creation does not wait for that call (which, in an application, may itself wait for the
// grid's other processes).
TEST(GridCreationBesideACall, IsPreparedNowhere) {
  std::promise<void> held, created;
  std::thread call;
  if (world_rank() == 0)
    call = std::thread([&held, done = created.get_future()] {
      const std::lock_guard<std::mutex> lock(one_call_at_a_time());
      held.set_value();
      done.wait();
    });
  else
    held.set_value();
  held.get_future().wait();
  const GridShape shape = squarest_grid(world_size());
  const long before = agreed(), interposed_before = interposed();
  {
    const BlacsGrid grid(shape.nprow, shape.npcol);
    created.set_value();
    EXPECT_EQ(interposed() - interposed_before, 1);
    EXPECT_EQ(agreed() - before, 0);
  }
  if (call.joinable()) call.join();
}

// PDGEMR2D makes a grid of its own where its context has several process rows (a P x 1 grid, P >=
// 2): prepared for where the code calls it, not inside a pipevd call (PIPEVD_BACKEND=scalapack: a
// submatrix is forwarded through a PDGEMR2D copy).
TEST(GridCreationInsideACall, IsNotPrepared) {
  ASSERT_GE(world_size(), 2) << "PDGEMR2D makes no grid on one process";
  const GridShape shape = grid_shape('c');
  const BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const int n = 64, nb = 8, m = n + nb, one = 1, sub = nb + 1;  // sub(A) at a block's start
  const BlockCyclicLayout layout{m, m, nb, nb, 0, 0, 2};
  DistributedMatrix a(grid, layout), b(grid, layout), z(grid, layout);
  a.fill([](long i, long j) { return random_symmetric_entry(i, j, 73); });

  const long expected = expected_per_grid();
  const long before_copy = agreed(), interposed_before_copy = interposed();
  pdgemr2d_(&m, &m, a.data(), &one, &one, a.desc, b.data(), &one, &one, b.desc, &grid.ictxt);
  EXPECT_EQ(interposed() - interposed_before_copy, 1) << "the code's own PDGEMR2D grid";
  EXPECT_EQ(agreed() - before_copy, expected) << "the code's own PDGEMR2D grid";

  const long before_call = agreed(), interposed_before_call = interposed();
  std::vector<double> w(n);
  ASSERT_EQ(
      call_pdsyevd('V', 'L', n, a.data(), sub, sub, a.desc, w.data(), z.data(), sub, sub, z.desc),
      0);
  ASSERT_STREQ(pipevd_last_path(), "scalapack");
  EXPECT_EQ(interposed() - interposed_before_call, 0) << "a grid made inside the call was gated";
  EXPECT_EQ(agreed() - before_call, 0) << "a grid made inside the call was prepared";
}

}  // namespace
}  // namespace pipevd::test
