// Whether a device's primary CUDA context is active in this process, by the driver API found
// through the runtime (the tests link no driver library, so that they load where no driver is
// installed): the check that a thread made no context on a device behind the engine's back.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace pipevd::test {

inline bool primary_context_active(int ordinal) {
  void* get = nullptr;
  void* state = nullptr;
  cudaDriverEntryPointQueryResult found{};
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuDeviceGet", &get, 2000, cudaEnableDefault, &found),
            cudaSuccess);
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &state, 7000,
                                             cudaEnableDefault, &found),
            cudaSuccess);
  if (!get || !state) return true;
  CUdevice device = 0;
  unsigned flags = 0;
  int active = 0;
  EXPECT_EQ(reinterpret_cast<PFN_cuDeviceGet_v2000>(get)(&device, ordinal), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<PFN_cuDevicePrimaryCtxGetState_v7000>(state)(device, &flags, &active),
            CUDA_SUCCESS);
  return active != 0;
}

}  // namespace pipevd::test
