// The complex DBBR panel's compact WY form on the GPU, after cuSOLVER's zgeqrf (the backend runs
// cusolverDnXgeqrf on CUDA_C_64F): LAPACK's convention, Q = H_1 ... H_kk with
// H_i = I - tau_i v_i v_i^H (tau complex), Q = I - Y T Y^H = I - W Y^H with T upper triangular as
// zlarft("F", "C") forms it and W = Y T, as the host backend's panel_qr (core/backend.hpp).
#pragma once
#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace pipevd::gpu {

// Y(0:m, 0:kk) = zgeqrf's reflectors below the panel's diagonal with an explicit unit diagonal and
// zeros above it; the panel keeps R (zeros below the diagonal).
void split_complex_panel(cudaStream_t stream, long m, long kk, cuDoubleComplex* panel, long ldp,
                         cuDoubleComplex* y, long ldy);

// W (m x kk) = Y T from Y and tau (kk entries, device): T from T^{-1} = diag(1/tau) +
// striu(Y^H Y) (the UT transform: one GEMM, one TRSM), a reflector with tau = 0 (the identity)
// giving zero row and column of T. g and t: kk x kk device workspaces. `blas` runs on `stream`.
void form_complex_w(cublasHandle_t blas, cudaStream_t stream, long m, long kk,
                    const cuDoubleComplex* y, long ldy, const cuDoubleComplex* tau,
                    cuDoubleComplex* g, cuDoubleComplex* t, cuDoubleComplex* w, long ldw);

}  // namespace pipevd::gpu
