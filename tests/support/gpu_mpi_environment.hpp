// MPI for the engine's collectives in single-process GPU tests (one rank, MPI_THREAD_MULTIPLE for
// the D&C thread's companion backend): a GoogleTest environment, set up after the GPU test main
// found a device. Include it in one file of the test executable.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>

namespace pipevd::testing_support {

class MpiEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    int done = 0;
    MPI_Initialized(&done);
    if (!done) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    }
  }
  void TearDown() override {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
};

inline testing::Environment* const mpi_environment =
    testing::AddGlobalTestEnvironment(new MpiEnvironment);

}  // namespace pipevd::testing_support
