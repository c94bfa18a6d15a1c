// EngineBackend::copy_row_runs on the device: several runs of rows of a column-major matrix
// copied into another in one kernel, its table of runs passed as the kernel's parameter (no
// upload), so that DBBR's packing of a rank's rows costs one launch however many runs its
// columns form.
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "core/backend.hpp"

namespace pipevd::gpu {

// The runs one launch carries: its table stays well inside the 4 KiB of kernel parameters.
constexpr int kRowRunsPerLaunch = 128;

// Each run's rows of columns 0:cols of src (doubles, leading dimension lds) into dst (ldd), queued
// on `stream`: one launch per kRowRunsPerLaunch runs (runs of no rows skipped).
void copy_row_runs(cudaStream_t stream, long cols, const std::vector<RowRun>& runs,
                   const double* src, long lds, double* dst, long ldd);

}  // namespace pipevd::gpu
