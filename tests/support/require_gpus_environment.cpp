// Linked into MPI GoogleTest executables that need N GPUs (N from PIPEVD_TEST_GPUS, default 1),
// in place of require_gpu_environment.cpp: before the first test, where no CUDA device is visible,
// every rank exits 77 (ctest: skipped), or 1 with PIPEVD_REQUIRE_GPU=1; where fewer than N are
// visible (a 4-GPU case on a 2-GPU machine), every rank exits 77 even then: the machine is too
// small, nothing is broken. Every rank of one node sees the same count, so all leave together.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

class RequireGpus : public testing::Environment {
 public:
  void SetUp() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) count = 0;
    const char* want_s = std::getenv("PIPEVD_TEST_GPUS");
    const int want = want_s ? std::max(1, std::atoi(want_s)) : 1;
    // The smallest count over the ranks decides, so that all ranks stop or go on together.
    int least = count;
    MPI_Allreduce(&count, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (least >= want) return;
    const char* require = std::getenv("PIPEVD_REQUIRE_GPU");
    const bool required = least == 0 && require && std::strcmp(require, "1") == 0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::printf("needs %d GPU(s), %d visible (%s)%s\n", want, least, cudaGetErrorName(e),
                  required ? ", and PIPEVD_REQUIRE_GPU=1" : "; skipped");
      std::fflush(stdout);
    }
    MPI_Finalize();
    std::exit(required ? 1 : 77);
  }
};

testing::Environment* const require_gpus = testing::AddGlobalTestEnvironment(new RequireGpus);

}  // namespace
