// The fused panel QR (see panel_qr.cuh).
#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "gpu/gpu_context.hpp"
#include "gpu/panel_qr.cuh"

namespace pipevd::gpu {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Fewer rows per block than this and the grid-wide syncs cost more than the blocks save.
constexpr long kMinRowsPerBlock = 128;
// Shared memory besides the slab: w (kFusedPanelQrMaxCols), per-warp partials, broadcast values.
constexpr long kExtraDoubles = kFusedPanelQrMaxCols + 2 * kWarps + 8;

// Scaled sum of squares (LAPACK dlassq's idea): the norm is s * sqrt(q), with no overflow or
// underflow for huge or tiny columns.
__device__ inline void ssq_add(double& s, double& q, double x) {
  const double a = fabs(x);
  if (a > s) {
    const double r = s / a;
    q = 1.0 + q * r * r;
    s = a;
  } else if (a > 0.0) {
    const double r = a / s;
    q += r * r;
  }
}
__device__ inline void ssq_merge(double& s, double& q, double s2, double q2) {
  if (s2 > s) {
    const double r = s / s2;
    q = q2 + q * r * r;
    s = s2;
  } else if (s2 > 0.0) {
    const double r = s2 / s;
    q += q2 * r * r;
  }
}
__device__ inline void warp_ssq(double& s, double& q) {
  for (int off = 16; off > 0; off >>= 1) {
    const double s2 = __shfl_down_sync(0xffffffffu, s, off);
    const double q2 = __shfl_down_sync(0xffffffffu, q, off);
    ssq_merge(s, q, s2, q2);
  }
}
__device__ inline long clamp_long(long x, long lo, long hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
__device__ inline double warp_sum(double x) {
  for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
  return x;
}

// One block per slab of rows_per rows; slab column-major in shared memory with leading dimension
// rows_per. scratch: norm partials (2 per block), alpha (one per column), v^T A partials (column
// k's partials of all blocks contiguous: one warp sums them with coalesced loads). Global scratch
// is read with __ldcg (L2, never a stale L1 line) after each grid sync.
__global__ void __launch_bounds__(kThreads)
    fused_panel_qr_kernel(long m, int nb, int kk, int rows_per, double* __restrict__ panel,
                          long ldp, double* __restrict__ y, long ldy, double* __restrict__ tau_out,
                          double* __restrict__ t, int ldt, double* __restrict__ scratch) {
  extern __shared__ double smem[];
  cg::grid_group grid = cg::this_grid();
  const int nblocks = gridDim.x, b = blockIdx.x;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int ld = rows_per;
  double* slab = smem;
  double* wk = slab + static_cast<long>(ld) * nb;  // tau * (v^T A)(k) of the current column
  double* red_s = wk + kFusedPanelQrMaxCols;
  double* red_q = red_s + kWarps;
  double* bc = red_q + kWarps;  // beta, tau, alpha - beta
  double* norm_part = scratch;
  double* alpha_g = norm_part + 2L * nblocks;
  double* dot_part = alpha_g + kFusedPanelQrMaxCols;

  const long r0 = static_cast<long>(b) * rows_per;
  const int nloc = static_cast<int>(clamp_long(m - r0, 0, rows_per));

  for (int idx = tid; idx < nloc * nb; idx += kThreads) {
    const int c = idx / nloc, i = idx - c * nloc;
    slab[i + c * ld] = panel[r0 + i + c * ldp];
  }
  __syncthreads();

  for (int j = 0; j < kk; ++j) {
    // Local rows of this slab strictly below row j (x of dlarfg), and from row j on (v).
    const int below = static_cast<int>(clamp_long(j + 1 - r0, 0, nloc));
    const int from = static_cast<int>(clamp_long(j - r0, 0, nloc));
    const bool owner = j >= r0 && j < r0 + nloc;
    double* colj = slab + static_cast<long>(j) * ld;

    // 1. This block's scaled sum of squares of x.
    double s = 0.0, q = 0.0;
    for (int i = below + tid; i < nloc; i += kThreads) ssq_add(s, q, colj[i]);
    warp_ssq(s, q);
    if (lane == 0) {
      red_s[warp] = s;
      red_q[warp] = q;
    }
    __syncthreads();
    if (tid == 0) {
      for (int w = 1; w < kWarps; ++w) ssq_merge(s, q, red_s[w], red_q[w]);
      norm_part[2 * b] = s;
      norm_part[2 * b + 1] = q;
      if (owner) alpha_g[j] = colj[j - r0];
    }
    grid.sync();

    // 2. Every block combines the partials in the same order: the same beta and tau everywhere.
    if (warp == 0) {
      s = 0.0;
      q = 0.0;
      for (int p = lane; p < nblocks; p += 32)
        ssq_merge(s, q, __ldcg(norm_part + 2 * p), __ldcg(norm_part + 2 * p + 1));
      warp_ssq(s, q);
      if (lane == 0) {
        const double xnorm = s * sqrt(q);
        const double alpha = __ldcg(alpha_g + j);
        if (xnorm == 0.0) {  // H = I (LAPACK's dlarfg: tau = 0, beta = alpha)
          bc[0] = alpha;
          bc[1] = 0.0;
          bc[2] = 1.0;
        } else {
          const double beta = -copysign(hypot(alpha, xnorm), alpha);
          bc[0] = beta;
          bc[1] = (beta - alpha) / beta;
          bc[2] = alpha - beta;
        }
      }
    }
    __syncthreads();
    const double beta = bc[0], tau = bc[1], denom = bc[2];
    if (tau != 0.0) {
      // v below the diagonal: x / (alpha - beta), |v_i| <= 1 (a division, so no reciprocal can
      // overflow for tiny columns).
      for (int i = below + tid; i < nloc; i += kThreads) colj[i] /= denom;
      __syncthreads();
      // 3. Partials of v^T A(:, k), k > j, and of v_k^T v (T's column, dlarft), k < j: both are
      // sums over rows >= j of the slab's column k times v; v_j = 1 is implicit.
      for (int k = warp; k < nb; k += kWarps) {
        if (k == j) continue;
        const double* colk = slab + static_cast<long>(k) * ld;
        double acc = 0.0;
        for (int i = from + lane; i < nloc; i += 32)
          acc += ((owner && i == j - r0) ? 1.0 : colj[i]) * colk[i];
        acc = warp_sum(acc);
        if (lane == 0) dot_part[static_cast<long>(k) * nblocks + b] = acc;
      }
    }
    grid.sync();

    if (tau != 0.0) {
      // 4. w_k = tau v^T A(:, k), summed in block order, then A(:, k) -= v w_k on this slab;
      // block 0 also sums z_k = v_k^T v, k < j, into wk[k].
      for (int k = warp; k < nb; k += kWarps) {
        if (k == j || (k < j && b != 0)) continue;
        double acc = 0.0;
        for (int p = lane; p < nblocks; p += 32)
          acc += __ldcg(dot_part + static_cast<long>(k) * nblocks + p);
        acc = warp_sum(acc);
        if (lane == 0) wk[k] = k > j ? tau * acc : acc;
      }
      __syncthreads();
      const int rows = nloc - from, cols = nb - j - 1;
      for (int idx = tid; idx < rows * cols; idx += kThreads) {
        const int kq = idx / rows, i = from + (idx - kq * rows), k = j + 1 + kq;
        const double v = (owner && i == j - r0) ? 1.0 : colj[i];
        slab[i + static_cast<long>(k) * ld] -= v * wk[k];
      }
    }
    if (owner && tid == 0) colj[j - r0] = beta;
    if (b == 0 && tid == 0) tau_out[j] = tau;
    // T(0:j, j) = -tau T(0:j, 0:j) z, T(j, j) = tau (dlarft, forward, columnwise; a zero column
    // where tau = 0). Thread i only reads row i of T, which it wrote itself.
    if (b == 0 && tid <= j) {
      double tij = tid == j ? tau : 0.0;
      if (tid < j && tau != 0.0) {
        for (int l = tid; l < j; ++l) tij += t[tid + static_cast<long>(l) * ldt] * wk[l];
        tij *= -tau;
      }
      t[tid + static_cast<long>(j) * ldt] = tij;
    }
    __syncthreads();
  }

  // R into the panel (zeros below the diagonal), the reflectors into y (explicit unit diagonal).
  for (int idx = tid; idx < nloc * nb; idx += kThreads) {
    const int c = idx / nloc, i = idx - c * nloc;
    const long gi = r0 + i;
    const double val = slab[i + static_cast<long>(c) * ld];
    panel[gi + c * ldp] = gi <= c ? val : 0.0;
    if (c < kk) y[gi + c * ldy] = gi > c ? val : (gi == c ? 1.0 : 0.0);
  }
}

}  // namespace

FusedPanelQrPlan plan_fused_panel_qr(const cudaDeviceProp& props, long m, long nb) {
  FusedPanelQrPlan plan;
  if (m <= 0 || nb <= 0 || nb > kFusedPanelQrMaxCols || !props.cooperativeLaunch) return plan;
  long sms = std::max(1, props.multiProcessorCount);
  // Tuning: fewer blocks make each grid sync cheaper and each slab taller.
  if (const char* v = std::getenv("PIPEVD_GPU_PANEL_QR_BLOCKS"); v && std::atol(v) > 0)
    sms = std::min(sms, std::atol(v));
  long blocks = std::max(1L, std::min(sms, (m + kMinRowsPerBlock - 1) / kMinRowsPerBlock));
  const long rows = (m + blocks - 1) / blocks;
  blocks = (m + rows - 1) / rows;  // no empty block
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(rows * nb + kExtraDoubles);
  if (bytes > props.sharedMemPerBlockOptin) return plan;
  // The device's limit, not this plan's size: a plan made earlier (another backend's, another
  // shape) stays launchable.
  PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(fused_panel_qr_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(props.sharedMemPerBlockOptin)));
  int per_sm = 0;
  PIPEVD_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_panel_qr_kernel,
                                                                  kThreads, bytes));
  // A cooperative grid must be resident all at once.
  if (static_cast<long>(per_sm) * props.multiProcessorCount < blocks) return plan;
  plan.ok = true;
  plan.blocks = static_cast<int>(blocks);
  plan.rows_per_block = rows;
  plan.shared_bytes = bytes;
  return plan;
}

std::int64_t fused_panel_qr_scratch(const FusedPanelQrPlan& plan, long nb) {
  return 2L * plan.blocks + kFusedPanelQrMaxCols + static_cast<std::int64_t>(plan.blocks) * nb;
}

bool fused_panel_qr(const FusedPanelQrPlan& plan, cudaStream_t stream, long m, long nb,
                    double* panel, long ldp, double* y, long ldy, double* tau, double* t, long ldt,
                    double* scratch) {
  if (!plan.ok) throw GpuError("pipevd: fused_panel_qr called without a valid plan");
  int inb = static_cast<int>(nb), ikk = static_cast<int>(std::min(m, nb)),
      rows = static_cast<int>(plan.rows_per_block), ildt = static_cast<int>(ldt);
  void* args[] = {&m, &inb, &ikk, &rows, &panel, &ldp, &y, &ldy, &tau, &t, &ildt, &scratch};
  const cudaError_t e =
      cudaLaunchCooperativeKernel(reinterpret_cast<void*>(fused_panel_qr_kernel), dim3(plan.blocks),
                                  dim3(kThreads), args, plan.shared_bytes, stream);
  // Fewer SMs than the occupancy query saw (MPS, a shared GPU): the caller takes another path.
  if (e == cudaErrorCooperativeLaunchTooLarge) {
    cudaGetLastError();
    return false;
  }
  PIPEVD_CUDA_CHECK(e);
  return true;
}

}  // namespace pipevd::gpu
