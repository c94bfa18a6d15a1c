// Complex BC-back (see bc_back_complex.cuh).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "base/cuda_check.hpp"
#include "gpu/bc_back_complex.cuh"

namespace pipevd::gpu {
namespace {

using Z = cuDoubleComplex;

constexpr int kThreads = 128;

// X(row, first .. first+len-1) := X(row, first ..) (I - tau v v^H) for every reflector, in the
// order of host::apply_bc_back's dependencies (sweeps in order, steps bottom to top).
__global__ void bc_back_rows(ReflectorLayout L, const Z* __restrict__ v, const Z* __restrict__ tau,
                             long m, Z* __restrict__ x, long ldx) {
  const long row = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m) return;
  Z* xr = x + row;
  for (long s = 0; s < L.sweeps(); ++s)
    for (long t = L.steps(s) - 1; t >= 0; --t) {
      const long first = L.first_row(s, t), len = L.length(s, t);
      const Z tt = tau[L.index(s, t)];
      if (tt.x == 0.0 && tt.y == 0.0) continue;  // H = I
      const Z* vv = v + L.vector_offset(s, t);
      Z w = xr[first * ldx];
      for (long i = 1; i < len; ++i) w = cuCfma(vv[i], xr[(first + i) * ldx], w);
      const Z tw = cuCmul(tt, w);
      for (long i = 0; i < len; ++i)
        xr[(first + i) * ldx] = cuCsub(xr[(first + i) * ldx], cuCmul(tw, cuConj(vv[i])));
    }
}

// X(:, j) *= D(j, j).
__global__ void scale_columns(long m, long n, const Z* __restrict__ phase, Z* __restrict__ x,
                              long ldx) {
  const long total = m * n;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / m, i = k - j * m;
    x[i + j * ldx] = cuCmul(x[i + j * ldx], phase[j]);
  }
}

}  // namespace

void bc_back_complex(const ReflectorLayout& L, const Z* d_v, const Z* d_tau, const Z* d_phase,
                     long m, Z* d_x, long ldx, cudaStream_t stream) {
  if (m < 0 || (m > 0 && ldx < m))
    throw std::invalid_argument("gpu::bc_back_complex: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx));
  if (m == 0) return;
  if (L.count() > 0) {
    bc_back_rows<<<static_cast<int>((m + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        L, d_v, d_tau, m, d_x, ldx);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }
  if (d_phase && L.n > 0) {
    const long total = m * L.n;
    const int grid =
        static_cast<int>(std::max(1L, std::min(4096L, (total + kThreads - 1) / kThreads)));
    scale_columns<<<grid, kThreads, 0, stream>>>(m, L.n, d_phase, d_x, ldx);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace pipevd::gpu
