// The kept host buffer pinned on the GPU (gpu/kept_memory_pinning.hpp through
// redistribute/kept_buffer.hpp): a GPU backend installs the pinning; a buffer asked to is
// registered after its release, so that CUDA no longer sees its slot as pageable and the backend's
// copies to and from it go direct; the data make the round trip through the device unchanged, and
// releasing the kept memory unregisters it first. Also: the pinning thread makes no context on a
// device other than the backend's (it runs on device 1 where there are two).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/backend_factory.hpp"
#include "gpu/pageable_copy.hpp"
#include "redistribute/kept_buffer.hpp"
#include "tests/support/primary_context.hpp"

namespace pipevd {
namespace {

constexpr long kCount = 6L << 20;  // 48 MiB of doubles: a slot of the kept memory

using test::primary_context_active;

TEST(GpuKeptPinning, SlotRegisteredAfterReleaseCopiesDirectAndUnregisteredAtItsFree) {
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  const int device = devices > 1 ? 1 : 0;
  ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
  release_kept_buffers();
  const bool device0_before = primary_context_active(0);
  std::unique_ptr<EngineBackend> be = make_gpu_backend(device, GpuBackendSettings{});

  KeptBuffer a(kCount, KeptFor::DeviceCopies);
  double* const p = a.data();
  for (long i = 0; i < kCount; ++i) p[i] = 0.25 * static_cast<double>(i % 1000003);
  EXPECT_TRUE(gpu::is_pageable(p));
  a.release();
  wait_for_kept_pinning();
  ASSERT_GE(kept_pinned_bytes(), kCount * sizeof(double));
  if (device != 0 && !device0_before) EXPECT_FALSE(primary_context_active(0));

  KeptBuffer again(kCount);  // the next call's: the same slot, now registered
  ASSERT_EQ(again.data(), p);
  EXPECT_FALSE(gpu::is_pageable(p));
  DeviceBuffer d(*be, kCount);
  be->copy_to_device(p, d.get(), kCount);
  std::vector<double> expected(p, p + kCount);
  for (long i = 0; i < kCount; ++i) p[i] = -1.0;
  be->copy_to_host(d.get(), p, kCount);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), p));
  again.release();
  d.reset();
  be.reset();
  release_kept_buffers();
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  EXPECT_EQ(kept_bytes(), 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace pipevd
