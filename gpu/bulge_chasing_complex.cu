// Complex Hermitian bulge chasing on the GPU (see bulge_chasing_complex.cuh). The working band is
// lower band storage with ld = max(2, 2b) (host::BasicBulgeBand's layout: the band plus the b x b
// bulge below it).
#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <algorithm>
#include <cuda/atomic>
#include <stdexcept>
#include <string>

#include "core/reflector_store.hpp"
#include "gpu/bulge_chasing_complex.cuh"
#include "gpu/cooperative_launch.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"

namespace cg = cooperative_groups;

namespace pipevd::gpu {
namespace {

constexpr int kLanes = 32;  // a warp per sweep

long working_ld(long bw) { return std::max(2L, 2 * bw); }

using Z = cuDoubleComplex;

__device__ __forceinline__ Z zero() { return make_cuDoubleComplex(0.0, 0.0); }
// x * y + acc
__device__ __forceinline__ Z fma(Z x, Z y, Z acc) { return cuCfma(x, y, acc); }
// conj(x) * y + acc
__device__ __forceinline__ Z fma_conj(Z x, Z y, Z acc) { return cuCfma(cuConj(x), y, acc); }

// Working band <- B (zero outside the band; the diagonal's real parts, as host::BasicBulgeBand).
__global__ void copy_band_in(long n, long bw, const Z* ab, long ldab, Z* a, long ld) {
  const long total = n * ld;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / ld, r = k - j * ld;
    Z val = zero();
    if (r <= bw && j + r < n) val = ab[r + j * ldab];
    if (r == 0) val.y = 0.0;
    a[k] = val;
  }
}

__global__ void extract_tridiagonal(long n, long bw, const Z* a, long ld, double* d, Z* sub) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    d[i] = a[i * ld].x;
    if (i + 1 < n) sub[i] = bw >= 1 ? a[1 + i * ld] : zero();
  }
}

// Sums and maxima over the warp; every lane gets the same bits (each butterfly level adds the same
// two operands on both partners).
__device__ __forceinline__ double warp_sum(const cg::thread_block_tile<kLanes>& g, double x) {
#pragma unroll
  for (int o = kLanes / 2; o > 0; o /= 2) x += g.shfl_xor(x, o);
  return x;
}
__device__ __forceinline__ double warp_max(const cg::thread_block_tile<kLanes>& g, double x) {
#pragma unroll
  for (int o = kLanes / 2; o > 0; o /= 2) x = fmax(x, g.shfl_xor(x, o));
  return x;
}

// dlapy3: sqrt(x^2 + y^2 + z^2) without needless overflow.
__device__ double lapy3(double x, double y, double z) {
  const double w = fmax(fabs(x), fmax(fabs(y), fabs(z)));
  if (w == 0.0) return fabs(x) + fabs(y) + fabs(z);
  const double a = x / w, b = y / w, c = z / w;
  return w * sqrt(a * a + b * b + c * c);
}

// Steps 2-4 of a step (the left, right and two-sided updates with H = I - tau v v^H, v in vs)
// for any b: lane l owns the indices l, l + 32, ... of every per-index loop.
__device__ void updates_in_loops(const cg::thread_block_tile<kLanes>& g, long len, long first,
                                 long c, long n, long b, Z* a, long cb, long ld, Z tau, Z* vs,
                                 Z* ws) {
  const int lane = static_cast<int>(g.thread_rank());
  const long lm1 = ld - 1;  // stride along a row of the band storage
  // 2. Left: the rest of the bulge, A(J, j) := H^H A(J, j) for j = c+1 .. first-1 (a lane a
  // column).
  const Z tau_h = cuConj(tau);
  for (long j = c + 1 + lane; j < first; j += kLanes) {
    Z* cj = a + (first - j) + (j - cb) * ld;  // &A(first, j), len contiguous entries
    Z dot = zero();
    for (long i = 0; i < len; ++i) dot = fma_conj(vs[i], cj[i], dot);
    dot = cuCmul(dot, tau_h);
    for (long i = 0; i < len; ++i) cj[i] = cuCsub(cj[i], cuCmul(dot, vs[i]));
  }

  // 4. Right: rows below J, A(r, J) := A(r, J) H (a lane a row; fills the next bulge). Disjoint
  // from what 2. and 3. touch, so no barrier between them.
  const long r1 = first + len + b < n ? first + len + b : n;
  for (long r = first + len + lane; r < r1; r += kLanes) {
    Z* row = a + (r - first) + (first - cb) * ld;  // &A(r, first); A(r, first+i) = row[i*lm1]
    Z dot = zero();
    for (long i = 0; i < len; ++i) dot = fma(row[i * lm1], vs[i], dot);
    dot = cuCmul(dot, tau);
    for (long i = 0; i < len; ++i) row[i * lm1] = cuCsub(row[i * lm1], cuCmul(dot, cuConj(vs[i])));
  }

  // 3. Both sides on B(J,J): p = tau B v, w = p - (conj(tau)/2)(v^H p) v, B -= v w^H + w v^H, the
  // diagonal kept real. d0 = &A(first, first); A(first+i, first+j) = d0[(i-j) + j*ld], i >= j.
  Z* d0 = a + (first - cb) * ld;
  Z vp = zero();
  for (long k = lane; k < len; k += kLanes) {
    Z p = zero();
    for (long i = 0; i <= k; ++i) p = fma(d0[(k - i) + i * ld], vs[i], p);
    for (long i = k + 1; i < len; ++i) p = fma(cuConj(d0[(i - k) + k * ld]), vs[i], p);
    const Z w = cuCmul(tau, p);
    ws[k] = w;
    vp = fma_conj(vs[k], w, vp);
  }
  const Z sum = make_cuDoubleComplex(warp_sum(g, vp.x), warp_sum(g, vp.y));
  const Z half = cuCmul(make_cuDoubleComplex(-0.5 * tau_h.x, -0.5 * tau_h.y), sum);
  for (long k = lane; k < len; k += kLanes) ws[k] = fma(half, vs[k], ws[k]);
  g.sync();
  for (long j = 0; j < len; ++j) {
    Z* cj = d0 + j * ld - j;  // cj[i] = A(first+i, first+j)
    const Z vj = cuConj(vs[j]), wj = cuConj(ws[j]);
    for (long i = j + lane; i < len; i += kLanes) {
      Z x = cuCsub(cj[i], cuCadd(cuCmul(vs[i], wj), cuCmul(ws[i], vj)));
      if (i == j) x.y = 0.0;
      cj[i] = x;
    }
  }
}

// x[i * stride] -= dot * v_i (conj(v_i) with conj_v) for i < m <= 32, eight entries at a time:
// their loads (x and v) together, then their stores, so the loads of one entry do not wait on the
// store of the one before (shared memory through pointers the compiler cannot tell apart).
__device__ __forceinline__ void subtract_times_v(Z* x, long stride, int m, const Z* v, Z dot,
                                                 bool conj_v) {
#pragma unroll
  for (int i0 = 0; i0 < kLanes; i0 += 8) {
    if (i0 >= m) break;
    Z xs[8], vs[8];
#pragma unroll
    for (int h = 0; h < 8; ++h)
      if (i0 + h < m) {
        xs[h] = x[(i0 + h) * stride];
        vs[h] = conj_v ? cuConj(v[i0 + h]) : v[i0 + h];
      }
#pragma unroll
    for (int h = 0; h < 8; ++h)
      if (i0 + h < m) x[(i0 + h) * stride] = cuCsub(xs[h], cuCmul(dot, vs[h]));
  }
}

// The same updates for b <= 32, the same operations on every entry in the same order (so the
// same bits): every per-index loop is one index per lane, and each update's stores come eight
// entries at a time after those entries' loads. In the loop form every load waits for the store
// before it (shared memory through pointers the compiler cannot tell apart), so a step was a chain
// of shared-memory round trips, most of its time where the chase is a chain of steps.
__device__ void updates_by_lane(const cg::thread_block_tile<kLanes>& g, long len, long first,
                                long c, long n, long b, Z* a, long cb, long ld, Z tau, Z* vs,
                                Z* ws) {
  const int lane = static_cast<int>(g.thread_rank());
  const int m = static_cast<int>(len);  // <= b <= 32
  const long lm1 = ld - 1;

  // 2. Left: A(J, j) := H^H A(J, j), column j = c+1+lane (first - c - 1 < b columns).
  const Z tau_h = cuConj(tau);
  if (c + 1 + lane < first) {
    const long j = c + 1 + lane;
    Z* cj = a + (first - j) + (j - cb) * ld;
    Z dot = zero();
    for (int i = 0; i < m; ++i) dot = fma_conj(vs[i], cj[i], dot);
    dot = cuCmul(dot, tau_h);
    subtract_times_v(cj, 1, m, vs, dot, false);
  }

  // 4. Right: A(r, J) := A(r, J) H, row r = first+len+lane (at most b rows).
  const long r = first + len + lane;
  if (r < (first + len + b < n ? first + len + b : n)) {
    Z* row = a + (r - first) + (first - cb) * ld;
    Z dot = zero();
    for (int i = 0; i < m; ++i) dot = fma(row[i * lm1], vs[i], dot);
    dot = cuCmul(dot, tau);
    subtract_times_v(row, lm1, m, vs, dot, true);
  }

  // 3. Both sides on B(J,J), row k = lane: p = tau B v, w = p - (conj(tau)/2)(v^H p) v,
  // B -= v w^H + w v^H, the diagonal kept real.
  Z* d0 = a + (first - cb) * ld;
  const int k = lane;
  Z vp = zero(), wk = zero();
  if (k < m) {
    Z p = zero();
    for (int i = 0; i <= k; ++i) p = fma(d0[(k - i) + i * ld], vs[i], p);
    for (int i = k + 1; i < m; ++i) p = fma(cuConj(d0[(i - k) + k * ld]), vs[i], p);
    wk = cuCmul(tau, p);
    vp = fma_conj(vs[k], wk, vp);
  }
  const Z sum = make_cuDoubleComplex(warp_sum(g, vp.x), warp_sum(g, vp.y));
  const Z half = cuCmul(make_cuDoubleComplex(-0.5 * tau_h.x, -0.5 * tau_h.y), sum);
  if (k < m) {
    wk = fma(half, vs[k], wk);
    ws[k] = wk;
  }
  g.sync();
  if (k < m) {
    const Z vi = vs[k], wi = wk;
    Z* ci = d0 + k;  // ci[j * lm1] = A(first+k, first+j)
#pragma unroll
    for (int j0 = 0; j0 < kLanes; j0 += 8) {
      if (j0 > k) break;
      Z x[8], vc[8], wc[8];
#pragma unroll
      for (int h = 0; h < 8; ++h)
        if (j0 + h <= k) {
          x[h] = ci[(j0 + h) * lm1];
          vc[h] = vs[j0 + h];
          wc[h] = ws[j0 + h];
        }
#pragma unroll
      for (int h = 0; h < 8; ++h) {
        const int j = j0 + h;
        if (j <= k) {
          const Z vj = cuConj(vc[h]), wj = cuConj(wc[h]);
          Z y = cuCsub(x[h], cuCadd(cuCmul(vi, wj), cuCmul(wi, vj)));
          if (j == k) y.y = 0.0;
          ci[j * lm1] = y;
        }
      }
    }
  }
}

// Step t of sweep s (host::chase_step's arithmetic in complex) by the warp g; vs, ws: b elements of
// shared memory each. Lane l owns the indices l, l + 32, ... of every per-index loop. `a` holds the
// working band's columns from cb on, with its ld (cb = 0: the band itself; cb = step_window's c0:
// the step's window staged in shared memory); only the addresses depend on cb, so both give the
// same bits. The reflectors go out with streaming stores: n^2 / 2 of them would otherwise push
// the band out of L2.
__device__ void chase_step(const cg::thread_block_tile<kLanes>& g, const ReflectorLayout& L, Z* a,
                           long cb, long ld, long s, long t, Z* vs, Z* ws, Z* v_out, Z* tau_out) {
  const int lane = static_cast<int>(g.thread_rank());
  const long b = L.b, n = L.n;
  const long first = L.first_row(s, t), len = L.length(s, t);
  const long c = t == 0 ? s : first - b;
  Z* col = a + (first - c) + (c - cb) * ld;  // &A(first, c): the column it annihilates

  // 1. zlarfg on (A(first, c), A(first+1 .. first+len-1, c)); ||x|| scaled by max |x_i| (as
  // dznrm2 guards it: the bulges of long sweeps decay towards underflow).
  const Z alpha = col[0];
  double big = 0.0;
  for (long i = 1 + lane; i < len; i += kLanes) big = fmax(big, cuCabs(col[i]));
  big = warp_max(g, big);
  double xnorm = 0.0;
  if (big != 0.0) {
    const double inv = 1.0 / big;
    double sq = 0.0;
    for (long i = 1 + lane; i < len; i += kLanes) {
      const double re = col[i].x * inv, im = col[i].y * inv;
      sq += re * re + im * im;
    }
    xnorm = big * sqrt(warp_sum(g, sq));
  }
  Z tau = zero(), scal = make_cuDoubleComplex(1.0, 0.0);
  double beta = alpha.x;
  const bool identity = xnorm == 0.0 && alpha.y == 0.0;  // H = I, tau = 0
  if (!identity) {
    beta = -copysign(lapy3(alpha.x, alpha.y, xnorm), alpha.x);
    tau = make_cuDoubleComplex((beta - alpha.x) / beta, -alpha.y / beta);
    scal = cuCdiv(make_cuDoubleComplex(1.0, 0.0), make_cuDoubleComplex(alpha.x - beta, alpha.y));
  }
  const long vofs = v_out ? L.vector_offset(s, t) : 0;
  for (long i = lane; i < b; i += kLanes) {
    Z vi = zero();
    if (i == 0) {
      vi = make_cuDoubleComplex(1.0, 0.0);
    } else if (i < len) {
      vi = identity ? col[i] : cuCmul(col[i], scal);
      col[i] = zero();
    }
    vs[i] = vi;
    if (v_out) __stcs(v_out + vofs + i, vi);
  }
  if (lane == 0 && tau_out) __stcs(tau_out + L.index(s, t), tau);
  g.sync();
  if (identity) return;  // col[i] = 0 for i >= 1 already; A(first, c) stays alpha (real)
  if (lane == 0) col[0] = make_cuDoubleComplex(beta, 0.0);  // nothing else here reads A(first, c)

  if (b <= kLanes)
    updates_by_lane(g, len, first, c, n, b, a, cb, ld, tau, vs, ws);
  else
    updates_in_loops(g, len, first, c, n, b, a, cb, ld, tau, vs, ws);
}

// Shared memory of one sweep's warp: vs and ws (b elements each) and, staged, a window of 2b
// columns of the working band.
std::size_t shared_bytes_per_sweep(long b, long ld, bool stage) {
  return sizeof(Z) * static_cast<std::size_t>(2 * b + (stage ? 2 * b * ld : 0));
}

// The columns of the working band that step (s,t) reads or writes: [c, first + len), each in full
// (all ld rows of band storage): the annihilated column c (s for t = 0, first - b after), the
// bulge's columns, the two-sided block and, in the same columns, the rows below it that the right
// update fills. At most 2b columns.
__device__ __forceinline__ void step_window(const ReflectorLayout& L, long s, long t, long* c0,
                                            long* c1) {
  const long first = L.first_row(s, t);
  *c0 = t == 0 ? s : first - L.b;
  *c1 = first + L.length(s, t);
}

// Band -> window, count elements: one 16-byte cp.async per element, so the whole window is in
// flight at once without holding registers (wait with __pipeline_wait_prior, then sync the warp).
__device__ __forceinline__ void window_copy_in(const cg::thread_block_tile<kLanes>& g, Z* win,
                                               const Z* band, long count) {
  for (long k = g.thread_rank(); k < count; k += kLanes)
    __pipeline_memcpy_async(win + k, band + k, sizeof(Z));
  __pipeline_commit();
}

// Window -> band, count elements, 16 bytes per load and store.
__device__ __forceinline__ void window_copy_out(const cg::thread_block_tile<kLanes>& g, Z* band,
                                                const Z* win, long count) {
  for (long k = g.thread_rank(); k < count; k += kLanes) band[k] = win[k];
}

// The persistent kernel: warp gid of G takes sweeps gid, gid + G, ... (see the header).
// STAGE: each step copies its window (step_window) into shared memory with all loads in flight,
// runs on it, and copies it back: the same arithmetic (the same bits), but the step's dependent
// loops wait on shared memory instead of L2. Writing the whole window back is safe: no other sweep
// touches these columns while the step runs (the prerequisite rule keeps sweep s-1 three steps
// ahead, whose columns start at first + 2b - 1, and sweep s+1 three behind, whose columns end
// below c).
template <bool STAGE>
__global__ void chase_sweeps(ReflectorLayout L, Z* a, long ld, Z* v_out, Z* tau_out,
                             int* progress) {
  extern __shared__ Z smem[];
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<kLanes> g = cg::tiled_partition<kLanes>(block);
  const long per_block = static_cast<long>(g.meta_group_size());
  const long gid = static_cast<long>(blockIdx.x) * per_block + g.meta_group_rank();
  const long G = static_cast<long>(gridDim.x) * per_block;
  const long window = STAGE ? 2 * L.b * ld : 0;  // elements of a staged window
  Z* vs = smem + (2 * L.b + window) * g.meta_group_rank();
  Z* ws = vs + L.b;
  Z* win = ws + L.b;
  const bool leader = g.thread_rank() == 0;

  for (long s = gid; s < L.sweeps(); s += G) {
    cuda::atomic_ref<int, cuda::thread_scope_device> mine(progress[s]);
    cuda::atomic_ref<int, cuda::thread_scope_device> before(progress[s > 0 ? s - 1 : 0]);
    int seen = 0;  // steps of sweep s-1 known complete (leader only)
    const long steps = L.steps(s);
    const long last_before = s > 0 ? L.steps(s - 1) - 1 : 0;
    for (long t = 0; t < steps; ++t) {
      if (s > 0) {
        const int need =
            static_cast<int>(ReflectorLayout::prerequisite_given_last(t, last_before)) + 1;
        if (leader && seen < need) {
          unsigned ns = 16;
          while ((seen = before.load(cuda::memory_order_acquire)) < need) {
            __nanosleep(ns);
            ns = ns < 256 ? 2 * ns : ns;
          }
        }
        g.sync();  // the other lanes' reads come after the leader's acquire
      }
      if constexpr (STAGE) {
        long c0 = 0, c1 = 0;
        step_window(L, s, t, &c0, &c1);
        window_copy_in(g, win, a + c0 * ld, (c1 - c0) * ld);
        __pipeline_wait_prior(0);
        g.sync();  // every lane's copies landed before any lane reads the window
        chase_step(g, L, win, c0, ld, s, t, vs, ws, v_out, tau_out);
        g.sync();
        window_copy_out(g, a + c0 * ld, win, (c1 - c0) * ld);
      } else {
        chase_step(g, L, a, 0, ld, s, t, vs, ws, v_out, tau_out);
      }
      g.sync();  // every lane's writes before the leader's release
      if (leader) mine.store(static_cast<int>(t + 1), cuda::memory_order_release);
    }
  }
}

using ChaseKernel = void (*)(ReflectorLayout, Z*, long, Z*, Z*, int*);
ChaseKernel chase_kernel(bool staged) { return staged ? chase_sweeps<true> : chase_sweeps<false>; }

ComplexChasePlan make_plan(int device, long bw, const BulgeChasingTunables& tun) {
  const long ld = working_ld(bw);
  ComplexChasePlan plan;
  plan.sweeps_per_block = std::max(1, tun.sweeps_per_block);
  if (tun.stage_window) {
    int optin = 0;
    PIPEVD_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const std::size_t per_sweep = shared_bytes_per_sweep(std::max(1L, bw), ld, true);
    const std::size_t fit = static_cast<std::size_t>(optin) / per_sweep;
    if (fit >= 1) {
      plan.staged = true;
      plan.sweeps_that_fit = static_cast<int>(fit);
      plan.sweeps_per_block = static_cast<int>(std::min<std::size_t>(plan.sweeps_per_block, fit));
    }
  }
  cudaFuncAttributes attr{};
  PIPEVD_CUDA_CHECK(
      cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(chase_kernel(plan.staged))));
  plan.sweeps_per_block =
      std::max(1, std::min(plan.sweeps_per_block, attr.maxThreadsPerBlock / kLanes));
  plan.shared_bytes_per_sweep = shared_bytes_per_sweep(bw, ld, plan.staged);
  return plan;
}

// One block per plan.sweeps_per_block sweeps, at most tun.blocks_per_sm per SM (0: as many as
// fit) and tun.max_blocks in all (0: no cap); with tun.exclusive_sms each block asks for all of
// its SM's shared memory. The schedule never changes the results.
void launch_chase(const ReflectorLayout& L, Z* a, long ld, Z* v, Z* tau, int* progress,
                  const BulgeChasingTunables& tun, cudaStream_t stream) {
  int device = 0, sms = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const ComplexChasePlan plan = make_plan(device, L.b, tun);
  const void* kernel = reinterpret_cast<const void*>(chase_kernel(plan.staged));
  const int per_block = plan.sweeps_per_block, threads = per_block * kLanes;
  std::size_t smem = plan.shared_bytes_per_sweep * per_block;
  if (tun.exclusive_sms) {
    int optin = 0;
    PIPEVD_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    smem = std::max(smem, static_cast<std::size_t>(optin));
  }
  if (smem > 48 * 1024)
    PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  int resident = 0;
  PIPEVD_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads, smem));
  if (resident < 1)
    throw GpuError("bulge_chase_complex: a block of " + std::to_string(threads) + " threads and " +
                   std::to_string(smem) + " bytes of shared memory cannot be resident");
  const int per_sm = tun.blocks_per_sm > 0 ? std::min(tun.blocks_per_sm, resident) : resident;
  long wanted = (L.sweeps() + per_block - 1) / per_block;  // more warps than sweeps idle
  if (tun.max_blocks > 0) wanted = std::min<long>(wanted, tun.max_blocks);
  int grid = static_cast<int>(std::max(1L, std::min<long>(wanted, 1L * per_sm * sms)));
  ReflectorLayout layout = L;
  void* args[] = {&layout, &a, &ld, &v, &tau, &progress};
  // Cooperative: every block resident at once (or an error), which the flags' waits rely on; a grid
  // refused (fewer SMs ours than the query saw) halves until it fits (the schedule changes, not
  // the results).
  launch_cooperative_halving("bulge_chasing_complex", kernel, grid, dim3(threads), args, smem,
                             stream);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t bulge_chase_complex_workspace_bytes(long n, long b) {
  const long bw = std::max(0L, std::min(b, n - 1));
  const std::size_t band = sizeof(Z) * static_cast<std::size_t>(n * working_ld(bw));
  return band + 256 + sizeof(int) * static_cast<std::size_t>(std::max(1L, n));
}

BulgeChasingTunables bulge_chasing_complex_beside_other_work(BulgeChasingTunables tun, int device,
                                                             long b) {
  const long bw = std::max(1L, b);
  const ComplexChasePlan plan = make_plan(device, bw, tun);
  int sms = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (!plan.staged || sms < 2) return tun;
  const int fit = plan.sweeps_that_fit;
  // One sweep per block on half the SMs would halve the sweeps in flight: there the chase keeps
  // every SM and SBR-back waits.
  if (fit < 2) return tun;
  tun.sweeps_per_block = std::min(2 * tun.sweeps_per_block, fit);
  tun.max_blocks = sms / 2;
  tun.exclusive_sms = true;
  return tun;
}

ComplexChasePlan bulge_chase_complex_plan(long n, long b, const BulgeChasingTunables& tun) {
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  return make_plan(device, std::max(0L, std::min(b, n - 1)), tun);
}

void bulge_chase_complex(long n, long b, const Z* d_ab, long ldab, double* d_d, Z* d_sub, Z* d_v,
                         Z* d_tau, void* d_work, const BulgeChasingTunables& tun,
                         cudaStream_t stream) {
  const long bw = std::max(0L, std::min(b, n - 1));
  if (n < 0 || b < 0 || ldab < bw + 1)
    throw std::invalid_argument("gpu::bulge_chase_complex: n = " + std::to_string(n) +
                                ", b = " + std::to_string(b) + ", ldab = " + std::to_string(ldab));
  if (n == 0) return;
  const ReflectorLayout L{n, bw};
  const long ld = working_ld(bw);
  Z* a = static_cast<Z*>(d_work);
  int* progress =
      reinterpret_cast<int*>(static_cast<char*>(d_work) + ((sizeof(Z) * n * ld + 255) / 256) * 256);
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<long>(4096, (n * ld + threads - 1) / threads));
  copy_band_in<<<blocks, threads, 0, stream>>>(n, bw, d_ab, ldab, a, ld);
  PIPEVD_CUDA_CHECK_LAUNCH();
  if (L.sweeps() > 0) {
    PIPEVD_CUDA_CHECK(cudaMemsetAsync(progress, 0, sizeof(int) * L.sweeps(), stream));
    launch_chase(L, a, ld, d_v, d_tau, progress, tun, stream);
  }
  const int eblocks = static_cast<int>(std::min<long>(1024, (n + threads - 1) / threads));
  extract_tridiagonal<<<eblocks, threads, 0, stream>>>(n, bw, a, ld, d_d, d_sub);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bulge_chasing_complex_kernel_anchor() {
  return reinterpret_cast<const void*>(&extract_tridiagonal);
}

}  // namespace pipevd::gpu
