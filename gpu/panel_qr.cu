// The fused panel QR (see panel_qr.cuh).
//
// One grid sync per column j, where the textbook scheme needs two (||x||, then v^T A with v known).
// With u = A(j:m, j), alpha = u_0 and x = u_1: (rows > j), v = [1; x / (alpha - beta)], so
//   v^T A(:, k) = A(j, k) + x^T A(j+1:, k) / (alpha - beta)   (w_k = tau v^T A(:, k), k > j)
//   v_k^T v     = v_k(j)  + x^T v_k(j+1:)  / (alpha - beta)   (T's column, k < j)
// and ||x||^2 = x^T x: every needed sum is a dot of the unscaled x with a slab column. Before the
// sync each block writes those partials over its rows, and the block holding row j writes that
// row; after it every block sums the partials in one fixed order (bitwise the same beta, tau and w
// everywhere, run to run) and applies the reflector to its slab.
//
// Scaling, so that the plain sums neither overflow (1e300) nor underflow (1e-300): one extra sync
// at the start finds each column's largest entry, and the slab's column k is scaled by the exact
// power of two 2^e_k that puts it in [1, 2) (subnormals included). Householder QR commutes exactly
// with power-of-two column scalings: only R carries them, scaled back on the way out. Reflectors
// keep column norms, so entries stay below 2 sqrt(m). Only an x tiny next to its own column
// (|x_i| < 2^-400, e.g. a nearly triangular panel) can have its squares underflow: its norm comes
// from a second sum, of (2^600 x_i)^2, and beta, tau and v from x, alpha scaled by 2^600 alike.
#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>

#include "gpu/cooperative_launch.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/panel_qr.cuh"

namespace pipevd::gpu {
namespace {

namespace cg = cooperative_groups;

// Threads per block: 256, 512 or 1024 (fewer, taller slabs with as many threads per row: fewer
// partials for every block to read after each grid sync, a cheaper sync).
constexpr int kDefaultThreads = 256;
// Fewer rows per block than half its threads and the grid-wide syncs cost more than the blocks
// save.
constexpr long min_rows_per_block(int threads) { return threads / 2; }
// Partial sums per block and column: x^T (slab column k) for every k (k = j: x^T x), then the sum
// of (2^600 x_i)^2. Warp w sums slots w, w + warps, ...
constexpr int kMaxSlots = kFusedPanelQrMaxCols + 1;
// Blocks' partials one warp reads per round (one L2 round trip up to 160 blocks).
constexpr int kPartUnroll = 5;
// Shared memory besides the slab: summed partials, row j, w, the columns' exponents e_k.
constexpr long kExtraDoubles = kMaxSlots + 3 * kFusedPanelQrMaxCols;
// x^T x below 2^-800: all |x_i| < 2^-400, take the 2^600-scaled sum (no overflow: < 2^200 each).
constexpr double kTinySum = 0x1p-800;
constexpr double kUp = 0x1p600;
constexpr double kDown = 0x1p-600;

// Global scratch, in doubles, with L = slot_ld(blocks): the blocks' column maxima (column k's
// at k L), then two buffers (columns alternate: a block may write column j + 1's partials while
// another still reads column j's) of nb + 1 slots of L partials (slot k's of all blocks
// contiguous: one warp sums them with coalesced loads), then two copies of row j (nb each).
__host__ __device__ inline long slot_ld(long blocks) { return (blocks + 31) / 32 * 32; }
__host__ __device__ inline long scratch_doubles(long blocks, long nb) {
  return (3 * nb + 2) * slot_ld(blocks) + 2 * nb;
}
// The slab's room: rows_per x nb, and at least 2 nb^2 (T and the v_k^T v_j at the end).
__host__ __device__ inline long slab_doubles(long rows_per, long nb) {
  return (rows_per > 2 * nb ? rows_per : 2 * nb) * nb;
}

__device__ inline long clamp_long(long x, long lo, long hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
__device__ inline double warp_sum(double x) {
  for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
  return x;
}
__device__ inline double warp_max(double x) {
  for (int off = 16; off > 0; off >>= 1) x = fmax(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}

// One block per slab of rows_per rows; slab column-major in shared memory with leading dimension
// rows_per. Global scratch (see scratch_doubles) is read with __ldcg (L2, never a stale L1 line)
// after each grid sync.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    fused_panel_qr_kernel(long m, int nb, int kk, int rows_per, double* __restrict__ panel,
                          long ldp, double* __restrict__ y, long ldy, double* __restrict__ tau_out,
                          double* __restrict__ t, int ldt, double* __restrict__ scratch) {
  constexpr int kWarps = kThreads / 32;
  constexpr int kSlotsPerWarp = (kMaxSlots + kWarps - 1) / kWarps;
  extern __shared__ double smem[];
  cg::grid_group grid = cg::this_grid();
  const int nblocks = gridDim.x, b = blockIdx.x;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int ld = rows_per;
  double* red = smem;                          // column j's partials summed, per slot
  double* rowj = red + kMaxSlots;              // row j: v_k(j) (k < j), alpha, A(j, k) (k > j)
  double* wk = rowj + kFusedPanelQrMaxCols;    // w_k = tau v^T A(:, k), k > j
  double* escale = wk + kFusedPanelQrMaxCols;  // e_k: the slab's column k is A(:, k) 2^e_k
  double* slab = smem + kExtraDoubles;
  const long sl = slot_ld(nblocks);
  double* col_max = scratch;
  double* parts = col_max + nb * sl;
  double* rows = parts + 2 * (nb + 1) * sl;

  const long r0 = static_cast<long>(b) * rows_per;
  const int nloc = static_cast<int>(clamp_long(m - r0, 0, rows_per));

  for (int idx = tid; idx < nloc * nb; idx += kThreads) {
    const int c = idx / nloc, i = idx - c * nloc;
    slab[i + c * ld] = panel[r0 + i + c * ldp];
  }
  __syncthreads();
  for (int k = warp; k < nb; k += kWarps) {
    double mx = 0.0;
    for (int i = lane; i < nloc; i += 32) mx = fmax(mx, fabs(slab[i + k * ld]));
    mx = warp_max(mx);
    if (lane == 0) col_max[k * sl + b] = mx;
  }
  grid.sync();
  // Column k's largest entry to [1, 2): an exact scaling (none for zero, inf or NaN columns).
  for (int k = warp; k < nb; k += kWarps) {
    double mx = 0.0;
    for (int p = lane; p < nblocks; p += 32) mx = fmax(mx, __ldcg(col_max + k * sl + p));
    mx = warp_max(mx);
    const int e = mx > 0.0 && mx <= DBL_MAX ? -ilogb(mx) : 0;
    if (lane == 0) escale[k] = e;
    if (e != 0)
      for (int i = lane; i < nloc; i += 32) slab[i + k * ld] = scalbn(slab[i + k * ld], e);
  }
  __syncthreads();

  for (int j = 0; j < kk; ++j) {
    double* part = parts + (j & 1) * (nb + 1) * sl;
    double* rowg = rows + (j & 1) * nb;
    // Local rows of this slab strictly below row j (x), and from row j on (v).
    const int below = static_cast<int>(clamp_long(j + 1 - r0, 0, nloc));
    const int from = static_cast<int>(clamp_long(j - r0, 0, nloc));
    const long jl = j - r0;  // row j in this slab, where 0 <= jl < nloc
    double* colj = slab + static_cast<long>(j) * ld;

    // 1. This block's partials: x^T slab(:, k) over its rows > j, and the sum of (2^600 x_i)^2
    // (slot nb: x times itself, both factors scaled). The warp's slots are set up before the row
    // loop, so its body is loads and FMAs only (slots past nb compute a product nobody stores).
    {
      const double* colk[kSlotsPerWarp];
      double scale[kSlotsPerWarp];
#pragma unroll
      for (int q = 0; q < kSlotsPerWarp; ++q) {
        const int k = warp + q * kWarps;
        colk[q] = k < nb ? slab + static_cast<long>(k) * ld : colj;
        scale[q] = k == nb ? kUp : 1.0;
      }
      double acc[kSlotsPerWarp];
#pragma unroll
      for (int q = 0; q < kSlotsPerWarp; ++q) acc[q] = 0.0;
      for (int i = below + lane; i < nloc; i += 32) {
        const double xi = colj[i];
#pragma unroll
        for (int q = 0; q < kSlotsPerWarp; ++q)
          acc[q] = fma(xi * scale[q], colk[q][i] * scale[q], acc[q]);
      }
#pragma unroll
      for (int q = 0; q < kSlotsPerWarp; ++q) {
        const int k = warp + q * kWarps;
        if (k > nb) break;
        const double s = warp_sum(acc[q]);
        if (lane == 0) part[k * sl + b] = s;
      }
    }
    if (jl >= 0 && jl < nloc && tid < nb) rowg[tid] = slab[jl + tid * ld];
    grid.sync();

    // 2. Every block sums the slots it needs (k >= j; block 0, which forms T, all) in one order.
    // Every load of the warp is issued before the first sum (one L2 round trip); which slots and
    // blocks exist is decided once, outside the loads.
    {
      double acc[kSlotsPerWarp];
#pragma unroll
      for (int q = 0; q < kSlotsPerWarp; ++q) {
        const int k = warp + q * kWarps;
        const bool live = k <= nb && (k >= j || b == 0);
        const double* src = part + (live ? k : 0) * sl;
        double v[kPartUnroll];
#pragma unroll
        for (int u = 0; u < kPartUnroll; ++u) {
          const int p = 32 * u + lane;
          v[u] = live && p < nblocks ? __ldcg(src + p) : 0.0;
        }
        acc[q] = 0.0;
#pragma unroll
        for (int u = 0; u < kPartUnroll; ++u) acc[q] += v[u];
      }
      for (int p0 = 32 * kPartUnroll; p0 < nblocks; p0 += 32 * kPartUnroll) {  // > 160 blocks
#pragma unroll
        for (int q = 0; q < kSlotsPerWarp; ++q) {
          const int k = warp + q * kWarps;
          if (k > nb || (k < j && b != 0)) continue;
#pragma unroll
          for (int u = 0; u < kPartUnroll; ++u) {
            const int p = p0 + 32 * u + lane;
            if (p < nblocks) acc[q] += __ldcg(part + k * sl + p);
          }
        }
      }
#pragma unroll
      for (int q = 0; q < kSlotsPerWarp; ++q) {
        const int k = warp + q * kWarps;
        if (k > nb) break;
        const double s = warp_sum(acc[q]);
        if (lane == 0) red[k] = s;
      }
    }
    if (tid < nb) rowj[tid] = __ldcg(rowg + tid);
    __syncthreads();

    // 3. beta, tau (every thread alike) as dlarfg; x tiny next to its column: x, alpha scaled by
    // sc = 2^600 (tau, v = sc x / (sc alpha - sc beta) unchanged). x = 0: H = I, tau = 0.
    const double alpha = rowj[j], xx = red[j];
    double sc = 1.0, xnorm = sqrt(xx);
    if (xx < kTinySum) {
      sc = kUp;
      xnorm = sqrt(red[nb]);
    }
    double beta = alpha, tau = 0.0, den = 1.0;
    if (xnorm != 0.0) {
      const double a = alpha * sc, bs = -copysign(hypot(a, xnorm), a);
      tau = (bs - a) / bs;
      den = a - bs;
      beta = sc == 1.0 ? bs : bs * kDown;
    }
    // w_k (k > j); block 0 keeps z_k = v_k^T v (k < j) in T's column j for the end.
    if (tid < nb && (tid > j || (tid < j && b == 0))) {
      const double c = tau != 0.0 ? rowj[tid] + red[tid] * sc / den : 0.0;
      if (tid > j)
        wk[tid] = tau * c;
      else
        t[tid + static_cast<long>(j) * ldt] = c;
    }
    if (b == 0 && tid == j) {
      t[j + static_cast<long>(j) * ldt] = tau;
      tau_out[j] = tau;
    }
    __syncthreads();

    // 4. v into column j (v_j = 1 implicit, beta in its place), A(:, k) -= v w_k on this slab;
    // a thread owns its rows, so v needs no sync. A division: no reciprocal to overflow.
    if (tau != 0.0) {
      for (int i = from + tid; i < nloc; i += kThreads) {
        double v = 1.0;
        if (i == jl) {
          colj[i] = beta;
        } else {
          v = colj[i] * sc / den;
          colj[i] = v;
        }
#pragma unroll 4
        for (int k = j + 1; k < nb; ++k) slab[i + k * ld] = fma(-v, wk[k], slab[i + k * ld]);
      }
    }
    __syncthreads();
  }

  // R into the panel (scaled back by 2^-e_c; zeros below the diagonal), the reflectors into y
  // (explicit unit diagonal).
  for (int idx = tid; idx < nloc * nb; idx += kThreads) {
    const int c = idx / nloc, i = idx - c * nloc;
    const long gi = r0 + i;
    const double val = slab[i + static_cast<long>(c) * ld];
    panel[gi + c * ldp] = gi <= c ? scalbn(val, -static_cast<int>(escale[c])) : 0.0;
    if (c < kk) y[gi + c * ldy] = gi > c ? val : (gi == c ? 1.0 : 0.0);
  }

  // T as dlarft('F', 'C'): T(i, j) = -tau_j sum_{l = i}^{j-1} T(i, l) z(l, j), T(j, j) = tau_j, a
  // zero column where tau_j = 0. Rows of T are independent: row i by g lanes of one warp, which
  // only wait on each other. Block 0, in its slab's room once written out.
  if (b == 0 && kk > 1) {
    __syncthreads();
    double* ts = slab;
    double* zs = slab + kk * kk;
    for (int idx = tid; idx < kk * kk; idx += kThreads) {
      const int c = idx / kk, r = idx - c * kk;
      zs[idx] = r <= c ? t[r + static_cast<long>(c) * ldt] : 0.0;
    }
    __syncthreads();
    int g = 32;
    while (g * kk > kThreads) g >>= 1;
    const int i = tid / g, q = tid % g;
    for (int j = 0; j < kk; ++j) {
      const double tj = zs[j + j * kk];
      double s = 0.0;
      if (i < j && tj != 0.0)
        for (int l = i + q; l < j; l += g) s = fma(ts[i + l * kk], zs[l + j * kk], s);
      for (int off = 1; off < g; off <<= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
      if (q == 0 && i <= j) {
        const double tij = i == j ? tj : (tj != 0.0 ? -tj * s : 0.0);
        ts[i + j * kk] = tij;
        t[i + static_cast<long>(j) * ldt] = tij;
      }
      __syncwarp();
    }
  }
}

}  // namespace

namespace {
template <int kThreads>
FusedPanelQrPlan plan_for(const cudaDeviceProp& props, long m, long nb, long sms) {
  FusedPanelQrPlan plan;
  const auto kernel = fused_panel_qr_kernel<kThreads>;
  long blocks = std::max(
      1L, std::min(sms, (m + min_rows_per_block(kThreads) - 1) / min_rows_per_block(kThreads)));
  const long rows = (m + blocks - 1) / blocks;
  blocks = (m + rows - 1) / rows;  // no empty block
  const std::size_t bytes =
      sizeof(double) * static_cast<std::size_t>(slab_doubles(rows, nb) + kExtraDoubles);
  if (bytes > props.sharedMemPerBlockOptin) return plan;
  // The device's limit, not this plan's size: a plan made earlier (another backend's, another
  // shape) stays launchable.
  PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(props.sharedMemPerBlockOptin)));
  int per_sm = 0;
  PIPEVD_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, bytes));
  // A cooperative grid must be resident all at once.
  if (static_cast<long>(per_sm) * props.multiProcessorCount < blocks) return plan;
  plan.ok = true;
  plan.threads = kThreads;
  plan.blocks = static_cast<int>(blocks);
  plan.rows_per_block = rows;
  plan.shared_bytes = bytes;
  return plan;
}
}  // namespace

FusedPanelQrPlan plan_fused_panel_qr(const cudaDeviceProp& props, long m, long nb, int max_blocks,
                                     int threads_asked) {
  if (m <= 0 || nb <= 0 || nb > kFusedPanelQrMaxCols || !props.cooperativeLaunch) return {};
  long sms = std::max(1, props.multiProcessorCount);
  // Tuning: fewer blocks make each grid sync cheaper and each slab taller.
  if (max_blocks > 0) sms = std::min(sms, static_cast<long>(max_blocks));
  // Tall panels give each block a tall slab, whose column reductions want more threads: 512
  // threads per block from m = 32768, 256 below, where the larger block's reduction costs more
  // than it shares; 1024 never pays (its grid syncs and reductions are the slowest).
  int threads = m >= 32768 ? 512 : kDefaultThreads;
  if (threads_asked > 0) threads = threads_asked;
  switch (threads) {
    case 512:
      return plan_for<512>(props, m, nb, sms);
    case 1024:
      return plan_for<1024>(props, m, nb, sms);
    default:
      return plan_for<256>(props, m, nb, sms);
  }
}

std::int64_t fused_panel_qr_scratch(const FusedPanelQrPlan& plan, long nb) {
  return scratch_doubles(plan.blocks, nb);
}

bool fused_panel_qr(const FusedPanelQrPlan& plan, cudaStream_t stream, long m, long nb,
                    double* panel, long ldp, double* y, long ldy, double* tau, double* t, long ldt,
                    double* scratch) {
  if (!plan.ok) throw GpuError("pipevd: fused_panel_qr called without a valid plan");
  int inb = static_cast<int>(nb), ikk = static_cast<int>(std::min(m, nb)),
      rows = static_cast<int>(plan.rows_per_block), ildt = static_cast<int>(ldt);
  void* args[] = {&m, &inb, &ikk, &rows, &panel, &ldp, &y, &ldy, &tau, &t, &ildt, &scratch};
  const void* kernel =
      plan.threads == 1024  ? reinterpret_cast<const void*>(fused_panel_qr_kernel<1024>)
      : plan.threads == 512 ? reinterpret_cast<const void*>(fused_panel_qr_kernel<512>)
                            : reinterpret_cast<const void*>(fused_panel_qr_kernel<256>);
  const cudaError_t e = launch_cooperative("fused_panel_qr", kernel, dim3(plan.blocks),
                                           dim3(plan.threads), args, plan.shared_bytes, stream);
  // Fewer SMs than the occupancy query saw (MPS, a shared GPU): the caller plans fewer blocks or
  // takes another path.
  if (e == cudaErrorCooperativeLaunchTooLarge) {
    cudaGetLastError();
    return false;
  }
  PIPEVD_CUDA_CHECK(e);
  return true;
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* panel_qr_kernel_anchor() {
  return reinterpret_cast<const void*>(&fused_panel_qr_kernel<1024>);
}

}  // namespace pipevd::gpu
