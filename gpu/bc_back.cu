// BC-back on the GPU (see bc_back.cuh).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/bc_back.cuh"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kThreads = 128;
constexpr int kLanes = 4;  // threads per row
constexpr int kRowsPerBlock = kThreads / kLanes;

// Reflectors of bandwidth b <= BMAX in groups of G sweeps. The kLanes threads of a row split its
// window of BMAX + G - 1 columns cyclically (lane q holds columns q, q + kLanes, ...), in
// registers; each reflector's dot product is a partial sum per lane and a butterfly over the
// lanes (the same bits on every lane). Vectors are staged zero-padded by kLanes - 1 on both sides,
// so the compile-time register loops need no bounds: the padding adds exact zeros. The lanes of a
// row read kLanes consecutive doubles, the rows of a warp the same ones: no bank conflicts.
template <int BMAX, int G>
__global__ void __launch_bounds__(kThreads)
    bc_back_rows(ReflectorLayout L, const double* __restrict__ v, const double* __restrict__ tau,
                 long m, double* __restrict__ x, long ldx) {
  constexpr int PAD = kLanes - 1;
  constexpr int VS = BMAX + 2 * PAD;                        // staged vector stride
  constexpr int WL = (BMAX + G - 1 + kLanes - 1) / kLanes;  // window columns per lane
  __shared__ double vs[G * VS];
  __shared__ double ts[G];
  const int q = static_cast<int>(threadIdx.x) % kLanes;
  const long row = static_cast<long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kLanes;
  const bool active = row < m;  // inactive rows compute on zeros: the shuffles need every lane
  double* xr = x + (active ? row : 0);
  const long n = L.n, b = L.b, sweeps = L.sweeps();
  const long wlen = b + G - 1;  // columns of the window that reflectors can touch
  for (long s0 = 0; s0 < sweeps; s0 += G) {
    const long s1 = s0 + G < sweeps ? s0 + G : sweeps;
    for (long t = L.steps(s0) - 1; t >= 0; --t) {
      // Sweep s has a step t iff t b <= n - 3 - s; steps(s) decreases with s.
      const long slast = (s1 - 1 < n - 3 - t * b) ? s1 - 1 : n - 3 - t * b;
      const int glast = static_cast<int>(slast - s0);
      __syncthreads();  // the previous step's vectors are no longer read
      for (int k = threadIdx.x; k < G * VS; k += blockDim.x) {
        const int g = k / VS, i = k - g * VS - PAD;
        vs[k] = (g <= glast && i >= 0 && i < b) ? v[L.vector_offset(s0 + g, t) + i] : 0.0;
      }
      for (int g = threadIdx.x; g < G; g += blockDim.x)
        ts[g] = g <= glast ? tau[L.index(s0 + g, t)] : 0.0;
      __syncthreads();
      const long base = s0 + 1 + t * b;  // first_row(s0, t)
      double xl[WL];
#pragma unroll
      for (int j = 0; j < WL; ++j) {
        const int c = kLanes * j + q;
        const long col = base + c;
        xl[j] = (active && c < wlen && col < n) ? xr[col * ldx] : 0.0;
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        if (g > glast) break;  // uniform over the block
        // Reflector g covers window columns g .. g + BMAX - 1: local j = jlo .. jhi.
        const int jlo = g / kLanes, jhi = (g + BMAX - 1) / kLanes;
        const double* vg = vs + g * VS + PAD + q - g;  // vg[kLanes * j] = v[kLanes j + q - g]
        double w = 0.0;
#pragma unroll
        for (int j = jlo; j <= jhi; ++j) w = fma(vg[kLanes * j], xl[j], w);
#pragma unroll
        for (int o = 1; o < kLanes; o *= 2) w += __shfl_xor_sync(0xffffffffu, w, o);
        const double tw = ts[g] * w;
#pragma unroll
        for (int j = jlo; j <= jhi; ++j) xl[j] = fma(-vg[kLanes * j], tw, xl[j]);
      }
#pragma unroll
      for (int j = 0; j < WL; ++j) {
        const int c = kLanes * j + q;
        const long col = base + c;
        if (active && c < wlen && col < n) xr[col * ldx] = xl[j];
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

template <int BMAX, int G>
void launch(const ReflectorLayout& L, const double* v, const double* tau, long m, double* x,
            long ldx, int blocks, cudaStream_t stream) {
  bc_back_rows<BMAX, G><<<blocks, kThreads, 0, stream>>>(L, v, tau, m, x, ldx);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

}  // namespace

void bc_back(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m, double* d_x,
             long ldx, cudaStream_t stream) {
  if (m < 0 || (m > 0 && ldx < m) || L.n < 0)
    throw std::invalid_argument("gpu::bc_back: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx) + ", n = " + std::to_string(L.n));
  if (m == 0 || L.count() == 0) return;
  const long blocks = (m + kRowsPerBlock - 1) / kRowsPerBlock;
  if (blocks > 0x7fffffffL) throw std::invalid_argument("gpu::bc_back: too many rows");
  const int nb = static_cast<int>(blocks);
  if (L.b <= 4)
    launch<4, 32>(L, d_v, d_tau, m, d_x, ldx, nb, stream);
  else if (L.b <= 8)
    launch<8, 32>(L, d_v, d_tau, m, d_x, ldx, nb, stream);
  else if (L.b <= 16)
    launch<16, 32>(L, d_v, d_tau, m, d_x, ldx, nb, stream);
  else if (L.b <= 32)
    launch<32, 32>(L, d_v, d_tau, m, d_x, ldx, nb, stream);
  else {  // wider bands (the engine's default is 32): a register window would spill
    bc_back_rows_generic<<<static_cast<int>((m + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        L, d_v, d_tau, m, d_x, ldx);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace pipevd::gpu
