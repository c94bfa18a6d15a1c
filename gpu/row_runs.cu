// Several row runs copied in one kernel (see row_runs.cuh). Each run is one row of thread blocks
// (blockIdx.y), whose threads stride over its rows x cols entries with the rows fastest, so that
// reads and writes run down the columns.
#include <algorithm>

#include "base/cuda_check.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/row_runs.cuh"

namespace pipevd::gpu {
namespace {

constexpr int kThreads = 256;

struct RunTable {
  long src_row[kRowRunsPerLaunch], dst_row[kRowRunsPerLaunch], rows[kRowRunsPerLaunch];
};

__global__ void copy_row_runs_kernel(RunTable table, long cols, const double* src, long lds,
                                     double* dst, long ldd) {
  const int r = blockIdx.y;
  const long rows = table.rows[r], total = rows * cols;
  const double* s = src + table.src_row[r];
  double* d = dst + table.dst_row[r];
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / rows, i = k - j * rows;
    d[i + j * ldd] = s[i + j * lds];
  }
}

// The runs [first, last) with rows into one launch.
void launch(cudaStream_t stream, long cols, const std::vector<RowRun>& runs, std::size_t first,
            std::size_t last, const double* src, long lds, double* dst, long ldd) {
  RunTable table{};
  int count = 0;
  long most = 0;
  for (std::size_t i = first; i < last; ++i) {
    if (runs[i].rows <= 0) continue;
    table.src_row[count] = runs[i].src_row;
    table.dst_row[count] = runs[i].dst_row;
    table.rows[count] = runs[i].rows;
    most = std::max(most, runs[i].rows * cols);
    ++count;
  }
  if (count == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min(1024L, (most + kThreads - 1) / kThreads));
  copy_row_runs_kernel<<<dim3(blocks, count), kThreads, 0, stream>>>(table, cols, src, lds, dst,
                                                                     ldd);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

}  // namespace

void copy_row_runs(cudaStream_t stream, long cols, const std::vector<RowRun>& runs,
                   const double* src, long lds, double* dst, long ldd) {
  if (cols <= 0) return;
  for (std::size_t first = 0; first < runs.size(); first += kRowRunsPerLaunch)
    launch(stream, cols, runs, first, std::min(runs.size(), first + kRowRunsPerLaunch), src, lds,
           dst, ldd);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* row_runs_kernel_anchor() {
  return reinterpret_cast<const void*>(&copy_row_runs_kernel);
}

}  // namespace pipevd::gpu
