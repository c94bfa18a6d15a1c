// BC-back in MAGMA's BLAS3 formulation, the baseline that the BLAS2 kernel (bc_back.cuh) is
// compared with (benchmarks and tests only; the engine does not call it).
//
// The reflectors of G consecutive sweeps s0 .. s0+G-1 at one step t form a block: V (W x G, W =
// b + G - 1, column g the vector of (s0+g, t) starting at row g: each shifted one row down from the
// previous one) and the upper triangular T (G x G, LAPACK dlarft's forward columnwise T) with
// H(s0,t) H(s0+1,t) ... H(s0+G-1,t) = I - V T V^T. The window X(:, s0+1+t b ...) of W columns is
// updated as X_w := X_w - ((X_w V) T) V^T with cuBLAS (GEMM, TRMM, GEMM). Blocks are applied in
// for_each_in_bc_back_order's order with group G (steps bottom to top, groups left to right),
// so the product is X Q_b up to rounding. V and T of all steps of a group are formed on the GPU by
// one kernel launch before that group's GEMMs.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// Device workspace bytes of bc_back_blas3 for m rows and group G.
std::size_t bc_back_blas3_workspace_bytes(const ReflectorLayout& L, long m, int group);

// What bc_back_blas3 does: everything, or only the V and T formation (to time it alone).
enum class Blas3Part { all, form_only };

// X (m x L.n, ldx >= max(1, m), device) := X * Q_b with the reflectors d_v, d_tau of layout L on
// the device (1 <= group <= 64). `handle` must be set to `stream` by the caller. Asynchronous.
// Throws std::invalid_argument for bad sizes, GpuError / a runtime_error for CUDA / cuBLAS errors.
void bc_back_blas3(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m,
                   double* d_x, long ldx, int group, void* d_work, cublasHandle_t handle,
                   cudaStream_t stream, Blas3Part part = Blas3Part::all);

}  // namespace pipevd::gpu
