// Linked into MPI GoogleTest executables that need a GPU: before the first test, where no CUDA
// device is visible, every rank exits 77 (ctest: skipped), or 1 with PIPEVD_REQUIRE_GPU=1 (a run
// on a GPU machine, where a skip would hide a problem).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

class RequireGpu : public testing::Environment {
 public:
  void SetUp() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) return;
    const char* require = std::getenv("PIPEVD_REQUIRE_GPU");
    const bool required = require && std::strcmp(require, "1") == 0;
    std::printf("no CUDA device (%s)%s\n", cudaGetErrorName(e),
                required ? ", and PIPEVD_REQUIRE_GPU=1" : "; skipped");
    std::fflush(stdout);
    MPI_Finalize();
    std::exit(required ? 1 : 77);
  }
};

testing::Environment* const require_gpu = testing::AddGlobalTestEnvironment(new RequireGpu);

}  // namespace
