// gpu::preload_kernels (gpu/kernel_preload.hpp): every kernel of pipevd's modules loaded on the
// current device, found through one anchor kernel per translation unit. The first call in a fresh
// process finds kernels not yet loaded (CUDA's lazy loading, the default: the test runs under it
// unless CUDA_MODULE_LOADING says otherwise) and loads them all; a second finds every one loaded.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu/kernel_preload.hpp"

namespace pipevd {
namespace {

TEST(GpuKernelPreload, LoadsEveryKernelOfEveryModule) {
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the context
  const gpu::KernelPreload first = gpu::preload_kernels();
  ASSERT_TRUE(first.complete) << "modules " << first.modules << ", kernels " << first.functions;
  // Seventeen translation units with kernels, each its own module.
  EXPECT_EQ(first.modules, 17);
  EXPECT_GT(first.functions, first.modules);
  const char* mode = std::getenv("CUDA_MODULE_LOADING");
  if (!mode || std::string(mode) == "LAZY") EXPECT_LT(first.were_loaded, first.functions);
  const gpu::KernelPreload second = gpu::preload_kernels();
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(second.modules, first.modules);
  EXPECT_EQ(second.functions, first.functions);
  EXPECT_EQ(second.were_loaded, second.functions);
}

}  // namespace
}  // namespace pipevd
