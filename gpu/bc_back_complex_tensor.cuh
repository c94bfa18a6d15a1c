// Complex BC-back on the FP64 tensor cores: X := X * Q_b with the complex bulge-chasing reflectors
// (core/reflector_store.hpp, H = I - tau v v^H), the complex twin of gpu/bc_back_tensor.cuh (its
// comments hold the structure). The reflectors of 8 consecutive sweeps at one step form one block
// I - V T V^H (LAPACK's zlarft, forward / columnwise); a warp holds 8-row tiles of X's window in
// the DMMA accumulator layout, real and imaginary parts apart, and per block computes D = X V, W =
// D (-T) and X += W V^H. A complex product is four real ones: each is one k = 16 DMMA over the
// concatenated contraction [re | im] (e.g. Re(X V) = [Xr Xi] [Vr; -Vi]). No Gauss three-product
// trick: it loses accuracy where |Re| and |Im| differ much.
//
// The T factors do not depend on X: a first kernel forms them for every (block of 8 sweeps, step)
// into the workspace; rows of X are independent and each row's arithmetic is fixed for a shape
// (atomics only schedule the group lanes), so repeated runs are bitwise identical and any row
// chunking or lane count gives the same rows.
// D (the phase) is not applied here: gpu::bc_back_complex does that after either kernel.
#pragma once
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// A compiled shape: sweeps per group G (a multiple of 8: X is streamed about n / G times), 8-row
// tiles per warp (even: pairs make the 16-row products), warps per block. The complex window takes
// twice the real one's registers, so groups are smaller than the real kernel's.
struct ComplexBcBackTensorShape {
  int group = 32;
  int mtiles = 2;
  int warps = 4;
  // Blocks per row block (gpu/group_lanes.cuh), so that rows in fewer row blocks than the device
  // holds still fill it: 0 as many as the resident blocks allow, 1 none. Not a compiled property.
  int group_lanes = 0;
};

// The compiled shapes, the default first.
std::vector<ComplexBcBackTensorShape> bc_back_complex_tensor_shapes();
// Whether `device` runs the default shape (DMMA and its shared memory).
bool bc_back_complex_tensor_runs(int device);
bool bc_back_complex_tensor_compiled(const ComplexBcBackTensorShape& s);

// Device bytes of the T factors, their offsets and the group lanes' counters for layout L (any
// shape).
size_t bc_back_complex_tensor_workspace_bytes(const ReflectorLayout& L);

// The group lanes bc_back_complex_tensor runs with for m rows of layout L on `device` (0: s not
// compiled).
int bc_back_complex_tensor_group_lanes(const ReflectorLayout& L, long m,
                                       const ComplexBcBackTensorShape& s, int device);

// X (m x L.n, ldx >= max(1, m), device) := X * Q_b for L.b <= 32, asynchronous on `stream`; `work`:
// bc_back_complex_tensor_workspace_bytes(L) bytes on the device, 16-byte aligned. Needs DMMA
// (compute capability 8.0 on). std::invalid_argument for a shape not compiled or b > 32.
void bc_back_complex_tensor(const ReflectorLayout& L, const cuDoubleComplex* d_v,
                            const cuDoubleComplex* d_tau, long m, cuDoubleComplex* d_x, long ldx,
                            const ComplexBcBackTensorShape& s, void* work, cudaStream_t stream);

}  // namespace pipevd::gpu
