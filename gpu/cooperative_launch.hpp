// The library's cooperative launches (bulge chasing, real and complex, the fused panel QR) go
// through here, so that a test can make the runtime's refusal of a grid happen on any GPU: where
// fewer SMs are ours than the occupancy query saw (MPS, PIPEVD_GPU_SHARING, other programs on the
// GPU) the runtime refuses a grid that cannot be resident at once, and each caller has its own way
// to go on.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace pipevd::gpu {

// cudaLaunchCooperativeKernel; cudaErrorCooperativeLaunchTooLarge with nothing queued where a
// test's cap on `name` (below) is below grid.x, as the runtime answers.
cudaError_t launch_cooperative(const char* name, const void* kernel, dim3 grid, dim3 block,
                               void** args, std::size_t shared_bytes, cudaStream_t stream);

// For kernels whose blocks loop over their work (the bulge chasings' sweep groups), so that any
// grid gives the same results: launch_cooperative on `grid` blocks or, where that grid is refused,
// on half as many until one fits (at one block the refusal is thrown). Other errors are thrown.
void launch_cooperative_halving(const char* name, const void* kernel, int grid, dim3 block,
                                void** args, std::size_t shared_bytes, cudaStream_t stream);

#ifdef PIPEVD_FAULT_INJECTION
// A test's cap on the grid of the cooperative kernel `name` ("bulge_chasing",
// "bulge_chasing_complex", "fused_panel_qr"): launches of more than max_blocks blocks are refused.
// An empty name or max_blocks <= 0: no cap. Setting a cap clears the record.
struct CooperativeGridCap {
  const char* name = "";
  int max_blocks = 0;
};
void set_cooperative_grid_cap(const CooperativeGridCap& cap);

// What the capped kernel's launches met since the cap was set.
struct CooperativeLaunchRecord {
  int refused = 0;          // grids refused for the cap
  int launched_blocks = 0;  // the last grid the cap let through (0: none)
};
CooperativeLaunchRecord cooperative_launch_record();
#endif

}  // namespace pipevd::gpu
