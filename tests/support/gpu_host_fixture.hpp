// The fixture of the single-GPU tests that check the GPU backend against the host backend (the
// oracle): one of each, both bound to MPI_COMM_SELF.
#pragma once
#include <gtest/gtest.h>
#include <mpi.h>

#include "gpu/gpu_backend.hpp"
#include "host/host_backend.hpp"

namespace pipevd::test {

class GpuAgainstHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_.bind(MPI_COMM_SELF);
    host_.bind(MPI_COMM_SELF);
  }
  gpu::GpuBackend gpu_;
  HostBackend host_;
};

}  // namespace pipevd::test
