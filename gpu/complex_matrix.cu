// Elementwise complex kernels (see complex_matrix.cuh). Plain grid-stride loops: each is O(n^2)
// beside the O(n^2 k) GEMM or rank-2k update it accompanies, so the real path's tiled transposes
// would not pay here.
#include <algorithm>

#include "base/cuda_check.hpp"
#include "gpu/complex_matrix.cuh"
#include "gpu/kernel_preload.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kThreads = 256;

int grid_for(long count) {
  return static_cast<int>(std::max(1L, std::min(4096L, (count + kThreads - 1) / kThreads)));
}

__global__ void laset_complex(long m, long n, cuDoubleComplex alpha, cuDoubleComplex beta,
                              cuDoubleComplex* a, long lda) {
  const long total = m * n;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / m, i = k - j * m;
    a[i + j * lda] = i == j ? beta : alpha;
  }
}

// Entry (i, j) of the triangle being written reads only (j, i) of the stored one: the two are
// disjoint, so the mirror runs in place without ordering between threads.
template <bool kFromLower>
__global__ void mirror_conjugate(long n, cuDoubleComplex* a, long lda) {
  const long total = n * n;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / n, i = k - j * n;
    if (i == j) {
      a[i + j * lda].y = 0.0;
    } else if (kFromLower ? i < j : i > j) {
      a[i + j * lda] = cuConj(a[j + i * lda]);
    }
  }
}

}  // namespace

void fill_complex(cudaStream_t stream, long m, long n, cuDoubleComplex alpha, cuDoubleComplex beta,
                  cuDoubleComplex* a, long lda) {
  if (m <= 0 || n <= 0) return;
  laset_complex<<<grid_for(m * n), kThreads, 0, stream>>>(m, n, alpha, beta, a, lda);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

void mirror_hermitian(cudaStream_t stream, char uplo, long n, cuDoubleComplex* a, long lda) {
  if (n <= 0) return;
  if (uplo == 'L' || uplo == 'l')
    mirror_conjugate<true><<<grid_for(n * n), kThreads, 0, stream>>>(n, a, lda);
  else
    mirror_conjugate<false><<<grid_for(n * n), kThreads, 0, stream>>>(n, a, lda);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* complex_matrix_kernel_anchor() { return reinterpret_cast<const void*>(&laset_complex); }

}  // namespace pipevd::gpu
