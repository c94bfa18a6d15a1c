// BC-back on the GPU: X := X * Q_b with the bulge-chasing reflectors (core/reflector_store.hpp),
// the BLAS2 kernel of the pipelined paper §4.3.
//
// Rows of X are independent: four threads (lanes) own one row, a block owns a chunk of rows. The
// reflectors are taken in for_each_in_bc_back_order's order with groups of G = 32 sweeps: for one
// step t, the G reflectors (s0 .. s0+G-1, t) of a group act on the window of b + G - 1
// consecutive columns starting at s0 + 1 + t b. The block stages those G vectors (and taus) in
// shared memory once, and the lanes of every row apply all G of them to the row's window, held in
// registers split cyclically over the lanes (a dot product is four partial sums and a butterfly):
// X is read and written once per window instead of once per reflector, each staged vector serves
// all the block's rows, and four lanes per row give the GPU four times the threads of one-per-row.
// The lanes of a row read consecutive shared words and the rows of a warp the same ones (a
// broadcast): no bank conflicts. Bands wider than 32 take a plain kernel (one thread per row, one
// reflector at a time from global memory). Each row's arithmetic is fixed (no atomics, fixed
// reduction trees), so repeated runs are bitwise identical and any row chunking gives the same
// rows.
#pragma once
#include <cuda_runtime.h>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// X (m x L.n, leading dimension ldx >= max(1, m), device) := X * Q_b, with the reflectors of
// layout L on the device (d_v: L.vector_array_size() doubles, d_tau: L.count()). Asynchronous on
// `stream`. Throws std::invalid_argument for bad sizes, GpuError for launch failures.
void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, cudaStream_t stream);

}  // namespace pipevd::gpu
