// Complex BC-back (see bc_back_complex.cuh).
#include <cuda_pipeline.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/cuda_check.hpp"
#include "gpu/bc_back_complex.cuh"
#include "gpu/bc_back_complex_tensor.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"

namespace pipevd::gpu {
namespace {

using Z = cuDoubleComplex;  // a double2: one 16-byte load or store

constexpr int kMaxThreads = 256;
constexpr int kGenericThreads = 128;

__device__ __forceinline__ Z zero() { return make_cuDoubleComplex(0.0, 0.0); }

// Reflectors of bandwidth b <= BMAX in groups of G sweeps; LANES threads per row, R rows per
// thread. Window column c (0 .. W-1, W = BMAX + G - 1, padded to WP = LANES WJ) of a row is in slot
// j of lane q where c = LANES j + q. The staged vector of reflector g is stored at its window
// position (vs[g][c] = v_g[c - g], exact zeros elsewhere), so the compile-time loops over slots
// need no bounds. The lanes of a row read LANES consecutive complex entries, the rows of a warp the
// same ones (a broadcast). With slide (b == BMAX, a multiple of LANES), the window of step t-1 is
// the one of step t moved by b = LANES SH columns: the slots SH.. take the slots 0.., only the
// first SH slots are loaded and the last SH stored per step. A slot past W but before n then
// carries a column that the group does not touch (its vector entries are zero) and is stored
// unchanged later.
//
// With PF (prefetch), the vectors and taus of the next step of the group are copied to a raw
// shared buffer asynchronously (cp.async, 16 bytes an entry) while the current step computes, and
// scattered to their window positions at the start of the next step.
template <int BMAX, int G, int LANES, int R, bool PF>
__global__ void __launch_bounds__(kMaxThreads)
    bc_back_rows(ReflectorLayout L, const Z* __restrict__ v, const Z* __restrict__ tau, long m,
                 Z* __restrict__ x, long ldx) {
  constexpr int W = BMAX + G - 1;
  constexpr int WJ = (W + LANES - 1) / LANES;  // slots per row and lane
  constexpr int WP = LANES * WJ;               // staged vector stride (entries)
  constexpr int NJ = BMAX / LANES + 1;         // slots one reflector can touch
  constexpr int SH = BMAX / LANES;             // slide shift (slots)
  static_assert(BMAX % LANES == 0, "a window slides by whole slots");
  extern __shared__ __align__(16) double smem[];
  Z* vs = reinterpret_cast<Z*>(smem);                        // G x WP
  Z* ts = vs + G * WP;                                       // G taus
  Z* raw_v = ts + G;                                         // PF: G x BMAX, the next step's
  Z* raw_t = raw_v + (PF ? G * BMAX : 0);                    // PF: G, its taus
  long* so = reinterpret_cast<long*>(raw_t + (PF ? G : 0));  // G sweep offsets

  const int nt = static_cast<int>(blockDim.x);
  const int q = static_cast<int>(threadIdx.x) % LANES;
  const int rg = static_cast<int>(threadIdx.x) / LANES;
  const long row0 = static_cast<long>(blockIdx.x) * (nt / LANES) * R + rg;
  const long n = L.n, b = L.b, sweeps = L.sweeps();
  const int bi = static_cast<int>(b);
  const long wlen = b + G - 1;  // columns of the window that reflectors can touch
  const bool slide = (b == BMAX);
  bool active[R];
  Z* xr[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const long row = row0 + static_cast<long>(i) * (nt / LANES);
    active[i] = row < m;  // inactive rows compute on zeros: the shuffles need every lane
    xr[i] = x + (active[i] ? row : 0);
  }
  for (int k = threadIdx.x; k < G * WP; k += nt) vs[k] = zero();
  Z xl[R][WJ];

  for (long s0 = 0; s0 < sweeps; s0 += G) {
    const long s1 = s0 + G < sweeps ? s0 + G : sweeps;
    auto last_sweep = [&](long t) { return static_cast<int>(L.last_sweep_with_step(t, s1) - s0); };
    // PF: step t's vectors (contiguous per sweep) and taus to raw_v / raw_t, asynchronously.
    auto prefetch = [&](long t) {
      const int gl = last_sweep(t);
      for (int k = threadIdx.x; k < (gl + 1) * bi; k += nt) {
        const int g = k / bi, i = k - g * bi;
        __pipeline_memcpy_async(raw_v + k, v + (so[g] + t) * b + i, sizeof(Z));
      }
      for (int g = threadIdx.x; g <= gl; g += nt)
        __pipeline_memcpy_async(raw_t + g, tau + so[g] + t, sizeof(Z));
      __pipeline_commit();
    };
    __syncthreads();  // the previous group's offsets are no longer read; vs zeroed
    for (int g = threadIdx.x; g < G; g += nt) so[g] = s0 + g < s1 ? L.sweep_offset(s0 + g) : 0;
    const long tmax = L.steps(s0) - 1;
    if (PF) {
      __syncthreads();  // so written
      prefetch(tmax);
    }
    for (long t = tmax; t >= 0; --t) {
      const int glast = last_sweep(t);
      if (PF) __pipeline_wait_prior(0);
      __syncthreads();  // the previous step's vectors are no longer read; so / raw written
      // Only the span [g, g + b) of row g is written: the rest stays zero from the start.
      for (int k = threadIdx.x; k < (glast + 1) * bi; k += nt) {
        const int g = k / bi, i = k - g * bi;
        vs[g * WP + g + i] = PF ? raw_v[k] : v[(so[g] + t) * b + i];
      }
      for (int g = threadIdx.x; g < G; g += nt)
        ts[g] = g <= glast ? (PF ? raw_t[g] : tau[so[g] + t]) : zero();
      __syncthreads();
      if (PF && t > 0) prefetch(t - 1);  // raw_v / raw_t were consumed above
      const long base = s0 + 1 + t * b;  // first_row(s0, t)
      const bool full = !slide || t == tmax;
#pragma unroll
      for (int j = 0; j < WJ; ++j) {
        if (!full && j >= SH) break;
        const int c = LANES * j + q;
        const long col = base + c;
        const bool in = col < n && (slide || c < wlen);
#pragma unroll
        for (int i = 0; i < R; ++i) xl[i][j] = (in && active[i]) ? xr[i][col * ldx] : zero();
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        if (g > glast) break;  // uniform over the block
        const int jlo = g / LANES;
        Z vv[NJ];
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
          if (jlo + jj < WJ) vv[jj] = vs[g * WP + LANES * (jlo + jj) + q];
        const Z tg = ts[g];
#pragma unroll
        for (int i = 0; i < R; ++i) {
          // w = x v (no conjugate): four independent chains, combined once.
          double rr = 0.0, ii = 0.0, ri = 0.0, ir = 0.0;
#pragma unroll
          for (int jj = 0; jj < NJ; ++jj)
            if (jlo + jj < WJ) {
              const Z xv = xl[i][jlo + jj];
              rr = fma(vv[jj].x, xv.x, rr);
              ii = fma(vv[jj].y, xv.y, ii);
              ri = fma(vv[jj].x, xv.y, ri);
              ir = fma(vv[jj].y, xv.x, ir);
            }
          double wr = rr - ii, wi = ri + ir;
#pragma unroll
          for (int o = 1; o < LANES; o *= 2) {
            wr += __shfl_xor_sync(0xffffffffu, wr, o);
            wi += __shfl_xor_sync(0xffffffffu, wi, o);
          }
          // x -= (tau w) conj(v)
          const double twr = fma(tg.x, wr, -tg.y * wi), twi = fma(tg.x, wi, tg.y * wr);
#pragma unroll
          for (int jj = 0; jj < NJ; ++jj)
            if (jlo + jj < WJ) {
              Z xv = xl[i][jlo + jj];
              xv.x = fma(-twr, vv[jj].x, xv.x);
              xv.x = fma(-twi, vv[jj].y, xv.x);
              xv.y = fma(-twi, vv[jj].x, xv.y);
              xv.y = fma(twr, vv[jj].y, xv.y);
              xl[i][jlo + jj] = xv;
            }
        }
      }
      const bool last = !slide || t == 0;
#pragma unroll
      for (int j = 0; j < WJ; ++j) {
        if (!last && j < WJ - SH) continue;  // sliding: only the slots that leave the window
        const int c = LANES * j + q;
        const long col = base + c;
        const bool in = col < n && (slide || c < wlen);
#pragma unroll
        for (int i = 0; i < R; ++i)
          if (in && active[i]) xr[i][col * ldx] = xl[i][j];
      }
      if (!last) {
#pragma unroll
        for (int j = WJ - 1; j >= SH; --j)
#pragma unroll
          for (int i = 0; i < R; ++i) xl[i][j] = xl[i][j - SH];
      }
    }
  }
}

// Any b: X(row, first .. first+len-1) := X(row, first ..) (I - tau v v^H) for every reflector
// straight from global memory, sweeps in order, steps bottom to top (for_each_in_bc_back_order with
// group 1).
__global__ void bc_back_rows_generic(ReflectorLayout L, const Z* __restrict__ v,
                                     const Z* __restrict__ tau, long m, Z* __restrict__ x,
                                     long ldx) {
  const long row = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m) return;
  Z* xr = x + row;
  for (long s = 0; s < L.sweeps(); ++s)
    for (long t = L.steps(s) - 1; t >= 0; --t) {
      const long first = L.first_row(s, t), len = L.length(s, t);
      const Z tt = tau[L.index(s, t)];
      if (tt.x == 0.0 && tt.y == 0.0) continue;  // H = I
      const Z* vv = v + L.vector_offset(s, t);
      Z w = xr[first * ldx];
      for (long i = 1; i < len; ++i) w = cuCfma(vv[i], xr[(first + i) * ldx], w);
      const Z tw = cuCmul(tt, w);
      for (long i = 0; i < len; ++i)
        xr[(first + i) * ldx] = cuCsub(xr[(first + i) * ldx], cuCmul(tw, cuConj(vv[i])));
    }
}

// X(:, j) *= D(j, j).
__global__ void scale_columns(long m, long n, const Z* __restrict__ phase, Z* __restrict__ x,
                              long ldx) {
  const long total = m * n;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / m, i = k - j * m;
    x[i + j * ldx] = cuCmul(x[i + j * ldx], phase[j]);
  }
}

// Shared memory of bc_back_rows<BMAX, G, LANES, R, PF>: vs (G x WP), ts (G), with prefetch raw_v
// (G x BMAX) and raw_t (G), then so (G longs).
template <int BMAX, int G, int LANES, bool PF>
constexpr size_t shared_bytes() {
  constexpr int WJ = (BMAX + G - 1 + LANES - 1) / LANES;
  return sizeof(Z) * (static_cast<size_t>(G) * LANES * WJ + G) + sizeof(long) * G +
         (PF ? sizeof(Z) * (static_cast<size_t>(G) * BMAX + G) : 0);
}

template <int BMAX, int G, int LANES, int R, bool PF = true>
void launch(const ReflectorLayout& L, const Z* v, const Z* tau, long m, Z* x, long ldx, int threads,
            cudaStream_t stream) {
  constexpr size_t smem = shared_bytes<BMAX, G, LANES, PF>();
  const long rows_per_block = static_cast<long>(threads / LANES) * R;
  const long blocks = (m + rows_per_block - 1) / rows_per_block;
  if (blocks > 0x7fffffffL) throw std::invalid_argument("gpu::bc_back_complex: too many rows");
  auto kernel = bc_back_rows<BMAX, G, LANES, R, PF>;
  if (smem > 48 * 1024)
    PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  kernel<<<static_cast<int>(blocks), threads, smem, stream>>>(L, v, tau, m, x, ldx);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

using LaunchFn = void (*)(const ReflectorLayout&, const Z*, const Z*, long, Z*, long, int,
                          cudaStream_t);

// The compiled variants for 16 < b <= 32 (lanes, rows, group, prefetch), each with its launch.
struct Variant {
  int lanes, rows, group;
  bool prefetch;
  LaunchFn fn;
};
template <int LANES, int R, int G, bool PF = true>
constexpr Variant variant() {
  return {LANES, R, G, PF, launch<32, G, LANES, R, PF>};
}
// Two lanes per row would hold 32 complex columns (64 doubles) of window per row: they spill.
const Variant kVariants[] = {
    variant<4, 1, 32>(), variant<4, 2, 32>(), variant<8, 1, 32>(),
    variant<8, 2, 32>(), variant<4, 1, 64>(), variant<4, 1, 32, false>(),
};

const Variant* find_variant(const ComplexBcBackTunables& tun) {
  for (const Variant& w : kVariants)
    if (w.lanes == tun.lanes && w.rows == tun.rows && w.group == tun.group &&
        w.prefetch == tun.prefetch)
      return &w;
  return nullptr;
}

// The tunables' fields in a tensor shape's meaning, both ways.
ComplexBcBackTensorShape tensor_shape(const ComplexBcBackTunables& t) {
  return {t.group, t.rows, t.threads / 32, t.group_lanes};
}
ComplexBcBackTunables tensor_tunables(const ComplexBcBackTensorShape& s) {
  ComplexBcBackTunables t;
  t.rows = s.mtiles, t.group = s.group, t.threads = 32 * s.warps, t.tensor = true;
  t.group_lanes = s.group_lanes;
  return t;
}

// X := X Q_b by the tensor-core kernel, its workspace from the pool for this call.
void tensor_launch(const ReflectorLayout& L, const Z* d_v, const Z* d_tau, long m, Z* d_x, long ldx,
                   const ComplexBcBackTensorShape& shape, cudaStream_t stream) {
  void* work = nullptr;
  PIPEVD_CUDA_CHECK(pool_malloc(&work, bc_back_complex_tensor_workspace_bytes(L), stream));
  try {
    bc_back_complex_tensor(L, d_v, d_tau, m, d_x, ldx, shape, work, stream);
  } catch (...) {
    cudaFreeAsync(work, stream);
    throw;
  }
  PIPEVD_CUDA_CHECK(cudaFreeAsync(work, stream));
}

// Bands narrower than 17 (fixed shapes: only threads and prefetch vary). Lanes such that b is a
// whole number of slots (the window slides) and a lane's window stays some 32 doubles of
// registers.
LaunchFn narrow_launch(long b, bool prefetch) {
  if (b <= 2) return prefetch ? launch<2, 32, 2, 1, true> : launch<2, 32, 2, 1, false>;
  if (b <= 4) return prefetch ? launch<4, 32, 2, 1, true> : launch<4, 32, 2, 1, false>;
  if (b <= 8) return prefetch ? launch<8, 32, 4, 1, true> : launch<8, 32, 4, 1, false>;
  return prefetch ? launch<16, 32, 4, 1, true> : launch<16, 32, 4, 1, false>;
}

}  // namespace

std::vector<ComplexBcBackTunables> bc_back_complex_variants() {
  std::vector<ComplexBcBackTunables> out;
  for (const Variant& w : kVariants) out.push_back({w.lanes, w.rows, w.group, 128, w.prefetch});
  return out;
}

std::vector<ComplexBcBackTunables> bc_back_complex_tensor_variants() {
  std::vector<ComplexBcBackTunables> out;
  for (const ComplexBcBackTensorShape& s : bc_back_complex_tensor_shapes())
    out.push_back(tensor_tunables(s));
  return out;
}

// The BLAS2 shape's reasoning (the tensor kernel's is in gpu/bc_back_complex_tensor.cu): per
// reflector and row a lane does 8 (b / lanes + 1) FMAs on 4 log2(lanes) shuffled
// words and b / lanes + 1 shared 16-byte loads that serve all of its rows: twice the real kernel's
// FMAs per load, so the shared-memory pipe that bounds the real kernel is further from the limit
// and 4 lanes keep the row's dot product short. A complex column is two doubles of registers, so
// groups of 32 sweeps (a window of 63 columns, 32 doubles per lane with 4 lanes) keep the window in
// registers where the real kernel's 64 would spill or cut occupancy; X is streamed n / 32 times.
ComplexBcBackTunables default_bc_back_complex_tunables(long /*m*/, long b, BcBackKernel kernel) {
  // The tensor kernel's blocks span 40 columns whatever b is, and its window slides only at
  // b = 32: narrow bands stay with the BLAS2 kernel's narrow variants unless Tensor asks.
  if (kernel == BcBackKernel::Tensor && b <= 32) return bc_back_complex_tensor_variants().front();
  if (kernel == BcBackKernel::Auto && b > 16 && b <= 32) {
    int device = 0;
    PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
    if (bc_back_complex_tensor_runs(device)) return bc_back_complex_tensor_variants().front();
  }
  ComplexBcBackTunables t;
  t.generic = b > 32;
  return t;
}

void bc_back_complex(const ReflectorLayout& L, const Z* d_v, const Z* d_tau, const Z* d_phase,
                     long m, Z* d_x, long ldx, const ComplexBcBackTunables& tun,
                     cudaStream_t stream) {
  if (m < 0 || (m > 0 && ldx < m) || L.n < 0)
    throw std::invalid_argument("gpu::bc_back_complex: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx) + ", n = " + std::to_string(L.n));
  if (tun.threads < 32 || tun.threads > kMaxThreads || tun.threads % 32 != 0)
    throw std::invalid_argument("gpu::bc_back_complex: threads = " + std::to_string(tun.threads));
  const Variant* w = nullptr;
  const bool tensor = tun.tensor && !tun.generic;  // generic wins, as for the BLAS2 fields
  if (tensor) {
    const ComplexBcBackTensorShape shape = tensor_shape(tun);
    if (L.b > 32)
      throw std::invalid_argument("gpu::bc_back_complex: b = " + std::to_string(L.b) +
                                  " > 32 has no tensor-core kernel");
    if (!bc_back_complex_tensor_compiled(shape))
      throw std::invalid_argument(
          "gpu::bc_back_complex: no compiled tensor shape group = " + std::to_string(tun.group) +
          ", tiles = " + std::to_string(tun.rows) + ", threads = " + std::to_string(tun.threads));
  } else if (!tun.generic && L.b > 32)
    throw std::invalid_argument("gpu::bc_back_complex: b = " + std::to_string(L.b) +
                                " > 32 takes the generic kernel");
  if (!tun.generic && !tensor && L.b > 16 && !(w = find_variant(tun)))
    throw std::invalid_argument(
        "gpu::bc_back_complex: no compiled variant lanes = " + std::to_string(tun.lanes) +
        ", rows = " + std::to_string(tun.rows) + ", group = " + std::to_string(tun.group) +
        ", prefetch = " + std::to_string(tun.prefetch));
  if (m == 0) return;
  if (L.count() > 0) {
    if (tensor) {
      tensor_launch(L, d_v, d_tau, m, d_x, ldx, tensor_shape(tun), stream);
    } else if (tun.generic) {
      bc_back_rows_generic<<<static_cast<int>((m + kGenericThreads - 1) / kGenericThreads),
                             kGenericThreads, 0, stream>>>(L, d_v, d_tau, m, d_x, ldx);
      PIPEVD_CUDA_CHECK_LAUNCH();
    } else if (w) {
      w->fn(L, d_v, d_tau, m, d_x, ldx, tun.threads, stream);
    } else {
      narrow_launch(L.b, tun.prefetch)(L, d_v, d_tau, m, d_x, ldx, tun.threads, stream);
    }
  }
  if (d_phase && L.n > 0) {
    const long total = m * L.n;
    const int grid = static_cast<int>(
        std::max(1L, std::min(4096L, (total + kGenericThreads - 1) / kGenericThreads)));
    scale_columns<<<grid, kGenericThreads, 0, stream>>>(m, L.n, d_phase, d_x, ldx);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }
}

void bc_back_complex(const ReflectorLayout& L, const Z* d_v, const Z* d_tau, const Z* d_phase,
                     long m, Z* d_x, long ldx, cudaStream_t stream) {
  bc_back_complex(L, d_v, d_tau, d_phase, m, d_x, ldx, default_bc_back_complex_tunables(m, L.b),
                  stream);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bc_back_complex_kernel_anchor() {
  return reinterpret_cast<const void*>(&scale_columns);
}

}  // namespace pipevd::gpu
