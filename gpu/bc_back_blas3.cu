// BC-back in the BLAS3 formulation (see bc_back_blas3.cuh).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gpu/bc_back_blas3.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kThreads = 256;

long window(const ReflectorLayout& L, int group) { return L.b + group - 1; }

// One block per step t of the group starting at sweep s0: V_t (W x G, ld W) and T_t (G x G, ld G)
// into vt + t W G and tt + t G G. Sweeps past the group's last (g > glast(t)) give zero columns of
// V and zero rows/columns of T (H = I). Y = V^T V is formed first (the only O(W G^2) part), then
// T column by column as dlarft does: T(0:i-1, i) = T(0:i-1, 0:i-1) (-tau_i Y(0:i-1, i)).
__global__ void form_vt(ReflectorLayout L, const double* __restrict__ v,
                        const double* __restrict__ tau, long s0, int G, double* __restrict__ vt,
                        double* __restrict__ tt) {
  extern __shared__ double sm[];
  const long t = blockIdx.x;
  const long b = L.b, sweeps = L.sweeps();
  const int W = static_cast<int>(b) + G - 1;
  double* Vs = sm;            // W x G
  double* Ts = Vs + W * G;    // G x G
  double* Ys = Ts + G * G;    // G x G
  double* taus = Ys + G * G;  // G
  const long s1 = s0 + G < sweeps ? s0 + G : sweeps;
  const long slast = L.last_sweep_with_step(t, s1);
  const int glast = static_cast<int>(slast - s0);
  for (int k = threadIdx.x; k < W * G; k += blockDim.x) {
    const int g = k / W, r = k - g * W, i = r - g;
    Vs[k] = (g <= glast && i >= 0 && i < b) ? v[L.vector_offset(s0 + g, t) + i] : 0.0;
  }
  for (int g = threadIdx.x; g < G; g += blockDim.x)
    taus[g] = g <= glast ? tau[L.index(s0 + g, t)] : 0.0;
  __syncthreads();
  // Y(j, i), j < i: columns j and i overlap on rows i .. j + b - 1.
  for (int k = threadIdx.x; k < G * G; k += blockDim.x) {
    const int i = k / G, j = k - i * G;
    double y = 0.0;
    if (j < i)
      for (int r = i; r < j + b && r < W; ++r) y = fma(Vs[r + j * W], Vs[r + i * W], y);
    Ys[k] = y;  // Ys[j + i G]
    Ts[k] = 0.0;
  }
  __syncthreads();
  for (int i = 0; i < G; ++i) {
    const double ti = taus[i];
    for (int j = threadIdx.x; j < i; j += blockDim.x) {
      double acc = 0.0;
      for (int l = j; l < i; ++l) acc = fma(Ts[j + l * G], -ti * Ys[l + i * G], acc);
      Ts[j + i * G] = acc;
    }
    if (threadIdx.x == 0) Ts[i + i * G] = ti;
    __syncthreads();
  }
  double* vo = vt + t * W * G;
  double* to = tt + t * G * G;
  for (int k = threadIdx.x; k < W * G; k += blockDim.x) vo[k] = Vs[k];
  for (int k = threadIdx.x; k < G * G; k += blockDim.x) to[k] = Ts[k];
}

}  // namespace

std::size_t bc_back_blas3_workspace_bytes(const ReflectorLayout& L, long m, int group) {
  if (L.count() == 0) return 0;
  const long steps = L.steps(0), W = window(L, group), G = group;
  return sizeof(double) * static_cast<std::size_t>(steps * (W * G + G * G) + 2 * m * G);
}

void bc_back_blas3(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m,
                   double* d_x, long ldx, int group, void* d_work, cublasHandle_t handle,
                   cudaStream_t stream, Blas3Part part) {
  if (m < 0 || (m > 0 && ldx < m) || group < 1 || group > 64)
    throw std::invalid_argument("gpu::bc_back_blas3: m = " + std::to_string(m) + ", ldx = " +
                                std::to_string(ldx) + ", group = " + std::to_string(group));
  if (m == 0 || L.count() == 0) return;
  const long n = L.n, b = L.b, sweeps = L.sweeps(), G = group, W = window(L, group);
  double* vt = static_cast<double*>(d_work);
  double* tt = vt + L.steps(0) * W * G;
  double* w1 = tt + L.steps(0) * G * G;
  double* w2 = w1 + m * G;
  const std::size_t smem = sizeof(double) * static_cast<std::size_t>(W * G + 2 * G * G + G);
  PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(form_vt, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem)));
  const double one = 1.0, zero = 0.0, minus_one = -1.0;
  for (long s0 = 0; s0 < sweeps; s0 += G) {
    const long s1 = std::min(s0 + G, sweeps), tmax = L.steps(s0) - 1;
    form_vt<<<static_cast<int>(tmax + 1), kThreads, smem, stream>>>(L, d_v, d_tau, s0,
                                                                    static_cast<int>(G), vt, tt);
    PIPEVD_CUDA_CHECK_LAUNCH();
    if (part == Blas3Part::form_only) continue;
    for (long t = tmax; t >= 0; --t) {
      const long slast = L.last_sweep_with_step(t, s1);
      const int k = static_cast<int>(slast - s0 + 1);  // reflectors of this block
      const long base = s0 + 1 + t * b;
      const int we = static_cast<int>(std::min(W, n - base));  // window rows inside X
      double* xw = d_x + base * ldx;
      const double* vb = vt + t * W * G;
      const double* tb = tt + t * G * G;
      const int mi = static_cast<int>(m), li = static_cast<int>(ldx), wi = static_cast<int>(W),
                gi = static_cast<int>(G);
      PIPEVD_CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, mi, k, we, &one, xw, li, vb,
                                      wi, &zero, w1, mi));
      PIPEVD_CUBLAS_CHECK(cublasDtrmm(handle, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER,
                                      CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, mi, k, &one, tb, gi, w1,
                                      mi, w2, mi));
      PIPEVD_CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, mi, we, k, &minus_one, w2,
                                      mi, vb, wi, &one, xw, li));
    }
  }
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bc_back_blas3_kernel_anchor() { return reinterpret_cast<const void*>(&form_vt); }

}  // namespace pipevd::gpu
