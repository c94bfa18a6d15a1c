// BC-back on the GPU (see bc_back.cuh).
#include <cuda_pipeline.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/bc_back.cuh"
#include "gpu/bc_back_tensor.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/resident_blocks.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kMaxThreads = 256;

// Reflectors of bandwidth b <= BMAX in groups of G sweeps; LANES threads per row, R rows per
// thread. Window column c (0 .. W-1, W = BMAX + G - 1, padded to WP = 2 LANES WJ) of a row is in
// slot 2 j + e of lane q where c = 2 (LANES j + q) + e. The staged vector of reflector g is stored
// at its window position (vs[g][c] = v_g[c - g], exact zeros elsewhere), so every lane reads
// aligned double2 pairs and the compile-time loops over slots need no bounds. The lanes of a row
// read LANES consecutive double2, the rows of a warp the same ones (a broadcast): no bank
// conflicts. With slide (b == BMAX, a multiple of 2 LANES), the window of step t-1 is the one of
// step t moved by b = 2 LANES SH columns: the slots SH.. take the slots 0.., only the first SH
// slots are loaded and the last SH stored per step. A slot past W but before n then carries a
// column that the group does not touch (its vector entries are zero) and is stored unchanged later.
//
// With PF (prefetch), the vectors and taus of the next step of the group are copied to a raw
// shared buffer asynchronously (cp.async) while the current step computes, and scattered to their
// window positions at the start of the next step: the global-memory latency of the staging is not
// on every step's critical path.
template <int BMAX, int G, int LANES, int R, bool PF>
__global__ void __launch_bounds__(kMaxThreads)
    bc_back_rows(ReflectorLayout L, const double* __restrict__ v, const double* __restrict__ tau,
                 long m, double* __restrict__ x, long ldx) {
  constexpr int W = BMAX + G - 1;
  constexpr int WJ = (W + 2 * LANES - 1) / (2 * LANES);  // slot pairs per row and lane
  constexpr int WP = 2 * LANES * WJ;                     // staged vector stride (doubles)
  constexpr int NJ = BMAX / (2 * LANES) + 1;             // slot pairs one reflector can touch
  constexpr int SH = BMAX / (2 * LANES);                 // slide shift (slot pairs)
  static_assert(BMAX % (2 * LANES) == 0, "a window slides by whole slot pairs");
  extern __shared__ __align__(16) double smem[];
  double* vs = smem;                                  // G x WP
  double* ts = vs + G * WP;                           // G taus
  long* so = reinterpret_cast<long*>(ts + G);         // G sweep offsets
  double* raw_v = reinterpret_cast<double*>(so + G);  // PF: G x b, the next step's vectors
  double* raw_t = raw_v + G * BMAX;                   // PF: G, its taus
  const double2* vs2 = reinterpret_cast<const double2*>(vs);

  const int nt = static_cast<int>(blockDim.x);
  const int q = static_cast<int>(threadIdx.x) % LANES;
  const int rg = static_cast<int>(threadIdx.x) / LANES;
  const long row0 = static_cast<long>(blockIdx.x) * (nt / LANES) * R + rg;
  const long n = L.n, b = L.b, sweeps = L.sweeps();
  const int bi = static_cast<int>(b);
  const long wlen = b + G - 1;  // columns of the window that reflectors can touch
  const bool slide = (b == BMAX);
  bool active[R];
  double* xr[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const long row = row0 + static_cast<long>(i) * (nt / LANES);
    active[i] = row < m;  // inactive rows compute on zeros: the shuffles need every lane
    xr[i] = x + (active[i] ? row : 0);
  }
  for (int k = threadIdx.x; k < G * WP; k += nt) vs[k] = 0.0;
  double xl[R][2 * WJ];

  for (long s0 = 0; s0 < sweeps; s0 += G) {
    const long s1 = s0 + G < sweeps ? s0 + G : sweeps;
    auto last_sweep = [&](long t) { return static_cast<int>(L.last_sweep_with_step(t, s1) - s0); };
    // PF: step t's vectors (contiguous per sweep) and taus to raw_v / raw_t, asynchronously.
    auto prefetch = [&](long t) {
      const int gl = last_sweep(t);
      for (int k = threadIdx.x; k < (gl + 1) * bi; k += nt) {
        const int g = k / bi, i = k - g * bi;
        __pipeline_memcpy_async(raw_v + k, v + (so[g] + t) * b + i, sizeof(double));
      }
      for (int g = threadIdx.x; g <= gl; g += nt)
        __pipeline_memcpy_async(raw_t + g, tau + so[g] + t, sizeof(double));
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
        ts[g] = g <= glast ? (PF ? raw_t[g] : tau[so[g] + t]) : 0.0;
      __syncthreads();
      if (PF && t > 0) prefetch(t - 1);  // raw_v / raw_t were consumed above
      const long base = s0 + 1 + t * b;  // first_row(s0, t)
      const bool full = !slide || t == tmax;
#pragma unroll
      for (int j = 0; j < WJ; ++j) {
        if (!full && j >= SH) break;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = 2 * (LANES * j + q) + e;
          const long col = base + c;
          const bool in = col < n && (slide || c < wlen);
#pragma unroll
          for (int i = 0; i < R; ++i) xl[i][2 * j + e] = (in && active[i]) ? xr[i][col * ldx] : 0.0;
        }
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        if (g > glast) break;  // uniform over the block
        const int jlo = g / (2 * LANES);
        double2 vv[NJ];
#pragma unroll
        for (int jj = 0; jj < NJ; ++jj)
          if (jlo + jj < WJ) vv[jj] = vs2[(g * WP) / 2 + LANES * (jlo + jj) + q];
        const double tg = ts[g];
#pragma unroll
        for (int i = 0; i < R; ++i) {
          double w0 = 0.0, w1 = 0.0;
#pragma unroll
          for (int jj = 0; jj < NJ; ++jj)
            if (jlo + jj < WJ) {
              w0 = fma(vv[jj].x, xl[i][2 * (jlo + jj)], w0);
              w1 = fma(vv[jj].y, xl[i][2 * (jlo + jj) + 1], w1);
            }
          double w = w0 + w1;
#pragma unroll
          for (int o = 1; o < LANES; o *= 2) w += __shfl_xor_sync(0xffffffffu, w, o);
          const double tw = tg * w;
#pragma unroll
          for (int jj = 0; jj < NJ; ++jj)
            if (jlo + jj < WJ) {
              xl[i][2 * (jlo + jj)] = fma(-vv[jj].x, tw, xl[i][2 * (jlo + jj)]);
              xl[i][2 * (jlo + jj) + 1] = fma(-vv[jj].y, tw, xl[i][2 * (jlo + jj) + 1]);
            }
        }
      }
      const bool last = !slide || t == 0;
#pragma unroll
      for (int j = 0; j < WJ; ++j) {
        if (!last && j < WJ - SH) continue;  // sliding: only the slots that leave the window
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = 2 * (LANES * j + q) + e;
          const long col = base + c;
          const bool in = col < n && (slide || c < wlen);
#pragma unroll
          for (int i = 0; i < R; ++i)
            if (in && active[i]) xr[i][col * ldx] = xl[i][2 * j + e];
        }
      }
      if (!last) {
#pragma unroll
        for (int j = WJ - 1; j >= SH; --j)
#pragma unroll
          for (int i = 0; i < R; ++i) {
            xl[i][2 * j] = xl[i][2 * (j - SH)];
            xl[i][2 * j + 1] = xl[i][2 * (j - SH) + 1];
          }
      }
    }
  }
}

// Any b (used above 32): one reflector at a time straight from global memory, sweeps in order,
// steps bottom to top (for_each_in_bc_back_order with group 1).
__global__ void bc_back_rows_generic(ReflectorLayout L, const double* __restrict__ v,
                                     const double* __restrict__ tau, long m, double* __restrict__ x,
                                     long ldx) {
  const long row = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m) return;
  double* xr = x + row;
  for (long s = 0; s < L.sweeps(); ++s)
    for (long t = L.steps(s) - 1; t >= 0; --t) {
      const long first = L.first_row(s, t), len = L.length(s, t);
      const double* vv = v + L.vector_offset(s, t);
      double w = xr[first * ldx];
      for (long i = 1; i < len; ++i) w = fma(vv[i], xr[(first + i) * ldx], w);
      const double tw = tau[L.index(s, t)] * w;
      for (long i = 0; i < len; ++i) xr[(first + i) * ldx] = fma(-vv[i], tw, xr[(first + i) * ldx]);
    }
}

// Shared memory of bc_back_rows<BMAX, G, LANES, R, PF>: vs (G x WP), ts (G), so (G longs) and,
// with prefetch, raw_v (G x BMAX) and raw_t (G).
template <int BMAX, int G, int LANES, bool PF>
constexpr size_t shared_bytes() {
  constexpr int WJ = (BMAX + G - 1 + 2 * LANES - 1) / (2 * LANES);
  return sizeof(double) * (static_cast<size_t>(G) * 2 * LANES * WJ + G) + sizeof(long) * G +
         (PF ? sizeof(double) * (static_cast<size_t>(G) * BMAX + G) : 0);
}

// Rows that one launch processes at once on `device`: resident blocks per SM (registers and
// shared memory decide) x SMs x rows per block. A grid of more rows runs in several waves.
template <int BMAX, int G, int LANES, int R, bool PF = true>
long wave_rows(int threads, int device) {
  constexpr size_t smem = shared_bytes<BMAX, G, LANES, PF>();
  auto kernel = bc_back_rows<BMAX, G, LANES, R, PF>;
  if (smem > 48 * 1024)
    PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  return resident_blocks(kernel, threads, smem, device) * (threads / LANES) * R;
}

template <int BMAX, int G, int LANES, int R, bool PF = true>
void launch(const ReflectorLayout& L, const double* v, const double* tau, long m, double* x,
            long ldx, int threads, cudaStream_t stream) {
  constexpr size_t smem = shared_bytes<BMAX, G, LANES, PF>();
  const long rows_per_block = static_cast<long>(threads / LANES) * R;
  const long blocks = (m + rows_per_block - 1) / rows_per_block;
  if (blocks > 0x7fffffffL) throw std::invalid_argument("gpu::bc_back: too many rows");
  auto kernel = bc_back_rows<BMAX, G, LANES, R, PF>;
  if (smem > 48 * 1024)
    PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  kernel<<<static_cast<int>(blocks), threads, smem, stream>>>(L, v, tau, m, x, ldx);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// The compiled variants for 16 < b <= 32 (lanes, rows, group), each with its launch and its rows
// per wave.
struct Variant {
  int lanes, rows, group;
  bool prefetch;
  void (*fn)(const ReflectorLayout&, const double*, const double*, long, double*, long, int,
             cudaStream_t);
  long (*wave)(int, int);
};
template <int LANES, int R, int G, bool PF = true>
constexpr Variant variant() {
  return {LANES, R, G, PF, launch<32, G, LANES, R, PF>, wave_rows<32, G, LANES, R, PF>};
}
const Variant kVariants[] = {
    variant<4, 1, 32>(),        variant<4, 2, 32>(),        variant<4, 4, 32>(),
    variant<2, 1, 32>(),        variant<8, 2, 32>(),        variant<4, 1, 64>(),
    variant<4, 2, 64>(),        variant<2, 1, 64>(),        variant<8, 2, 64>(),
    variant<8, 1, 32>(),        variant<8, 1, 64>(),        variant<16, 1, 32>(),
    variant<4, 1, 32, false>(), variant<8, 1, 32, false>(),
};

const Variant* find_variant(const BcBackTunables& tun) {
  for (const Variant& w : kVariants)
    if (w.lanes == tun.lanes && w.rows == tun.rows && w.group == tun.group &&
        w.prefetch == tun.prefetch)
      return &w;
  return nullptr;
}

// The tunables' fields in a tensor shape's meaning, both ways.
BcBackTensorShape tensor_shape(const BcBackTunables& t) {
  return {t.group, t.rows, t.threads / 32, t.prefetch, t.group_lanes};
}
BcBackTunables tensor_tunables(const BcBackTensorShape& s) {
  return {0, s.mtiles, s.group, 32 * s.warps, s.prefetch_x, true, s.group_lanes};
}

}  // namespace

std::vector<BcBackTunables> bc_back_variants() {
  std::vector<BcBackTunables> out;
  for (const Variant& w : kVariants)
    out.push_back({w.lanes, w.rows, w.group, 128, w.prefetch, false});
  for (const BcBackTensorShape& s : bc_back_tensor_shapes()) out.push_back(tensor_tunables(s));
  return out;
}

// Reasoning: per reflector and row a lane does 2 (b / lanes + 2)
// FMAs on 2 log2(lanes) shuffled words and b / (2 lanes) + 1 shared double2 loads that serve all
// of its rows, so 4 lanes keep the FMA pipe ahead of the shuffle and load pipes. A 132-SM GPU wants
// some 132 SMs x 16 warps = 67584 threads: one row per thread gives m * 4 threads (enough from
// m ~ 16384 on), two rows per thread where m is large enough to fill the SMs anyway (more FMAs in
// flight per thread); below, 8 lanes per row trade shuffles for threads (rows are the only
// parallelism: the groups of one row block run one after the other). With the window sliding,
// G = 32 streams X n / 32 times, less memory traffic than the FMAs take time.
BcBackTunables default_bc_back_tunables(long m, long b, BcBackKernel kernel) {
  BcBackTunables t;
  // The tensor-core kernel for 16 < b <= 32 (it runs at the DMMA rate where BLAS2 is bound by
  // shared-memory bandwidth: bc_back_tensor.cuh); under Auto, devices without DMMA or with less
  // shared memory per block than the kernel's take BLAS2.
  if (kernel != BcBackKernel::Blas2 && b > 16 && b <= 32) {
    const BcBackTensorShape s;
    int device = 0;
    PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
    if (kernel == BcBackKernel::Tensor || bc_back_tensor_fits(s, device)) return tensor_tunables(s);
  }
  // Groups of 64 sweeps (X is streamed half as often as with 32, and the group still fits shared
  // memory); 2 lanes per row at m >= 8192, where the rows alone fill the GPU and fewer lanes mean
  // fewer shuffles; 4 lanes below, where they do not.
  t.lanes = m >= 8192 ? 2 : 4;
  t.rows = 1;
  t.group = 64;
  t.threads = 128;
  return t;
}

size_t bc_back_workspace_bytes(const ReflectorLayout& L, const BcBackTunables& t) {
  return t.tensor && L.count() > 0 ? bc_back_tensor_workspace_bytes(L) : 0;
}

void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, const BcBackTunables& tun, cudaStream_t stream) {
  bc_back(L, d_v, d_tau, m, d_x, ldx, tun, nullptr, stream);
}

void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, const BcBackTunables& tun, void* work, cudaStream_t stream) {
  if (m < 0 || (m > 0 && ldx < m) || L.n < 0)
    throw std::invalid_argument("gpu::bc_back: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx) + ", n = " + std::to_string(L.n));
  if (tun.threads < 32 || tun.threads > kMaxThreads || tun.threads % 32 != 0)
    throw std::invalid_argument("gpu::bc_back: threads = " + std::to_string(tun.threads));
  if (m == 0 || L.count() == 0) return;
  if (tun.tensor) {
    const BcBackTensorShape shape = tensor_shape(tun);
    if (!bc_back_tensor_compiled(shape))
      throw std::invalid_argument(
          "gpu::bc_back: no compiled tensor shape group = " + std::to_string(tun.group) +
          ", tiles = " + std::to_string(tun.rows) + ", threads = " + std::to_string(tun.threads));
    void* own = nullptr;  // without the caller's workspace, one from the pool for this call
    if (!work) PIPEVD_CUDA_CHECK(pool_malloc(&own, bc_back_tensor_workspace_bytes(L), stream));
    try {
      bc_back_tensor(L, d_v, d_tau, m, d_x, ldx, shape, work ? work : own, stream);
    } catch (...) {
      if (own) cudaFreeAsync(own, stream);
      throw;
    }
    if (own) PIPEVD_CUDA_CHECK(cudaFreeAsync(own, stream));
    return;
  }
  const int th = tun.threads;
  if (L.b <= 2)
    (tun.prefetch ? launch<2, 32, 1, 1, true> : launch<2, 32, 1, 1, false>)(L, d_v, d_tau, m, d_x,
                                                                            ldx, th, stream);
  else if (L.b <= 4)
    (tun.prefetch ? launch<4, 32, 2, 1, true> : launch<4, 32, 2, 1, false>)(L, d_v, d_tau, m, d_x,
                                                                            ldx, th, stream);
  else if (L.b <= 8)
    (tun.prefetch ? launch<8, 32, 4, 1, true> : launch<8, 32, 4, 1, false>)(L, d_v, d_tau, m, d_x,
                                                                            ldx, th, stream);
  else if (L.b <= 16)
    (tun.prefetch ? launch<16, 32, 4, 1, true> : launch<16, 32, 4, 1, false>)(L, d_v, d_tau, m, d_x,
                                                                              ldx, th, stream);
  else if (L.b <= 32) {
    if (const Variant* w = find_variant(tun)) {
      w->fn(L, d_v, d_tau, m, d_x, ldx, th, stream);
      return;
    }
    throw std::invalid_argument(
        "gpu::bc_back: no compiled variant lanes = " + std::to_string(tun.lanes) +
        ", rows = " + std::to_string(tun.rows) + ", group = " + std::to_string(tun.group) +
        ", prefetch = " + std::to_string(tun.prefetch));
  } else {  // wider bands (the engine's default is 32): a register window would spill
    bc_back_rows_generic<<<static_cast<int>((m + 127) / 128), 128, 0, stream>>>(L, d_v, d_tau, m,
                                                                                d_x, ldx);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }
}

void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, cudaStream_t stream) {
  bc_back(L, d_v, d_tau, m, d_x, ldx, default_bc_back_tunables(m, L.b), stream);
}

long bc_back_wave_rows(long m, long b, int device, BcBackKernel kernel) {
  if (b <= 16 || b > 32)
    return 0;  // the fixed narrow variants and the generic kernel: not modelled
  ScopedDevice guard(device);
  const BcBackTunables tun = default_bc_back_tunables(m, b, kernel);
  if (tun.tensor) return bc_back_tensor_wave_rows(tensor_shape(tun), m, device);
  const Variant* w = find_variant(tun);
  if (!w) return 0;
  return w->wave(tun.threads, device);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bc_back_kernel_anchor() { return reinterpret_cast<const void*>(&bc_back_rows_generic); }

}  // namespace pipevd::gpu
