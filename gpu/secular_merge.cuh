// The GPU's SecularMerge (core/secular_merge.hpp): a D&C merge's secular roots (one warp per root,
// core/secular_root.hpp's solver with warp sums), Gu-Eisenstat's z-hat (one warp per entry) and
// the merge matrix's columns (one block per column) in device memory, on the backend's stream.
#pragma once
#include <cuda_runtime.h>

#include <memory>

#include "core/secular_merge.hpp"

namespace pipevd::gpu {

// Work queued on `stream` of `device` (the GPU backend's), after the work queued there before.
std::unique_ptr<SecularMerge> make_gpu_secular_merge(int device, cudaStream_t stream);

}  // namespace pipevd::gpu
