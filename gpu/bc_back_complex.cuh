// BC-back on the GPU for the complex Hermitian engine: X := X Q_b D with the complex bulge-chasing
// reflectors (core/reflector_store.hpp: H = I - tau v v^H, complex tau) and the diagonal unitary D
// (`phase`) that made the tridiagonal real, as host::apply_bc_back does.
//
// The BLAS2 kernel has the real one's structure (gpu/bc_back.cuh, its long comments): rows of X
// are independent; reflectors are taken in for_each_in_bc_back_order's order with groups of G
// sweeps; for one step t the G vectors of a group are staged once in shared memory at their window
// positions (zero outside each reflector's span), and `lanes` threads of a row split its window of
// b + G - 1 columns, lane q holding the columns q, q + lanes, ... in registers: one 16-byte shared
// load of v_c serves 4 FMAs of the dot product x v and 4 of the update x -= (tau x v) v^H on each
// of the thread's `rows` rows; a dot product is a partial sum per lane and a butterfly over the
// lanes (the same bits on every lane). Where b is the kernel's compile-time bandwidth the window
// slides (step t-1's window is step t's moved b columns left: a step loads and stores b columns of
// each row). The real kernel is not templated over the scalar: its column pairs per double2 load
// are what its speed rests on, and a complex column is a double2 already, so the slot arithmetic
// differs. Bands wider than 32 take a plain kernel (one thread per row, one reflector at a time
// from global memory), also the tests' second GPU reference. Then each column j is scaled by
// D(j, j). Each row's arithmetic is fixed for given tunables (no atomics, fixed reduction trees),
// so repeated runs are bitwise identical and any row chunking gives the same rows; different
// tunables round differently. The tensor-core kernel (gpu/bc_back_complex_tensor.cuh) is the
// default for 16 < b <= 32 where the device runs it (faster than the BLAS2 kernel:
// bench/RESULTS.md); the tunables' `tensor` chooses it.
#pragma once
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <vector>

#include "core/reflector_store.hpp"
#include "gpu/bc_back.cuh"

namespace pipevd::gpu {

// Tunables of the complex BLAS2 kernel for 16 < b <= 32 (narrower bands use fixed variants where
// only threads and prefetch count): threads per row, rows per thread, sweeps per group, threads per
// block (a multiple of 32 in 32 .. 256), the next step's vectors copied asynchronously (cp.async)
// meanwhile. generic: the thread-per-row kernel instead, for any b (the only one past b = 32).
// Only the combinations bc_back_complex_variants() lists are compiled. tensor: the tensor-core
// kernel instead, for b <= 32, with rows = 8-row tiles per warp, group = sweeps per group and
// threads = 32 x warps (lanes and prefetch unused) and its group_lanes (0 the rounds model's
// count, 1 none), one of bc_back_complex_tensor_variants(); it needs DMMA (compute capability 8.0
// on) and takes a workspace from pipevd's pool for the call.
struct ComplexBcBackTunables {
  int lanes = 4;
  int rows = 1;
  int group = 32;
  int threads = 128;
  bool prefetch = true;
  bool generic = false;
  bool tensor = false;
  int group_lanes = 0;
};

// The compiled (lanes, rows, group, prefetch) combinations for 16 < b <= 32, each with threads =
// 128.
std::vector<ComplexBcBackTunables> bc_back_complex_variants();
// The tensor-core kernel's compiled shapes as tunables (tensor = true), for any b <= 32.
std::vector<ComplexBcBackTunables> bc_back_complex_tensor_variants();

// The default for m rows and bandwidth b (see bc_back_complex.cu) on the current device. kernel:
// Tensor takes the tensor-core kernel's default shape where b <= 32, Auto where 16 < b <= 32 and
// the device runs it, Blas2 (and Auto elsewhere) the BLAS2 kernel; bands wider than 32 the
// generic kernel.
ComplexBcBackTunables default_bc_back_complex_tunables(long m, long b,
                                                       BcBackKernel kernel = BcBackKernel::Auto);

// X (m x L.n, leading dimension ldx >= max(1, m), device) := X * Q_b * D, the reflectors of layout
// L on the device (d_v: L.vector_array_size() elements, d_tau: L.count()), d_phase: L.n entries or
// nullptr (D = I). Asynchronous on `stream`. Throws std::invalid_argument for bad sizes or a
// combination of tunables not compiled, GpuError for launch failures.
void bc_back_complex(const ReflectorLayout& L, const cuDoubleComplex* d_v,
                     const cuDoubleComplex* d_tau, const cuDoubleComplex* d_phase, long m,
                     cuDoubleComplex* d_x, long ldx, const ComplexBcBackTunables& tun,
                     cudaStream_t stream);
// The same with the default tunables.
void bc_back_complex(const ReflectorLayout& L, const cuDoubleComplex* d_v,
                     const cuDoubleComplex* d_tau, const cuDoubleComplex* d_phase, long m,
                     cuDoubleComplex* d_x, long ldx, cudaStream_t stream);

}  // namespace pipevd::gpu
