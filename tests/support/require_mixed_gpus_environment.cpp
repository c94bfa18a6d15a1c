// Linked into MPI GoogleTest executables about ranks that see different GPUs (one launched with
// its devices hidden, e.g. CUDA_VISIBLE_DEVICES= in an MPMD launch): before the first test, where
// no rank sees a CUDA device, every rank exits 77 (ctest: skipped), or 1 with
// PIPEVD_REQUIRE_GPU=1 (a run on a GPU machine, where a skip would hide a problem); where every
// rank sees one, every rank exits 1: the launch did not hide the devices from any rank, so the
// test would not test what it says.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

class RequireMixedGpus : public testing::Environment {
 public:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    int most = count, least = count;
    MPI_Allreduce(&count, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&count, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (most > 0 && least == 0) return;
    const char* require = std::getenv("PIPEVD_REQUIRE_GPU");
    const bool required = require && std::strcmp(require, "1") == 0;
    const bool fail = most > 0 || required;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      if (most > 0)
        std::printf("every rank sees a CUDA device: the launch hid none from any rank\n");
      else
        std::printf("no rank sees a CUDA device%s\n",
                    required ? ", and PIPEVD_REQUIRE_GPU=1" : "; skipped");
      std::fflush(stdout);
    }
    MPI_Finalize();
    std::exit(fail ? 1 : 77);
  }
};

testing::Environment* const require_mixed_gpus =
    testing::AddGlobalTestEnvironment(new RequireMixedGpus);

}  // namespace
