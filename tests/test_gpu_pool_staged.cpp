// PIPEVD_POOL_GROWTH=staged on 1 and 2 GPUs (PIPEVD_BACKEND=gpu, one engine rank per GPU, the
// two-stage engine): two PDSYEVD calls in a row, each with eigenvalues equal to ScaLAPACK's and
// residual and orthogonality under its threshold; on each engine rank the device's preparation
// grew the pool in two steps, the second (beside DBBR) mapping only what the pool lacked of the
// plan's peak, so that the pool's mapped bytes after it are at most the peak (or what the pool held
// before the growth, the memory a previous call left) plus one mapping granule, and at least the
// first step's.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "interface/device_preparation.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

// The device's mapping granularity (the driver's minimum for device memory), 2 MiB where it cannot
// be asked.
long mapping_granule(int device) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuMemGetAllocationGranularity", &fn, 10020,
                                       cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return 2L << 20;
  }
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  std::size_t granule = 0;
  const auto get = reinterpret_cast<PFN_cuMemGetAllocationGranularity_v10020>(fn);
  if (get(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || granule == 0)
    return 2L << 20;
  return static_cast<long>(granule);
}

TEST(GpuPoolStaged, TwoCallsAccurateAndThePoolWithinThePeak) {
  // Large enough that the plan's peak exceeds what a call leaves in the pool for the next one.
  const int n = 4099;
  const GridShape shape = grid_shape('s');
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  ASSERT_TRUE(grid.in_grid());
  const BlockCyclicLayout layout{n, n, 64, 64, 0, 0, 2};  // LLD > n: not the direct path
  DistributedMatrix a(grid, layout), a_copy(grid, layout), z(grid, layout);
  const auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 89); };
  std::vector<double> w(n), w_ref(n);
  a_copy.fill(entry);
  ASSERT_EQ(call_scalapack_pdsyevd('V', 'L', n, a_copy.data(), 1, 1, a_copy.desc, w_ref.data(),
                                   z.data(), 1, 1, z.desc),
            0);
  for (int call = 1; call <= 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    a.fill(entry);
    a_copy.fill(entry);
    ASSERT_EQ(call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc),
              0);
    EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
    EXPECT_LT(distributed_residual(n, a_copy.data(), z.data(), z.desc, w), kScalapackThreshold);
    EXPECT_LT(distributed_orthogonality(n, z.data(), z.desc), kScalapackThreshold);

    // Every caller rank is an engine rank here (one per GPU).
    const PoolGrowthRecord g = last_pool_growth();
    ASSERT_TRUE(g.made) << "no preparation grew the pool";
    EXPECT_TRUE(g.growth.staged) << "whole: " << g.growth.whole_because;
    EXPECT_LT(g.growth.first_bytes, g.growth.peak_bytes);
    const long granule = mapping_granule(0);  // the GPUs of one machine are alike
    EXPECT_LE(g.reserved_after, std::max(g.growth.peak_bytes, g.reserved_before) + granule)
        << "peak " << g.growth.peak_bytes << ", before " << g.reserved_before << ", granule "
        << granule;
    EXPECT_GE(g.reserved_after, g.growth.first_bytes - granule);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace pipevd::test
