// gpu::ScopedDevice and the free-memory query built on it: a thread that had no CUDA context is
// left on the scope's device, so that no context is made on device 0 behind its back (an engine
// rank on device r > 0 otherwise made one there on its first call: a context's memory on another
// rank's GPU, and its making on the call's path); a thread that had a context gets its device back.
// The tests run in declaration order in a process of their own: the first needs device 0 untouched.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <thread>

#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "tests/support/primary_context.hpp"

namespace pipevd {
namespace {

using test::primary_context_active;

int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

TEST(GpuScopedDevice, ThreadWithoutContextMakesNoContextOnDevice0) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  ASSERT_FALSE(primary_context_active(0)) << "device 0 was used before this test";
  std::thread worker([] {
    EXPECT_FALSE(gpu::thread_has_context());
    {
      gpu::ScopedDevice guard(1);
      EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
      EXPECT_TRUE(gpu::thread_has_context());
    }
    EXPECT_GT(gpu::device_free_bytes(1), 0);
    int current = -1;
    EXPECT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 1);  // left on the scope's device
  });
  worker.join();
  EXPECT_TRUE(primary_context_active(1));
  EXPECT_FALSE(primary_context_active(0));
  // The same through the query alone, in a thread of its own.
  std::thread query([] { EXPECT_GT(gpu::device_free_bytes(1), 0); });
  query.join();
  EXPECT_FALSE(primary_context_active(0));
}

TEST(GpuScopedDevice, ThreadWithContextGetsItsDeviceBack) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  std::thread worker([] {
    ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
    {
      gpu::ScopedDevice guard(0);
      int inside = -1;
      EXPECT_EQ(cudaGetDevice(&inside), cudaSuccess);
      EXPECT_EQ(inside, 0);
    }
    EXPECT_GT(gpu::device_free_bytes(0), 0);
    int after = -1;
    EXPECT_EQ(cudaGetDevice(&after), cudaSuccess);
    EXPECT_EQ(after, 1);
  });
  worker.join();
}

}  // namespace
}  // namespace pipevd
