// What a call's end leaves in pipevd's device pool (gpu/gpu_context.hpp kPoolKeptBetweenCalls):
// a small call's memory stays for the next call, within the cap; a large one's goes back;
// pipevd_release's trim_device_pools hands back the rest; and the free bytes the plan checks
// count the pool's free memory with the device's.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/backend_factory.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd {
namespace {

std::uint64_t pool_attribute(cudaMemPoolAttr attr) {
  std::uint64_t v = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(gpu::GpuContext::for_device(0).pool(), attr, &v), cudaSuccess);
  return v;
}
std::uint64_t reserved() { return pool_attribute(cudaMemPoolAttrReservedMemCurrent); }

// A call's backend that takes `count` doubles in buffers of `piece` doubles, then goes.
void call_taking(long count, long piece) {
  std::unique_ptr<EngineBackend> be = make_gpu_backend(0, GpuBackendSettings{});
  std::vector<DeviceBuffer> held;
  for (long taken = 0; taken < count; taken += piece) held.emplace_back(*be, piece);
  be->synchronize();
  held.clear();
  be.reset();
}

TEST(GpuPoolKept, SmallCallsMemoryStaysLargeCallsGoesBack) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  gpu::trim_device_pools();
  ASSERT_EQ(reserved(), 0u);
  call_taking(6L << 20, 1L << 20);  // 48 MiB in 8 MiB buffers: a one-stage call at n ~ 1000
  const std::uint64_t small = reserved();
  EXPECT_GT(small, 0u) << "kept for the next call";
  EXPECT_LE(small, gpu::kPoolKeptBetweenCalls);
  EXPECT_EQ(pool_attribute(cudaMemPoolAttrUsedMemCurrent), 0u);
  // The plan's free bytes: the device's and the pool's free ones (nothing else runs here).
  std::size_t free_b = 0, total_b = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
  EXPECT_EQ(gpu::pool_free_bytes(0), static_cast<long>(small));
  const long planned = gpu::device_free_bytes(0);
  EXPECT_GE(planned, static_cast<long>(free_b + small) - (64L << 20));
  EXPECT_LE(planned, static_cast<long>(free_b + small) + (64L << 20));
  call_taking(6L << 20, 1L << 20);  // the same again: no more reserved
  EXPECT_EQ(reserved(), small);
  call_taking(512L << 20, 512L << 20);  // 4 GiB in one piece: back to the driver
  EXPECT_LE(reserved(), gpu::kPoolKeptBetweenCalls);
  gpu::trim_device_pools();  // pipevd_release's
  EXPECT_EQ(reserved(), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace pipevd
