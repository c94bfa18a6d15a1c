// Complex BC-back benchmark (issue 28): gpu::bc_back_complex with each compiled BLAS2 variant (and,
// with --generic, the thread-per-row kernel; with --tensor, every shape of the tensor-core kernel,
// gpu/bc_back_complex_tensor.cuh) on the same reflectors, X (m x n, column-major) := X Q_b, to pick
// the default tunables and compare the stage against the one-stage solver's time.
//
//   bc_back_complex_bench [--n 16384,32768] [--m 0] [--b 32] [--generic] [--tensor]
//                         [--lanes 0] [--only-tensor]
//
// --m 0: m = n (one GPU holds every row). --lanes: the tensor shapes' group lanes, each value a
// line (0: the automatic count, 1: none; the line shows the count that ran). --only-tensor: the
// tensor shapes alone, the first the diff's reference. Reflectors: synthetic but in the
// bulge-chasing layout (core/reflector_store.hpp): v[0] = 1, v[1 .. length-1] pseudo-random in the
// unit square, zeros past the length, tau = 2 / v^H v (an exact unitary reflector up to rounding),
// formed on the device; the kernels' time does not depend on the values. Measures: device events
// around one call after a warm-up call of the same variant at n = 2048, TFLOP/s with the 8 m n^2
// model (a complex multiply-add is 4 real ones), and max |X - X_blas2| over max |X0| (X_blas2: the
// BLAS2 kernel's default; variants round differently).
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/cuda_check.hpp"
#include "bench/bench_util.hpp"
#include "core/reflector_store.hpp"
#include "gpu/bc_back_complex.cuh"
#include "gpu/bc_back_complex_tensor.cuh"

namespace {

using pipevd::ReflectorLayout;
using pipevd::bench::parse_list;
using pipevd::gpu::ComplexBcBackTunables;
using Z = cuDoubleComplex;

// Synthetic values in [-1, 1): splitmix64 of the counter k.
__device__ double hash_uniform(unsigned long long k) {
  return pipevd::bench::splitmix_uniform(k + 0x9e3779b97f4a7c15ULL);
}

// A thread per reflector: its vector and tau.
__global__ void make_reflectors(ReflectorLayout L, Z* v, Z* tau) {
  for (long s = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; s < L.sweeps();
       s += static_cast<long>(gridDim.x) * blockDim.x)
    for (long t = 0; t < L.steps(s); ++t) {
      const long idx = L.index(s, t), len = L.length(s, t);
      double ss = 0.0;
      for (long i = 0; i < L.b; ++i) {
        Z x = make_cuDoubleComplex(0.0, 0.0);
        if (i == 0) x.x = 1.0;
        if (i > 0 && i < len)
          x = make_cuDoubleComplex(hash_uniform(2 * (idx * 1024 + i)),
                                   hash_uniform(2 * (idx * 1024 + i) + 1));
        v[idx * L.b + i] = x;
        ss += x.x * x.x + x.y * x.y;
      }
      tau[idx] = make_cuDoubleComplex(2.0 / ss, 0.0);
    }
}

__global__ void fill_x(double* x, long count) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    x[k] = hash_uniform(0x5eedULL * 0x100000000ULL + k);
}

__global__ void max_abs_diff_kernel(const double* a, const double* b, long count, double* out) {
  double mx = 0.0;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    mx = fmax(mx, fabs(a[k] - (b ? b[k] : 0.0)));
  out[blockIdx.x * blockDim.x + threadIdx.x] = mx;
}

double max_abs_diff(const double* a, const double* b, long count) {
  constexpr int kBlocks = 1024, kThreads = 256;
  double* d = nullptr;
  PIPEVD_CUDA_CHECK(cudaMalloc(&d, sizeof(double) * kBlocks * kThreads));
  max_abs_diff_kernel<<<kBlocks, kThreads>>>(a, b, count, d);
  std::vector<double> h(kBlocks * kThreads);
  PIPEVD_CUDA_CHECK(cudaMemcpy(h.data(), d, sizeof(double) * h.size(), cudaMemcpyDeviceToHost));
  cudaFree(d);
  return *std::max_element(h.begin(), h.end());
}

struct Problem {
  ReflectorLayout L;
  long m;
  Z *v = nullptr, *tau = nullptr, *x0 = nullptr, *x = nullptr, *xref = nullptr;
  Problem(long n, long b, long m_) : L{n, std::min(b, n - 1)}, m(m_) {
    PIPEVD_CUDA_CHECK(cudaMalloc(&v, sizeof(Z) * std::max(1L, L.vector_array_size())));
    PIPEVD_CUDA_CHECK(cudaMalloc(&tau, sizeof(Z) * std::max(1L, L.count())));
    for (Z** p : {&x0, &x, &xref}) PIPEVD_CUDA_CHECK(cudaMalloc(p, sizeof(Z) * m * n));
    make_reflectors<<<256, 128>>>(L, v, tau);
    fill_x<<<4096, 256>>>(reinterpret_cast<double*>(x0), 2 * m * n);
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Problem() { cudaFree(v), cudaFree(tau), cudaFree(x0), cudaFree(x), cudaFree(xref); }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
  // One run from X0, seconds; the result stays in x.
  double run(const ComplexBcBackTunables& t) {
    PIPEVD_CUDA_CHECK(cudaMemcpy(x, x0, sizeof(Z) * m * L.n, cudaMemcpyDeviceToDevice));
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    cudaEventRecord(a);
    pipevd::gpu::bc_back_complex(L, v, tau, nullptr, m, x, m, t, nullptr);
    cudaEventRecord(b);
    PIPEVD_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a), cudaEventDestroy(b);
    return 1e-3 * ms;
  }
};

std::string name(const ComplexBcBackTunables& t) {
  if (t.generic) return "generic";
  char buf[64];
  if (t.tensor) {
    std::snprintf(buf, sizeof buf, "tensor G%d M%d T%d K%d", t.group, t.rows, t.threads,
                  t.group_lanes);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "L%d R%d G%d T%d%s", t.lanes, t.rows, t.group, t.threads,
                t.prefetch ? " P" : "");
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{16384, 32768};
  long m_arg = 0, b = 32;
  bool generic = false, tensor = false;
  std::vector<long> lanes{0};
  bool only_tensor = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc)
      ns = parse_list(argv[++i]);
    else if (a == "--m" && i + 1 < argc)
      m_arg = std::atol(argv[++i]);
    else if (a == "--b" && i + 1 < argc)
      b = std::atol(argv[++i]);
    else if (a == "--generic")
      generic = true;
    else if (a == "--tensor")
      tensor = true;
    else if (a == "--only-tensor")
      tensor = only_tensor = true;
    else if (a == "--lanes" && i + 1 < argc)
      lanes = parse_list(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--n N,...] [--m M] [--b B] [--generic] [--tensor] [--lanes K,...] "
                   "[--only-tensor]\n",
                   argv[0]);
      return 2;
    }
  }
  for (long n : ns) {
    const long m = m_arg > 0 ? m_arg : n;
    Problem p(n, b, m);
    // The reference of every line's diff: the BLAS2 kernel's default (with --only-tensor, the first
    // tensor shape).
    const ComplexBcBackTunables def =
        pipevd::gpu::default_bc_back_complex_tunables(m, p.L.b, pipevd::gpu::BcBackKernel::Blas2);
    std::vector<ComplexBcBackTunables> tuns;
    if (!only_tensor) tuns.push_back(def);
    if (!only_tensor && p.L.b > 16 && p.L.b <= 32)
      for (const ComplexBcBackTunables& t : pipevd::gpu::bc_back_complex_variants())
        if (name(t) != name(def)) tuns.push_back(t);
    if (generic && !only_tensor && !def.generic)
      tuns.push_back(ComplexBcBackTunables{4, 1, 32, 128, true, true});
    int device = 0;
    PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
    if (tensor && p.L.b <= 32)
      for (ComplexBcBackTunables t : pipevd::gpu::bc_back_complex_tensor_variants())
        for (long k : lanes) {
          t.group_lanes = pipevd::gpu::bc_back_complex_tensor_group_lanes(
              p.L, m, {t.group, t.rows, t.threads / 32, static_cast<int>(k)}, device);
          tuns.push_back(t);
        }
    const double x0max = max_abs_diff(reinterpret_cast<double*>(p.x0), nullptr, 2 * m * n);
    for (size_t k = 0; k < tuns.size(); ++k) {
      {
        Problem warm(2048, b, 2048);
        warm.run(tuns[k]);
      }
      const double sec = p.run(tuns[k]);
      if (k == 0)
        PIPEVD_CUDA_CHECK(cudaMemcpy(p.xref, p.x, sizeof(Z) * m * n, cudaMemcpyDeviceToDevice));
      const double diff = k == 0 ? 0.0
                                 : max_abs_diff(reinterpret_cast<double*>(p.x),
                                                reinterpret_cast<double*>(p.xref), 2 * m * n) /
                                       x0max;
      std::printf("n=%6ld m=%6ld b=%2ld  %-22s %9.4f s  %6.2f TFLOP/s  diff_vs_default=%.2e\n", n,
                  m, p.L.b, name(tuns[k]).c_str(), sec, 8.0 * m * n * n / sec * 1e-12, diff);
      std::fflush(stdout);
    }
  }
  return 0;
}
