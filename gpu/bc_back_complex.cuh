// BC-back on the GPU for the complex Hermitian engine: X := X Q_b D with the complex bulge-chasing
// reflectors (core/reflector_store.hpp: H = I - tau v v^H, complex tau) and the diagonal unitary D
// (`phase`) that made the tridiagonal real, as host::apply_bc_back does.
//
// Rows of X are independent: a thread per row applies every reflector in for_each_in_bc_back_order
// with group 1 (sweeps in order, steps bottom to top), each straight from global memory, the real
// path's kernel for bands past its tuned widths (gpu/bc_back.cu's bc_back_rows_generic) in complex
// arithmetic; then each column j is scaled by D(j, j). Each row's arithmetic is fixed, so repeated
// runs are bitwise identical and any row chunking gives the same rows.
#pragma once
#include <cuComplex.h>
#include <cuda_runtime.h>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// X (m x L.n, leading dimension ldx >= max(1, m), device) := X * Q_b * D, the reflectors of layout
// L on the device (d_v: L.vector_array_size() elements, d_tau: L.count()), d_phase: L.n entries or
// nullptr (D = I). Asynchronous on `stream`. Throws std::invalid_argument for bad sizes.
void bc_back_complex(const ReflectorLayout& L, const cuDoubleComplex* d_v,
                     const cuDoubleComplex* d_tau, const cuDoubleComplex* d_phase, long m,
                     cuDoubleComplex* d_x, long ldx, cudaStream_t stream);

}  // namespace pipevd::gpu
