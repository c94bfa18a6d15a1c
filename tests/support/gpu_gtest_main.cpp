// GoogleTest main for GPU tests: exits 77, which ctest reports as skipped, where no CUDA device is
// visible, so a machine without a GPU neither passes nor fails them. PIPEVD_REQUIRE_GPU=1 makes a
// missing device a failure instead (for runs on a GPU machine, where a skip would hide a problem).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    const char* require = std::getenv("PIPEVD_REQUIRE_GPU");
    const bool required = require && std::strcmp(require, "1") == 0;
    std::printf("%s: no CUDA device (%s: %s)%s\n", argv[0], cudaGetErrorName(e),
                cudaGetErrorString(e), required ? ", and PIPEVD_REQUIRE_GPU=1" : "; skipped");
    return required ? 1 : 77;
  }
  return RUN_ALL_TESTS();
}
