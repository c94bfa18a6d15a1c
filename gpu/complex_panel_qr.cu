// The complex panel's Y and W = Y T (see complex_panel_qr.cuh).
#include <algorithm>

#include "base/cuda_check.hpp"
#include "gpu/complex_panel_qr.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kThreads = 256;

int grid_for(long count) {
  return static_cast<int>(std::max(1L, std::min(4096L, (count + kThreads - 1) / kThreads)));
}

__device__ bool is_zero(cuDoubleComplex z) { return z.x == 0.0 && z.y == 0.0; }

__global__ void split_panel(long m, long kk, cuDoubleComplex* panel, long ldp, cuDoubleComplex* y,
                            long ldy) {
  const long total = m * kk;
  const cuDoubleComplex zero = make_cuDoubleComplex(0.0, 0.0);
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / m, i = k - j * m;
    cuDoubleComplex& p = panel[i + j * ldp];
    y[i + j * ldy] = i > j ? p : (i == j ? make_cuDoubleComplex(1.0, 0.0) : zero);
    if (i > j) p = zero;
  }
}

// g (kk x kk) = Y^H Y on entry; becomes T^{-1} = diag(1/tau) + striu(Y^H Y), and t becomes I for
// the trsm. An identity reflector's (tau = 0) row and column of g are decoupled (unit diagonal)
// here, its diagonal entry of T zeroed after the trsm (zero_identity_reflectors).
__global__ void t_inverse(long kk, const cuDoubleComplex* tau, cuDoubleComplex* g,
                          cuDoubleComplex* t) {
  const cuDoubleComplex zero = make_cuDoubleComplex(0.0, 0.0), one = make_cuDoubleComplex(1.0, 0.0);
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < kk * kk;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long c = k / kk, r = k - c * kk;
    cuDoubleComplex val = zero;
    if (r == c)
      val = is_zero(tau[r]) ? one : cuCdiv(one, tau[r]);
    else if (r < c && !is_zero(tau[r]) && !is_zero(tau[c]))
      val = g[k];
    g[k] = val;
    t[k] = r == c ? one : zero;
  }
}

__global__ void zero_identity_reflectors(long kk, const cuDoubleComplex* tau, cuDoubleComplex* t) {
  for (long r = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; r < kk;
       r += static_cast<long>(gridDim.x) * blockDim.x)
    if (is_zero(tau[r])) t[r + r * kk] = make_cuDoubleComplex(0.0, 0.0);
}

}  // namespace

void split_complex_panel(cudaStream_t stream, long m, long kk, cuDoubleComplex* panel, long ldp,
                         cuDoubleComplex* y, long ldy) {
  if (m <= 0 || kk <= 0) return;
  split_panel<<<grid_for(m * kk), kThreads, 0, stream>>>(m, kk, panel, ldp, y, ldy);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

void form_complex_w(cublasHandle_t blas, cudaStream_t stream, long m, long kk,
                    const cuDoubleComplex* y, long ldy, const cuDoubleComplex* tau,
                    cuDoubleComplex* g, cuDoubleComplex* t, cuDoubleComplex* w, long ldw) {
  if (m <= 0 || kk <= 0) return;
  const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0.0, 0.0);
  PIPEVD_CUBLAS_CHECK(cublasZgemm_64(blas, CUBLAS_OP_C, CUBLAS_OP_N, kk, kk, m, &one, y, ldy, y,
                                     ldy, &zero, g, kk));
  t_inverse<<<grid_for(kk * kk), kThreads, 0, stream>>>(kk, tau, g, t);
  PIPEVD_CUDA_CHECK_LAUNCH();
  PIPEVD_CUBLAS_CHECK(cublasZtrsm_64(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, kk, kk, &one, g, kk, t, kk));
  zero_identity_reflectors<<<grid_for(kk), kThreads, 0, stream>>>(kk, tau, t);
  PIPEVD_CUDA_CHECK_LAUNCH();
  PIPEVD_CUBLAS_CHECK(cublasZtrmm_64(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, m, kk, &one, t, kk, y, ldy, w, ldw));
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* complex_panel_qr_kernel_anchor() { return reinterpret_cast<const void*>(&split_panel); }

}  // namespace pipevd::gpu
