// Bulge chasing on the GPU (see bulge_chasing.cuh). The working band is lower band storage with
// ld = max(2, 2b) (host::BulgeBand's layout: the band plus the b x b bulge below it), n * 2b
// doubles: 33.5 MB at n = 65536, b = 32, so the band stays in a Hopper GPU's 50 MB L2
// (tridiagonalization paper §5.2); the reflectors stream out with evict-first stores so they do
// not push the band out of L2.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cuda/atomic>
#include <cuda/barrier>  // cuda::aligned_size_t for cg::memcpy_async
#include <stdexcept>
#include <string>

#include "gpu/bulge_chasing.cuh"
#include "gpu/cooperative_launch.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"

namespace cg = cooperative_groups;

namespace pipevd::gpu {
namespace {

long working_ld(long bw) { return std::max(2L, 2 * bw); }

// Working band <- B (zero outside the band, as host::BulgeBand).
__global__ void copy_band_in(long n, long bw, const double* ab, long ldab, double* a, long ld) {
  const long total = n * ld;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / ld, r = k - j * ld;
    a[k] = (r <= bw && j + r < n) ? ab[r + j * ldab] : 0.0;
  }
}

__global__ void extract_tridiagonal(long n, long bw, const double* a, long ld, double* d,
                                    double* e) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    d[i] = a[i * ld];
    if (i + 1 < n) e[i] = bw >= 1 ? a[1 + i * ld] : 0.0;
  }
}

// Sum over the group; every lane gets the same bits (each butterfly level adds the same two
// operands on both partners).
template <int TPS>
__device__ __forceinline__ double group_sum(const cg::thread_block_tile<TPS>& g, double x) {
#pragma unroll
  for (int o = TPS / 2; o > 0; o /= 2) x += g.shfl_xor(x, o);
  return x;
}

template <int TPS>
__device__ __forceinline__ double group_max(const cg::thread_block_tile<TPS>& g, double x) {
#pragma unroll
  for (int o = TPS / 2; o > 0; o /= 2) x = fmax(x, g.shfl_xor(x, o));
  return x;
}

// dlarfg's beta, tau and 1 / (alpha - beta) from alpha and ||x|| (x = 0: H = I, tau = 0).
struct Householder {
  double beta, tau, scal;
};
__device__ __forceinline__ Householder householder(double alpha, double xnorm) {
  if (xnorm == 0.0) return {alpha, 0.0, 1.0};
  const double beta = -copysign(hypot(alpha, xnorm), alpha);
  return {beta, (beta - alpha) / beta, 1.0 / (alpha - beta)};
}

// Step t of sweep s (host::chase_step's arithmetic) by the TPS lanes of group g. vs, ws: b doubles
// of shared memory each. Lane l owns the indices l, l + TPS, ... of every per-index loop. `a` holds
// the working band's columns from cb on (cb = 0: the whole band; cb = step_window(...).first: the
// step's window staged in shared memory), same ld. Every product and multiply-add is an explicit
// __dmul_rn / __fma_rn / __dsub_rn: the compiler's contraction choices differ between this loop
// form and chase_step_registers', and would make the two forms round differently.
template <int TPS>
__device__ void chase_step(const cg::thread_block_tile<TPS>& g, const ReflectorLayout& L,
                           double* __restrict__ a, long cb, long ld, long s, long t, double* vs,
                           double* ws, double* __restrict__ v_out, double* __restrict__ tau_out) {
  const int lane = static_cast<int>(g.thread_rank());
  const long b = L.b, n = L.n;
  const long first = L.first_row(s, t), len = L.length(s, t);
  const long c = t == 0 ? s : first - b;
  const long lm1 = ld - 1;                        // stride along a row of the band storage
  double* col = a + (first - c) + (c - cb) * ld;  // &A(first, c): the column it annihilates

  // 1. dlarfg on (A(first, c), A(first+1 .. first+len-1, c)). ||x|| scaled by max |x_i| (as
  // dnrm2 guards it): the bulges of long sweeps decay to underflow, and an x whose squares
  // underflow must still give the host's tau (2, a sign flip), not tau = 0.
  const double alpha = col[0];
  double big = 0.0;
  for (long i = lane; i < len; i += TPS)
    if (i >= 1) big = fmax(big, fabs(col[i]));
  big = group_max<TPS>(g, big);
  double xnorm = 0.0;
  if (big != 0.0) {
    const double inv = 1.0 / big;
    double sq = 0.0;
    for (long i = lane; i < len; i += TPS)
      if (i >= 1) {
        const double x = __dmul_rn(col[i], inv);
        sq = __fma_rn(x, x, sq);
      }
    xnorm = __dmul_rn(big, sqrt(group_sum<TPS>(g, sq)));
  }
  const auto [beta, tau, scal] = householder(alpha, xnorm);
  const long vofs = v_out ? L.vector_offset(s, t) : 0;
  for (long i = lane; i < b; i += TPS) {
    double vi = 0.0;
    if (i == 0) {
      vi = 1.0;
    } else if (i < len) {
      vi = __dmul_rn(col[i], scal);
      col[i] = 0.0;
    }
    vs[i] = vi;
    if (v_out) __stcs(v_out + vofs + i, vi);
  }
  if (lane == 0 && tau_out) __stcs(tau_out + L.index(s, t), tau);
  g.sync();
  if (lane == 0) col[0] = beta;  // nothing else of this step reads A(first, c)
  if (tau == 0.0) return;        // H = I (the caller syncs before the next step)

  // 2. Left: the rest of the bulge, A(J, j) := H A(J, j) for j = c+1 .. first-1 (a lane a column).
  for (long j = c + 1 + lane; j < first; j += TPS) {
    double* cj = a + (first - j) + (j - cb) * ld;  // &A(first, j), len contiguous entries
    double dot = 0.0;
    for (long i = 0; i < len; ++i) dot = __fma_rn(vs[i], cj[i], dot);
    dot = __dmul_rn(dot, tau);
    for (long i = 0; i < len; ++i) cj[i] = __fma_rn(-dot, vs[i], cj[i]);
  }

  // 4. Right: rows below J, A(r, J) := A(r, J) H (a lane a row; fills the next bulge). Disjoint
  // from what 2. and 3. touch, so no barrier between them.
  const long r1 = first + len + b < n ? first + len + b : n;
  for (long r = first + len + lane; r < r1; r += TPS) {
    double* row = a + (r - first) + (first - cb) * ld;  // &A(r, first); A(r, first+i) = row[i*lm1]
    double dot = 0.0;
    for (long i = 0; i < len; ++i) dot = __fma_rn(row[i * lm1], vs[i], dot);
    dot = __dmul_rn(dot, tau);
    for (long i = 0; i < len; ++i) row[i * lm1] = __fma_rn(-dot, vs[i], row[i * lm1]);
  }

  // 3. Both sides on B(J,J): p = tau B v, w = p - (tau/2)(v^T p) v, B -= v w^T + w v^T.
  double* d0 = a + (first - cb) * ld;  // &A(first, first); A(first+i, first+j) = d0[(i-j) + j*ld]
  double vp = 0.0;
  for (long k = lane; k < len; k += TPS) {
    double p = 0.0;
    for (long i = 0; i <= k; ++i) p = __fma_rn(d0[(k - i) + i * ld], vs[i], p);
    for (long i = k + 1; i < len; ++i) p = __fma_rn(d0[(i - k) + k * ld], vs[i], p);
    const double w = __dmul_rn(tau, p);
    ws[k] = w;
    vp = __fma_rn(vs[k], w, vp);
  }
  const double half = __dmul_rn(-0.5 * tau, group_sum<TPS>(g, vp));
  for (long k = lane; k < len; k += TPS) ws[k] = __fma_rn(half, vs[k], ws[k]);
  g.sync();
  for (long j = 0; j < len; ++j) {
    double* cj = d0 + j * ld - j;  // cj[i] = A(first+i, first+j)
    const double vj = vs[j], wj = ws[j];
    for (long i = j + lane; i < len; i += TPS)
      cj[i] = __dsub_rn(cj[i], __fma_rn(vs[i], wj, __dmul_rn(ws[i], vj)));
  }
}

// The right update of a step's last right-block row, left to the sweep's next step (see
// ReflectorLayout::prerequisite_deferred_given_last): lane b-1's dot product over all but the
// row's last entry, and every lane's v_i and the tau of the step that deferred it.
struct DeferredRow {
  bool pending = false;
  double partial, v, tau;
};

// Step t of sweep s for b <= 32 by a full warp with the entries it updates in registers: lane l
// holds column c+1+l of the left block, row first+len+l of the right block and row l of the
// two-sided block B(J,J), loaded all at once, so the step waits on shared memory a few times
// instead of at every entry of chase_step's dependent loops. The arithmetic is chase_step's
// operation for operation (same dot product orders, same trees, the same explicit roundings), so
// the same bits. d0: &A(first, first) in the window (the two-sided and right blocks are addressed
// from it), e0: where A(first, first) would be for the columns left of first (the annihilated
// column and the left block): d0 itself in a contiguous window, the end of the left half when the
// window is held as two halves (chase_sweeps); ld the window's ld. index: L.index(s, t).
// FULL (b = 32, so ld = 64; a full reflector and a full right block: every step but a sweep's
// last two): no per-entry conditions and constant offsets, so the loads, products and stores are
// straight-line code; the lanes past the left block read a column inside the window and drop what
// they compute. v and w reach the lanes through shuffles.
// The deferred row: a step whose right block reaches row first + 2b - 1 leaves that row's update to
// the next step (dfr): it computes the row's dot product up to its last entry, which sweep s-1's
// step t+2 may still be rewriting, and stores the row unchanged. The next step finds the row as
// row b-1 of its annihilated column and left block, and finishes the update there before its own
// reflector: the same operations in the same order as in chase_step, so the same bits.
template <bool FULL>
__device__ void chase_step_registers(const cg::thread_block_tile<32>& g, const ReflectorLayout& L,
                                     double* d0, double* e0, long ld_, long s, long t, long index,
                                     DeferredRow& dfr, double* __restrict__ v_out,
                                     double* __restrict__ tau_out) {
  constexpr int kLanes = 32;
  const int lane = static_cast<int>(g.thread_rank());
  const long b = L.b, n = L.n;
  const long first = L.first_row(s, t);
  const int len = static_cast<int>(L.length(s, t));
  const long c = t == 0 ? s : first - b;
  const int ld = FULL ? 2 * kLanes : static_cast<int>(ld_), lm1 = ld - 1;
  // A(first+i, first+j) = d0[(i-j) + j*ld], i >= j
  const int fc = static_cast<int>(first - c);
  double* col = e0 + fc - fc * ld;  // &A(first, c)
  const int nl = fc - 1;            // left-block columns c+1 .. first-1
  const long r0 = first + len;      // right-block rows r0 .. min(r0 + b, n) - 1
  const int nr = static_cast<int>((r0 + b < n ? r0 + b : n) - r0);
  const int jl = FULL && lane >= nl ? nl - 1 : lane;  // t = 0 (nl = 0): jl = -1, column c
  double* cl = col + ld * (jl + 1) - (jl + 1);        // &A(first, c+1+jl), contiguous in i
  double* rw = d0 + len + lane;                       // &A(r0+lane, first), stride ld - 1
  double* bl = d0 + lane;  // B(lane, i) = bl[i * lm1] for i <= lane, bl[lane * lm1 + i - lane] else

  double xl[kLanes], xr[kLanes], xb[kLanes];
  double x = lane < len ? col[lane] : 0.0;
#pragma unroll
  for (int i = 0; i < kLanes; ++i) {
    if constexpr (FULL) {
      xl[i] = cl[i];
      xr[i] = rw[i * lm1];
      xb[i] = bl[i <= lane ? i * lm1 : lane * lm1 + i - lane];
    } else {
      xl[i] = lane < nl && i < len ? cl[i] : 0.0;
      xr[i] = lane < nr && i < len ? rw[i * lm1] : 0.0;
      xb[i] = lane < len && i < len ? bl[i <= lane ? i * lm1 : lane * lm1 + i - lane] : 0.0;
    }
  }

  // 0. The previous step's deferred row (row b-1 here: lane b-1's x, column c, is its entry 0;
  // lane l's xl[b-1], column c+1+l, its entry l+1).
  const int bm1 = FULL ? kLanes - 1 : static_cast<int>(b) - 1;
  const bool finished = dfr.pending;  // this step completes the previous step's row
  double finished_y = 0.0;            // the row's entry in this lane's left-block column
  if (finished) {
    double y = x;
    if (lane != bm1) {
#pragma unroll
      for (int i = 0; i < kLanes; ++i)
        if (i == bm1) y = xl[i];
    }
    const double last = g.shfl(y, bm1 - 1);  // entry b-1: column c+b-1, from sweep s-1
    double dot = lane == bm1 ? __dmul_rn(__fma_rn(last, dfr.v, dfr.partial), dfr.tau) : 0.0;
    dot = g.shfl(dot, bm1);
    const double vi = g.shfl(dfr.v, lane == bm1 ? 0 : lane + 1);
    y = __fma_rn(-dot, vi, y);
    finished_y = y;
    if (lane == bm1) {
      x = y;
    } else if (lane < bm1) {
#pragma unroll
      for (int i = 0; i < kLanes; ++i)
        if (i == bm1) xl[i] = y;
    }
    dfr.pending = false;
  }
  // Whether this step defers its row first + 2b - 1 (then len = b and the sweep has a next step).
  const bool defer = FULL || r0 + b - 1 < n;

  // 1. dlarfg, as chase_step (one entry per lane).
  const double alpha = g.shfl(x, 0);
  double big = 0.0;
  if (lane >= 1 && lane < len) big = fmax(big, fabs(x));
  big = group_max<kLanes>(g, big);
  double xnorm = 0.0;
  if (big != 0.0) {
    const double inv = 1.0 / big;
    double sq = 0.0;
    if (lane >= 1 && lane < len) {
      const double xs = __dmul_rn(x, inv);
      sq = __fma_rn(xs, xs, sq);
    }
    xnorm = __dmul_rn(big, sqrt(group_sum<kLanes>(g, sq)));
  }
  const auto [beta, tau, scal] = householder(alpha, xnorm);
  const double vk = lane == 0 ? 1.0 : lane < len ? __dmul_rn(x, scal) : 0.0;
  if (v_out && lane < b) __stcs(v_out + index * b + lane, vk);
  if (lane == 0 && tau_out) __stcs(tau_out + index, tau);
  if (lane >= 1 && lane < len) col[lane] = 0.0;
  if (lane == 0) col[0] = beta;
  if (tau == 0.0) {  // H = I; the finished row still goes out (the other stores come at the end)
    if (finished) {
      g.sync();  // in FULL, lane b-1 loaded lane b-2's column
      if (lane < nl) cl[bm1] = finished_y;
    }
    return;
  }
  // v_i, v_{i+1} (w likewise) for every lane. (Broadcasts from shared memory instead: the compiler
  // hoists them all, and the kernel spills.)
  const auto pair = [&](double own, int i) { return double2{g.shfl(own, i), g.shfl(own, i + 1)}; };

  // 2.-4. The three dot products of each lane (left column, right row, p of the two-sided block),
  // each in the host's order.
  double dl = 0.0, dr = 0.0, p = 0.0, partial = 0.0;
#pragma unroll
  for (int i = 0; i < kLanes; i += 2) {
    const double2 v2 = pair(vk, i);
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (FULL || i + h < len) {
        const double vi = h ? v2.y : v2.x;
        dl = __fma_rn(vi, xl[i + h], dl);
        if (i + h == (FULL ? kLanes : len) - 1)
          partial = dr;  // the deferred row's dot without its last entry
        dr = __fma_rn(xr[i + h], vi, dr);
        p = __fma_rn(xb[i + h], vi, p);
      }
  }
  dl = __dmul_rn(dl, tau);
  dr = __dmul_rn(dr, tau);
  double wk = __dmul_rn(tau, p);
  double vp = 0.0;
  if (lane < len) vp = __fma_rn(vk, wk, vp);
  const double half = __dmul_rn(-0.5 * tau, group_sum<kLanes>(g, vp));
  wk = __fma_rn(half, vk, wk);
#pragma unroll
  for (int i = 0; i < kLanes; i += 2) {
    const double2 v2 = pair(vk, i), w2 = pair(wk, i);
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (FULL || i + h < len) {
        const double vi = h ? v2.y : v2.x, wi = h ? w2.y : w2.x;
        xl[i + h] = __fma_rn(-dl, vi, xl[i + h]);
        xr[i + h] = __fma_rn(-dr, vi, xr[i + h]);
        if (i + h <= lane) xb[i + h] = __dsub_rn(xb[i + h], __fma_rn(vk, wi, __dmul_rn(wk, vi)));
      }
  }

  if (defer) dfr = DeferredRow{true, partial, vk, tau};
  const bool store_row = (FULL || lane < nr) && !(defer && lane == bm1);

  // Lanes read entries that other lanes store (B(i, lane) for i > lane; in FULL, the discarded
  // columns): the stores come after every lane's loads.
  g.sync();
#pragma unroll
  for (int i = 0; i < kLanes; ++i)
    if (FULL || i < len) {
      if (lane < nl) cl[i] = xl[i];
      if (store_row) rw[i * lm1] = xr[i];
      if ((FULL || lane < len) && i <= lane) bl[i * lm1] = xb[i];
    }
}

// Shared memory of one sweep's group: vs and ws (b doubles each) and, staged, a window of 2b
// columns of the working band.
std::size_t staged_bytes_per_sweep(long b, long ld, bool stage) {
  return sizeof(double) * static_cast<std::size_t>(2 * ((b + 1) & ~1L) + (stage ? 2 * b * ld : 0));
}

// The columns of the working band that step (s,t) reads or writes: [c, first + len), each in full
// (all ld rows of band storage): the annihilated column c (s for t = 0, first - b after), the
// bulge's columns, the two-sided block and, in the same columns, the rows below it that the right
// update fills. At most 2b columns, 4b^2 doubles.
__device__ __forceinline__ void step_window(const ReflectorLayout& L, long s, long t, long* c0,
                                            long* c1) {
  const long first = L.first_row(s, t);
  *c0 = t == 0 ? s : first - L.b;
  *c1 = first + L.length(s, t);
}

// Copies count doubles with the group's lanes, in 16-byte pairs: src and dst are at the same
// offset modulo 16 bytes (a window and the band columns it holds; ld is even), and a range that
// starts at an odd double (odd b) takes its first one alone.
template <int TPS>
__device__ __forceinline__ void group_copy(const cg::thread_block_tile<TPS>& g, double* dst,
                                           const double* src, long count) {
  const int lane = static_cast<int>(g.thread_rank());
  if (count > 0 && (reinterpret_cast<std::uintptr_t>(dst) & 15)) {
    if (lane == 0) dst[0] = src[0];
    ++dst, ++src, --count;
  }
  const long pairs = count / 2;
  const double2* s2 = reinterpret_cast<const double2*>(src);
  double2* d2 = reinterpret_cast<double2*>(dst);
  for (long k = lane; k < pairs; k += TPS) d2[k] = s2[k];
  if ((count & 1) && lane == 0) dst[count - 1] = src[count - 1];
}

// The persistent kernel: group gid of G takes sweeps gid, gid + G, ... (see bulge_chasing.cuh).
// STAGE: each step copies its window (step_window) into shared memory with all loads in flight at
// once, runs on it, and copies it back. The step's arithmetic is the same (bitwise the same
// results); what changes is latency: from the band in L2 each of the step's dependent inner loops
// waits on L2 for every entry, from shared memory on a far shorter latency. Writing the whole
// window back is safe: no other sweep touches these columns while the step runs (the
// prerequisite rule keeps sweep s-1 three steps ahead, whose columns start at first + 2b, and
// sweep s+1 three behind, whose columns end below c).
// REGS (TPS = 32, STAGE, b <= 32): the window comes in through asynchronous copies (cp.async, all
// of it in flight without registers), the step is chase_step_registers, and sweeps run two steps
// apart instead of three (ReflectorLayout::prerequisite_deferred_given_last: each step leaves one
// row's update to the sweep's next step). Sweeps s-1 and s+1 then run next to this step on the
// window's two edge columns, so it writes back only the rows of those that are its own (see the
// write-back below). With b = 32 the window [first - 32, first + 32) of a FULL step is held as two
// halves of 32 columns, and the right half stays in shared memory as the next step's left half:
// a FULL step copies in its right half and, of the kept left half, only the bottom of its last
// column (rewritten meanwhile by sweep s-1's step t+1 ... t+2), and writes back its left half and
// the top of its right half's first column. That is safe for the followers: step (s+1, t') starts
// after (s, t'+1) completed and touches columns below first(s, t'+1) and the top 32 rows of
// column first(s, t'+1), all written back by then; and for the step itself: it reads its
// right half after (s-1, t+1) completed, and sweep s-1 then still works on columns from first + 31
// on only, rows from first + 63 on (the entries this step neither uses nor writes back).
template <int TPS, bool STAGE, bool REGS>
__global__ void chase_sweeps(ReflectorLayout L, double* __restrict__ a, long ld,
                             double* __restrict__ v_out, double* __restrict__ tau_out,
                             int* progress) {
  extern __shared__ double smem[];
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<TPS> g = cg::tiled_partition<TPS>(block);
  const long per_block = static_cast<long>(g.meta_group_size());
  const long gid = static_cast<long>(blockIdx.x) * per_block + g.meta_group_rank();
  const long G = static_cast<long>(gridDim.x) * per_block;
  const long window = STAGE ? 2 * L.b * ld : 0;  // doubles of a staged window
  // vs and ws padded to an even length: ptxas widens chase_step's vs[i] loads to 16 bytes
  // (LDS.128 of vs[i], vs[i+1], the second unused), which for odd b read ws[0] while lane 0
  // writes it (racecheck's intra-warp warning at lines 151/154); the pad keeps them inside vs.
  const long bs = (L.b + 1) & ~1L;
  double* vs = smem + (2 * bs + window) * g.meta_group_rank();
  double* ws = vs + bs;
  double* win = ws + bs;  // 16-byte aligned: 2 bs doubles after a 16-byte aligned vs
  const bool leader = g.thread_rank() == 0;

  for (long s = gid; s < L.sweeps(); s += G) {
    cuda::atomic_ref<int, cuda::thread_scope_device> mine(progress[s]);
    cuda::atomic_ref<int, cuda::thread_scope_device> before(progress[s > 0 ? s - 1 : 0]);
    int seen = 0;  // steps of sweep s-1 known complete (leader only)
    const long steps = L.steps(s);
    const long last_before = s > 0 ? L.steps(s - 1) - 1 : 0;
    const long index0 = L.sweep_offset(s);
    int half = 0;       // REGS, b = 32: the step's left half is win + half * 32 ld
    bool kept = false;  // the previous step's right half is in shared memory, not written back
    DeferredRow dfr;    // REGS
    for (long t = 0; t < steps; ++t) {
      if (s > 0) {
        const int need =
            static_cast<int>(REGS
                                 ? ReflectorLayout::prerequisite_deferred_given_last(t, last_before)
                                 : ReflectorLayout::prerequisite_given_last(t, last_before)) +
            1;
        if (leader && seen < need) {
          unsigned ns = 16;
          while ((seen = before.load(cuda::memory_order_acquire)) < need) {
            __nanosleep(ns);
            ns = ns < 256 ? 2 * ns : ns;
          }
        }
        g.sync();  // the other lanes' reads come after the leader's acquire
      }
      if constexpr (REGS) {
        // Sweep s-1 may be one step behind what chase_step needs: its step t+2 runs meanwhile on
        // the columns from first + b - 1 on, rows from first + 2b - 1 on (the deferred row's
        // last entry and below). And sweep s+1's step t-2, which waited for (s, t-1) only, runs
        // on the columns up to c, rows up to first (the rows of column c above this step's).
        // So the write-back leaves out column c's top b entries (t > 0) and the window's last
        // column's entries from row first + 2b - 1 on: the range [c ld + b, (first + b - 1) ld +
        // b) of the band storage, stale values read in but never written out.
        const long b = L.b, first = L.first_row(s, t), c = t == 0 ? s : first - b;
        const long skip = t == 0 ? 0 : b;
        // One cp.async per 16-byte pair, each pair by one lane (cg::memcpy_async's tile path
        // clamps the ranks past a partial last round onto its last pair, so that pair is written
        // by up to 32 lanes at once: same bytes, but racecheck's write-write reports).
        const auto copy_in = [&](double* dst, long from, long to) {  // band storage offsets
          const long pairs = (to - from) / 2;  // from, to even: 16-byte aligned on both sides
          const double2* s2 = reinterpret_cast<const double2*>(a + from);
          double2* d2 = reinterpret_cast<double2*>(dst);
          for (long k = g.thread_rank(); k < pairs; k += TPS)
            __pipeline_memcpy_async(d2 + k, s2 + k, sizeof(double2));
          __pipeline_commit();
        };
        if (b == 32 && L.length(s, t) == 32 && first + 64 <= L.n) {
          const long half_size = 32 * ld;
          double* e0 = win + half * half_size + half_size;  // column first, seen from the left
          double* d0 = win + (1 - half) * half_size;        // column first: the right half
          if (!kept) {
            copy_in(e0 + (c - first) * ld, c * ld, first * ld);
            copy_in(d0, first * ld, (first + 32) * ld);
          } else if (e0 == d0) {  // kept left half, then the right half, contiguous
            copy_in(e0 - ld + 32, (first - 1) * ld + 32, (first + 32) * ld);
          } else {
            copy_in(e0 - ld + 32, (first - 1) * ld + 32, first * ld);
            copy_in(d0, first * ld, (first + 32) * ld);
          }
          cg::wait(g);
          chase_step_registers<true>(g, L, d0, e0, ld, s, t, index0 + t, dfr, v_out, tau_out);
          g.sync();
          // The left half, and the top of column first (sweep s+1's step t-1 needs it; the rest
          // of the right half is this sweep's next step's left half).
          group_copy<TPS>(g, a + c * ld + skip, e0 + (c - first) * ld + skip,
                          (first - c) * ld - skip);
          group_copy<TPS>(g, a + first * ld, d0, 32);
          kept = true;
          half ^= 1;
        } else {
          long c0 = 0, c1 = 0;
          step_window(L, s, t, &c0, &c1);
          if (kept) {  // columns [c0, first) = [first - 32, first) are in win + half * 32 ld
            if (half) {
              group_copy<TPS>(g, win, win + 32 * ld, 32 * ld);
              g.sync();  // read out before the copy below overwrites it
            }
            copy_in(win + 31 * ld + 32, (first - 1) * ld + 32, c1 * ld);
            kept = false;
            half = 0;
          } else {
            copy_in(win, c0 * ld, c1 * ld);
          }
          cg::wait(g);
          double* d0 = win + (first - c0) * ld;
          chase_step_registers<false>(g, L, d0, d0, ld, s, t, index0 + t, dfr, v_out, tau_out);
          g.sync();
          group_copy<TPS>(g, a + c0 * ld + skip, win + skip, (c1 - 1 - c0) * ld + b - skip);
        }
      } else if (STAGE) {
        long c0 = 0, c1 = 0;
        step_window(L, s, t, &c0, &c1);
        group_copy<TPS>(g, win, a + c0 * ld, (c1 - c0) * ld);
        g.sync();
        chase_step<TPS>(g, L, win, c0, ld, s, t, vs, ws, v_out, tau_out);
        g.sync();
        group_copy<TPS>(g, a + c0 * ld, win, (c1 - c0) * ld);
      } else {
        chase_step<TPS>(g, L, a, 0, ld, s, t, vs, ws, v_out, tau_out);
      }
      g.sync();  // every lane's writes before the leader's release
      if (leader) mine.store(static_cast<int>(t + 1), cuda::memory_order_release);
    }
  }
}

template <int TPS, bool STAGE, bool REGS = false>
void launch_chase(const ReflectorLayout& L, double* a, long ld, double* v, double* tau,
                  int* progress, int per_block, const BulgeChasingTunables& tun,
                  cudaStream_t stream) {
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto kernel = chase_sweeps<TPS, STAGE, REGS>;
  // The register step's 255 registers per thread allow 8 warps per block: more sweeps per block
  // than that share the SMs' blocks instead (the schedule, not the results, changes).
  cudaFuncAttributes attr{};
  PIPEVD_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  per_block = std::max(1, std::min(per_block, attr.maxThreadsPerBlock / TPS));
  const int threads = per_block * TPS;
  std::size_t smem = staged_bytes_per_sweep(L.b, ld, STAGE) * per_block;
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
    throw GpuError("bulge_chase: a block of " + std::to_string(threads) + " threads and " +
                   std::to_string(smem) + " bytes of shared memory cannot be resident");
  const int per_sm = tun.blocks_per_sm > 0 ? std::min(tun.blocks_per_sm, resident) : resident;
  long wanted = (L.sweeps() + per_block - 1) / per_block;  // more groups than sweeps idle
  if (tun.max_blocks > 0) wanted = std::min<long>(wanted, tun.max_blocks);
  int grid = static_cast<int>(std::max(1L, std::min<long>(wanted, 1L * per_sm * sms)));
  ReflectorLayout layout = L;
  void* args[] = {&layout, &a, &ld, &v, &tau, &progress};
  // Cooperative: every block resident at once (or an error), which the flags' waits rely on.
  // Where fewer SMs are ours than the occupancy query saw (MPS, a GPU shared with other engine
  // ranks or programs) the runtime refuses the grid: half as many blocks, each looping over more
  // sweep groups, until it fits (the schedule, not the results, changes).
  launch_cooperative_halving("bulge_chasing", reinterpret_cast<const void*>(kernel), grid,
                             dim3(threads), args, smem, stream);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// Staged windows need (2b + 2b ld) doubles of shared memory per sweep (32.5 KB at b = 32): the
// sweeps per block shrink to what the device's per-block limit holds, and without room for even
// one (b above ~80) the steps run on the band in place. The schedule never changes the results.
template <int TPS>
void launch_chase(const ReflectorLayout& L, double* a, long ld, double* v, double* tau,
                  int* progress, const BulgeChasingTunables& tun, cudaStream_t stream) {
  int per_block = std::max(1, tun.sweeps_per_block);
  if (tun.stage_window) {
    int device = 0, optin = 0;
    PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
    PIPEVD_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const std::size_t per_sweep = staged_bytes_per_sweep(L.b, ld, true);
    const int fit = static_cast<int>(static_cast<std::size_t>(optin) / per_sweep);
    if (fit >= 1) {
      if constexpr (TPS == 32)
        if (tun.register_step && L.b <= 32) {
          launch_chase<32, true, true>(L, a, ld, v, tau, progress, std::min(per_block, fit), tun,
                                       stream);
          return;
        }
      launch_chase<TPS, true>(L, a, ld, v, tau, progress, std::min(per_block, fit), tun, stream);
      return;
    }
  }
  launch_chase<TPS, false>(L, a, ld, v, tau, progress, per_block, tun, stream);
}

}  // namespace

BulgeChasingTunables default_bulge_chasing_tunables(int device, long n, long b) {
  (void)device;
  // A full warp per sweep and one block per SM: the chase is a chain of dependent steps, and each
  // step's latency grows with the warps sharing its SM. The sweeps worth having in flight grow
  // with the steps of a sweep, about n / b (a sweep stays two or three steps behind the one before
  // it, so a longer sweep leaves room for more behind it): 2 per block up to n / b = 1024, 4 from
  // 2048, 8 from 4096; more only adds latency to every step. The device is not consulted: the
  // GPUs this is built for (Hopper) share the SM count and L2 the choice rests on. The schedule
  // never changes the results (tests/test_gpu_bulge_chasing.cpp); threads_per_sweep does (its
  // reduction trees), so it stays 32.
  const long steps = b > 0 ? n / b : n;
  return BulgeChasingTunables{32, steps >= 4096 ? 8 : steps >= 2048 ? 4 : 2, 1};
}

BulgeChasingTunables bulge_chasing_beside_other_work(BulgeChasingTunables tun, int device, long b) {
  // JOBZ = V with SBR-back next to the chase: alone the chase takes about the same time on half the
  // SMs with twice the sweeps per block (it is latency-bound, not short of SMs); next to SBR-back's
  // GEMMs, whose blocks would otherwise share its SMs and slow every step, keeping SMs to itself
  // keeps its latency, and the GEMMs have the rest of the GPU.
  int sms = 0, optin = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  PIPEVD_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const long bw = std::max(1L, b);
  const int per_block = 2 * tun.sweeps_per_block;
  const std::size_t bytes = staged_bytes_per_sweep(bw, working_ld(bw), true) * per_block;
  // Only where the doubled blocks still stage their windows and fit a block of the register step.
  if (!tun.stage_window || sms < 2 || bytes > static_cast<std::size_t>(optin) ||
      per_block * tun.threads_per_sweep > 256)
    return tun;
  tun.sweeps_per_block = per_block;
  tun.max_blocks = sms / 2;
  tun.exclusive_sms = true;
  return tun;
}

BulgeChasingTunables with_overrides(BulgeChasingTunables tun, const BulgeChasingOverrides& o) {
  if (o.sweeps_per_block >= 0) tun.sweeps_per_block = std::max(1, o.sweeps_per_block);
  if (o.max_blocks >= 0) tun.max_blocks = o.max_blocks;
  if (o.exclusive_sms >= 0) tun.exclusive_sms = o.exclusive_sms != 0;
  return tun;
}

BulgeChasingTunables default_bulge_chasing_tunables(int device, long b) {
  (void)device;
  (void)b;
  // The n = 16384 choice (threads_per_sweep {16, 32} x sweeps_per_block {2, 4, 8} x
  // blocks_per_sm {1, 2, all}, b = 16, 32, 64).
  return BulgeChasingTunables{32, 2, 1};
}

std::size_t bulge_chase_workspace_bytes(long n, long b) {
  const long bw = std::max(0L, std::min(b, n - 1));
  const std::size_t band = sizeof(double) * static_cast<std::size_t>(n * working_ld(bw));
  return band + 256 + sizeof(int) * static_cast<std::size_t>(std::max(1L, n));
}

void bulge_chase(long n, long b, const double* d_ab, long ldab, double* d_d, double* d_e,
                 double* d_v, double* d_tau, void* d_work, const BulgeChasingTunables& tun,
                 cudaStream_t stream) {
  const long bw = std::max(0L, std::min(b, n - 1));
  if (n < 0 || b < 0 || ldab < bw + 1)
    throw std::invalid_argument("gpu::bulge_chase: n = " + std::to_string(n) +
                                ", b = " + std::to_string(b) + ", ldab = " + std::to_string(ldab));
  const int tps = tun.threads_per_sweep;
  if (tps != 8 && tps != 16 && tps != 32)
    throw std::invalid_argument("gpu::bulge_chase: threads_per_sweep = " + std::to_string(tps) +
                                " is not 8, 16 or 32");
  if (n == 0) return;
  const ReflectorLayout L{n, bw};
  const long ld = working_ld(bw);
  double* a = static_cast<double*>(d_work);
  int* progress = reinterpret_cast<int*>(static_cast<char*>(d_work) +
                                         ((sizeof(double) * n * ld + 255) / 256) * 256);
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<long>(4096, (n * ld + threads - 1) / threads));
  copy_band_in<<<blocks, threads, 0, stream>>>(n, bw, d_ab, ldab, a, ld);
  PIPEVD_CUDA_CHECK_LAUNCH();
  if (L.sweeps() > 0) {
    PIPEVD_CUDA_CHECK(cudaMemsetAsync(progress, 0, sizeof(int) * L.sweeps(), stream));
    if (tps == 32)
      launch_chase<32>(L, a, ld, d_v, d_tau, progress, tun, stream);
    else if (tps == 16)
      launch_chase<16>(L, a, ld, d_v, d_tau, progress, tun, stream);
    else
      launch_chase<8>(L, a, ld, d_v, d_tau, progress, tun, stream);
  }
  const int eblocks = static_cast<int>(std::min<long>(1024, (n + threads - 1) / threads));
  extract_tridiagonal<<<eblocks, threads, 0, stream>>>(n, bw, a, ld, d_d, d_e);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

void bulge_chase_from_host(long n, long b, const double* ab, long ldab, double* d, double* e,
                           ReflectorStore* U, const BulgeChasingTunables& tun) {
  const long bw = std::max(0L, std::min(b, n - 1));
  if (n < 0 || b < 0 || ldab < bw + 1)
    throw std::invalid_argument("gpu::bulge_chase_from_host: n = " + std::to_string(n) +
                                ", b = " + std::to_string(b) + ", ldab = " + std::to_string(ldab));
  if (U) *U = ReflectorStore(n, bw);
  if (n == 0) return;
  const ReflectorLayout L{n, bw};
  double *d_ab = nullptr, *d_d = nullptr, *d_e = nullptr, *d_v = nullptr, *d_tau = nullptr;
  void* d_work = nullptr;
  const std::size_t nab = sizeof(double) * n * ldab;
  const std::size_t nv = sizeof(double) * std::max(1L, L.vector_array_size());
  const std::size_t nt = sizeof(double) * std::max(1L, L.count());
  try {
    PIPEVD_CUDA_CHECK(cudaMalloc(&d_ab, nab));
    PIPEVD_CUDA_CHECK(cudaMalloc(&d_d, sizeof(double) * n));
    PIPEVD_CUDA_CHECK(cudaMalloc(&d_e, sizeof(double) * n));
    PIPEVD_CUDA_CHECK(cudaMalloc(&d_work, bulge_chase_workspace_bytes(n, b)));
    if (U) {
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_v, nv));
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_tau, nt));
    }
    PIPEVD_CUDA_CHECK(cudaMemcpy(d_ab, ab, nab, cudaMemcpyHostToDevice));
    bulge_chase(n, b, d_ab, ldab, d_d, d_e, d_v, d_tau, d_work, tun, nullptr);
    PIPEVD_CUDA_CHECK(cudaMemcpy(d, d_d, sizeof(double) * n, cudaMemcpyDeviceToHost));
    if (n > 1 && e)
      PIPEVD_CUDA_CHECK(cudaMemcpy(e, d_e, sizeof(double) * (n - 1), cudaMemcpyDeviceToHost));
    if (U && L.count() > 0) {
      PIPEVD_CUDA_CHECK(cudaMemcpy(U->v.data(), d_v, sizeof(double) * L.vector_array_size(),
                                   cudaMemcpyDeviceToHost));
      PIPEVD_CUDA_CHECK(
          cudaMemcpy(U->tau.data(), d_tau, sizeof(double) * L.count(), cudaMemcpyDeviceToHost));
    }
  } catch (...) {
    cudaFree(d_ab), cudaFree(d_d), cudaFree(d_e), cudaFree(d_v), cudaFree(d_tau), cudaFree(d_work);
    throw;
  }
  cudaFree(d_ab), cudaFree(d_d), cudaFree(d_e), cudaFree(d_v), cudaFree(d_tau), cudaFree(d_work);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bulge_chasing_kernel_anchor() {
  return reinterpret_cast<const void*>(&extract_tridiagonal);
}

}  // namespace pipevd::gpu
