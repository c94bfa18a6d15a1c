// BC-back on the GPU: X := X * Q_b with the bulge-chasing reflectors (core/reflector_store.hpp),
// the BLAS2 kernel of the pipelined paper §4.3.
//
// Rows of X are independent. The reflectors are taken in for_each_in_bc_back_order's order with
// groups of G sweeps: for one step t, the G reflectors (s0 .. s0+G-1, t) of a group act on the
// window of b + G - 1 consecutive columns starting at s0 + 1 + t b. A block stages those G vectors
// (and taus) in shared memory once, already shifted to window coordinates (zero outside each
// reflector's span), and `lanes` threads of a row split its window in column pairs held in
// registers (lane q holds the pairs q, q + lanes, ...): one double2 shared load serves 2 FMAs of
// the dot product and 2 of the update on each of the thread's `rows` rows; a dot product is a
// partial sum per lane and a butterfly over the lanes (the same bits on every lane). Where b is the
// kernel's compile-time bandwidth the window slides: step t-1's window is step t's moved b columns
// left, so a step loads and stores only b columns of each row instead of b + G - 1 (X is streamed
// about n / G times). Bands wider than 32 take a plain kernel (one thread per row, one reflector at
// a time from global memory). Each row's arithmetic is fixed for given tunables (no atomics, fixed
// reduction trees), so repeated runs are bitwise identical and any row chunking gives the same
// rows; different tunables round differently.
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// Tunables of the BLAS2 kernel for 16 < b <= 32 (narrower bands use fixed variants): threads per
// row, rows per thread, sweeps per group, threads per block, prefetch (b <= 16: only threads and
// prefetch count). Only the combinations listed by bc_back_variants() are compiled.
struct BcBackTunables {
  int lanes = 4;
  int rows = 1;
  int group = 32;
  int threads = 128;
  bool prefetch = true;  // the next step's vectors copied asynchronously (cp.async) meanwhile
  // The tensor-core kernel (gpu/bc_back_tensor.cuh) instead: rows = 8-row tiles per warp, threads =
  // 32 x warps per block, prefetch = the next step's columns of X copied asynchronously; lanes
  // unused. It needs 2 <= b <= 32 and a workspace (bc_back_workspace_bytes).
  bool tensor = false;
  // The tensor-core kernel's group lanes (BcBackTensorShape::group_lanes): 0 the rounds model's
  // count (gpu/group_lanes_choice.hpp), 1 none (engine ranks sharing a GPU: their blocks need not
  // all be resident at once).
  int group_lanes = 0;
};

// The compiled (lanes, rows, group, prefetch) combinations, each with threads = 128, then the
// tensor-core kernel's compiled shapes.
std::vector<BcBackTunables> bc_back_variants();

// Which kernel the default takes for 16 < b <= 32 (PIPEVD_GPU_BC_BACK, read by the policy): Auto
// the tensor-core one where the device runs it (DMMA, shared memory per block) and the BLAS2 one
// elsewhere, Blas2 and Tensor that kernel.
enum class BcBackKernel { Auto, Blas2, Tensor };

// The default for m rows and bandwidth b on the current device (see bc_back.cu).
BcBackTunables default_bc_back_tunables(long m, long b, BcBackKernel kernel = BcBackKernel::Auto);

// Device bytes of the workspace bc_back with tunables t needs for layout L (0: none).
size_t bc_back_workspace_bytes(const ReflectorLayout& L, const BcBackTunables& t);

// Rows of X that bc_back with the default tunables for m rows and bandwidth b processes in one
// wave on `device` (its resident blocks on all SMs; the tensor kernel's wave shrinks by the group
// lanes m rows run with); more rows take further waves of about the same time each, so a few rows
// over a wave cost nearly a whole wave. 0 where not modelled (b <= 16 or b > 32).
long bc_back_wave_rows(long m, long b, int device, BcBackKernel kernel = BcBackKernel::Auto);

// X (m x L.n, leading dimension ldx >= max(1, m), device) := X * Q_b, with the reflectors of
// layout L on the device (d_v: L.vector_array_size() doubles, d_tau: L.count()). Asynchronous on
// `stream`. Throws std::invalid_argument for bad sizes, GpuError for launch failures.
void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, cudaStream_t stream);
// The same with given tunables (std::invalid_argument for a combination not compiled; threads a
// multiple of 32 in 32 .. 256).
void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, const BcBackTunables& tun, cudaStream_t stream);
// The same with the caller's workspace: bc_back_workspace_bytes(L, tun) bytes of device memory,
// 16-byte aligned (nullptr: taken from the device's default pool for the call).
void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, const BcBackTunables& tun, void* work, cudaStream_t stream);

}  // namespace pipevd::gpu
