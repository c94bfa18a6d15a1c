// BC-back on the FP64 tensor cores: X := X * Q_b (core/reflector_store.hpp) with the reflectors of
// 8 consecutive sweeps at one step applied as one reflector block, I - V T V^T (LAPACK's compact
// WY, dlarft forward / columnwise), through DMMA (mma.sync m16n8k8 and m16n8k16 .f64 on sm_90,
// m8n8k4 on sm_80).
//
// The BLAS2 kernel (gpu/bc_back.cu, the pipelined paper §4.3) feeds the FP64 pipe from shared
// memory one double per two FMAs: it is bound by the shared-memory return bandwidth and the
// reflector-to-reflector dependency chain, well below the FP64 vector peak. Here a warp holds 8 MT
// rows of X's window in the DMMA accumulator layout; per block of 8 reflectors it computes D = X V
// (8 x 8 per 8 rows), W = D T and X -= W V^T with V's 40 x 8 block as B fragments from shared
// memory, staged once per step in fragment order (no bank conflicts). The flops are 1.4x the
// BLAS2 count (V's zeros inside the 40-column span, and T) at twice the FP64 vector peak.
//
// The T factors do not depend on X: a first kernel forms them for every (block of 8 sweeps, step)
// into the workspace; rows of X are independent, so a launch over any subset of rows gives those
// rows exactly (fixed reduction order: repeated runs are bitwise identical).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// A compiled shape: sweeps per group G (a multiple of 8: X is streamed about n / G times), 8-row
// tiles per warp (an even number: pairs make the 16-row products), warps per block, and whether
// the next step's incoming columns of X are copied to shared memory asynchronously (cp.async)
// during the current step. The defaults are the fastest compiled shape on Hopper: a large group
// streams X least often, two tiles per warp make the m16n8k16 products, and the X prefetch's
// extra shared memory costs more occupancy than it hides (one tile per warp, with m8n8k4 products,
// was slower and is no longer compiled).
struct BcBackTensorShape {
  int group = 128;
  int mtiles = 2;
  int warps = 8;
  bool prefetch_x = false;
  // Blocks per row block, each taking every group_lanes-th group of sweeps a step behind the
  // previous group (a wavefront), so that fewer rows than the resident blocks hold still fill the
  // device: 0 the rounds model's count (gpu/group_lanes_choice.hpp), 1 none. Not a compiled
  // property: any shape without prefetch_x runs with any count; the rows' arithmetic does not
  // depend on it.
  int group_lanes = 0;
};

std::vector<BcBackTensorShape> bc_back_tensor_shapes();
bool bc_back_tensor_compiled(const BcBackTensorShape& s);
// Whether `device` runs shape s: DMMA (compute capability 8.0 on) and the shape's shared memory
// (132 KB for the default) within its per-block limit (sm_86 / sm_89 allow 99 KB).
bool bc_back_tensor_fits(const BcBackTensorShape& s, int device);

// Device bytes of the T factors and their offsets for layout L (any shape).
size_t bc_back_tensor_workspace_bytes(const ReflectorLayout& L);

// X (m x L.n, ldx >= max(1, m), device) := X * Q_b for 2 <= L.b <= 32, asynchronous on `stream`;
// `work`: bc_back_tensor_workspace_bytes(L) bytes on the device, 16-byte aligned.
// std::invalid_argument for a shape not compiled or b outside 2 .. 32.
void bc_back_tensor(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m,
                    double* d_x, long ldx, const BcBackTensorShape& s, void* work,
                    cudaStream_t stream);

// The group lanes bc_back_tensor runs with for m rows of layout L on `device` (0: s not compiled).
int bc_back_tensor_group_lanes(const ReflectorLayout& L, long m, const BcBackTensorShape& s,
                               int device);

// The rows of a wave for m rows of X on `device`: the resident blocks' rows (all SMs) divided by
// the group lanes m rows run with. A wave takes about the same time however full it is, so m rows
// cost about ceil(m / wave) of them: rows in fewer row blocks than the device holds run with
// several lanes each, and then a few rows more than a wave can halve the lanes.
long bc_back_tensor_wave_rows(const BcBackTensorShape& s, long m, int device);

}  // namespace pipevd::gpu
