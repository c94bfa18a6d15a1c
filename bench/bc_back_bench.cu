// BC-back benchmark (issue 7): the BLAS2 kernel gpu::bc_back (each compiled variant) against the
// BLAS3 formulation gpu::bc_back_blas3 (MAGMA's: blocks of G reflectors, larft-like T, cuBLAS GEMM
// and TRMM) on the same reflectors, X (m x n, column-major) := X Q_b.
//
//   bc_back_bench [--n 8192,16384,32768] [--mdiv 1,4] [--b 32] [--group3 32]
//                 [--tune-n 16384] [--seconds 1e9] [--no-blas3] [--only NAME]
//                 [--group-lanes 1,2,4] [--m 8192,8601]
//
// --tune-n: first, at each n listed and each m = n / mdiv, one timed run of every compiled BLAS2
// variant (lanes x rows x group x prefetch P, 128 threads) and of the default with 64 and 256
// threads; the table then runs the default tunables and the fastest tuned variant of the same (n,
// m) (or of the same mdiv), then BLAS3 (its V/T formation alone timed separately). Cases that would
// start after --seconds (from the program's start) are skipped and reported as such. --only NAME:
// tune only the variants whose name contains NAME (next to the default); --n 0 skips the table.
// --group-lanes: the tensor default with each of these group-lane counts is tuned too (K in the
// name; K0 is the automatic count), so a table shows the wavefront against one lane per row block.
// --m: tune at these row counts (X's leading dimension is m) instead of n / mdiv.
//
// Reflectors: synthetic but in the bulge-chasing layout (core/reflector_store.hpp): v[0] = 1,
// v[1 .. length-1] pseudo-random in [-1, 1], zeros past the length, tau = 2 / v^T v (an exact
// Householder reflector up to rounding), formed on the device (n = 32768 has n^2 / 2 vector
// entries, 4 GiB). The kernels' time does not depend on the values.
//
// Measures: device events around one call (after a warm-up call at a small size), TFLOP/s with the
// 2 m n^2 model (the BLAS2 flops; BLAS3 does about twice that), and the effective bandwidth of the
// BLAS2 kernel's X traffic model: per group of G sweeps, the first step reads and writes the window
// of b + G - 1 columns, every later step b columns (sliding window; b == the kernel's width), m
// rows, 16 bytes per entry. Results are compared with the default variant's: max |X - X_default|
// over max |X0| (different variants round differently; BLAS3 to rounding).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "core/reflector_store.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/bc_back_blas3.cuh"
#include "gpu/gpu_context.hpp"

namespace {

using pipevd::ReflectorLayout;
using pipevd::bench::parse_list;
using pipevd::gpu::BcBackTunables;

// Synthetic values in [-1, 1): splitmix64 of the counter k.
__device__ double hash_uniform(unsigned long long k) {
  return pipevd::bench::splitmix_uniform(k + 0x9e3779b97f4a7c15ULL);
}

// One block (b threads, b <= 1024) per sweep: every step's vector and tau.
__global__ void make_reflectors(ReflectorLayout L, double* v, double* tau) {
  __shared__ double part[1024];
  const long s = blockIdx.x;
  const int i = threadIdx.x;
  for (long t = 0; t < L.steps(s); ++t) {
    const long idx = L.index(s, t), len = L.length(s, t);
    const double x = i == 0 ? 1.0 : (i < len ? hash_uniform(idx * 1024 + i) : 0.0);
    v[idx * L.b + i] = x;
    part[i] = x * x;
    __syncthreads();
    if (i == 0) {
      double ss = 0.0;
      for (int k = 0; k < L.b; ++k) ss += part[k];
      tau[idx] = 2.0 / ss;
    }
    __syncthreads();
  }
}

__global__ void fill_x(double* x, long count, unsigned long long seed) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    x[k] = hash_uniform(seed * 0x100000000ULL + k);
}

__global__ void max_abs_diff_kernel(const double* a, const double* b, long count, double* out) {
  __shared__ double red[256];
  double mx = 0.0;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    mx = fmax(mx, fabs(a[k] - (b ? b[k] : 0.0)));
  red[threadIdx.x] = mx;
  __syncthreads();
  for (int o = blockDim.x / 2; o > 0; o /= 2) {
    if (threadIdx.x < o) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + o]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = red[0];
}

double max_abs_diff(const double* a, const double* b, long count) {
  constexpr int kBlocks = 1024;
  double* d = nullptr;
  PIPEVD_CUDA_CHECK(cudaMalloc(&d, sizeof(double) * kBlocks));
  max_abs_diff_kernel<<<kBlocks, 256>>>(a, b, count, d);
  std::vector<double> h(kBlocks);
  PIPEVD_CUDA_CHECK(cudaMemcpy(h.data(), d, sizeof(double) * kBlocks, cudaMemcpyDeviceToHost));
  cudaFree(d);
  return *std::max_element(h.begin(), h.end());
}

// The BLAS2 kernel's X traffic model (see the header comment), bytes.
double traffic_model(const ReflectorLayout& L, long m, long group) {
  double cols = 0.0;
  for (long s0 = 0; s0 < L.sweeps(); s0 += group)
    cols += static_cast<double>(L.b + group - 1) + static_cast<double>(L.steps(s0) - 1) * L.b;
  return cols * static_cast<double>(m) * 16.0;
}

std::string name(const BcBackTunables& t) {
  char buf[64];
  if (t.tensor)  // tensor cores: 8-row tiles per warp, group, threads, X prefetch
    std::snprintf(buf, sizeof buf, "TC M%d G%d T%d%s K%d", t.rows, t.group, t.threads,
                  t.prefetch ? " PX" : "", t.group_lanes);
  else
    std::snprintf(buf, sizeof buf, "L%d R%d G%d T%d%s", t.lanes, t.rows, t.group, t.threads,
                  t.prefetch ? " P" : "");
  return buf;
}

struct Problem {
  ReflectorLayout L;
  long m;
  double *v = nullptr, *tau = nullptr, *x0 = nullptr, *x = nullptr, *xref = nullptr;
  double x0max = 1.0;
  Problem(long n, long b, long m_) : L{n, std::min(b, n - 1)}, m(m_) {
    const long count = m * n;
    PIPEVD_CUDA_CHECK(cudaMalloc(&v, sizeof(double) * std::max(1L, L.vector_array_size())));
    PIPEVD_CUDA_CHECK(cudaMalloc(&tau, sizeof(double) * std::max(1L, L.count())));
    PIPEVD_CUDA_CHECK(cudaMalloc(&x0, sizeof(double) * count));
    PIPEVD_CUDA_CHECK(cudaMalloc(&x, sizeof(double) * count));
    PIPEVD_CUDA_CHECK(cudaMalloc(&xref, sizeof(double) * count));
    if (L.sweeps() > 0)
      make_reflectors<<<static_cast<int>(L.sweeps()), static_cast<int>(L.b)>>>(L, v, tau);
    fill_x<<<4096, 256>>>(x0, count, 12345);
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
    x0max = max_abs_diff(x0, nullptr, count);
  }
  ~Problem() { cudaFree(v), cudaFree(tau), cudaFree(x0), cudaFree(x), cudaFree(xref); }
  void reset() {
    PIPEVD_CUDA_CHECK(cudaMemcpy(x, x0, sizeof(double) * m * L.n, cudaMemcpyDeviceToDevice));
  }
  double flops() const { return 2.0 * static_cast<double>(m) * L.n * L.n; }
};

template <class F>
float time_ms(F&& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  cudaEventRecord(a);
  f();
  cudaEventRecord(b);
  PIPEVD_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a), cudaEventDestroy(b);
  PIPEVD_CUDA_CHECK(cudaGetLastError());
  return ms;
}

// One BLAS2 run from X0; returns seconds; the result stays in p.x.
double run_blas2(Problem& p, const BcBackTunables& t) {
  p.reset();
  return 1e-3 * time_ms([&] { pipevd::gpu::bc_back(p.L, p.v, p.tau, p.m, p.x, p.m, t, nullptr); });
}

void report_blas2(const char* tag, Problem& p, const BcBackTunables& t, double sec, bool compare) {
  const double diff = compare ? max_abs_diff(p.x, p.xref, p.m * p.L.n) / p.x0max : 0.0;
  std::printf(
      "%-6s n=%6ld m=%6ld b=%2ld  blas2 %-16s %9.4f s  %6.2f TFLOP/s  %7.1f GB/s  "
      "diff_vs_default=%.2e\n",
      tag, p.L.n, p.m, p.L.b, name(t).c_str(), sec, p.flops() / sec * 1e-12,
      traffic_model(p.L, p.m, t.group) / sec * 1e-9, diff);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{8192, 16384, 32768}, mdivs{1, 4}, tune_ns{16384}, lane_counts, tune_rows;
  long b = 32, group3 = 32;
  double seconds = 1e9;
  bool blas3 = true;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--n" && more)
      ns = parse_list(argv[++i]);
    else if (a == "--mdiv" && more)
      mdivs = parse_list(argv[++i]);
    else if (a == "--b" && more)
      b = std::atol(argv[++i]);
    else if (a == "--group3" && more)
      group3 = std::atol(argv[++i]);
    else if (a == "--tune-n" && more)
      tune_ns = parse_list(argv[++i]);
    else if (a == "--seconds" && more)
      seconds = std::atof(argv[++i]);
    else if (a == "--no-blas3")
      blas3 = false;
    else if (a == "--m" && more)
      tune_rows = parse_list(argv[++i]);
    else if (a == "--group-lanes" && more)
      lane_counts = parse_list(argv[++i]);
    else if (a == "--only" && more)
      only = argv[++i];
    else {
      std::fprintf(stderr, "bc_back_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (tune_ns.size() == 1 && tune_ns[0] == 0) tune_ns.clear();
  if (ns.size() == 1 && ns[0] == 0) ns.clear();
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  cudaDeviceProp prop{};
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs, %.0f GB\n", prop.name, prop.multiProcessorCount,
              prop.totalGlobalMem / 1e9);
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  {  // warm-up: module loading, cuBLAS initialisation
    Problem p(512, b, 512);
    for (const BcBackTunables& t : pipevd::gpu::bc_back_variants()) run_blas2(p, t);
    run_blas2(p, pipevd::gpu::default_bc_back_tunables(p.m, p.L.b));
    void* work = nullptr;
    PIPEVD_CUDA_CHECK(cudaMalloc(&work, pipevd::gpu::bc_back_blas3_workspace_bytes(p.L, p.m, 32)));
    pipevd::gpu::bc_back_blas3(p.L, p.v, p.tau, p.m, p.x, p.m, 32, work, handle, nullptr);
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
    cudaFree(work);
  }

  // Tuning: the fastest variant per (n, mdiv) and per mdiv.
  std::map<std::pair<long, long>, std::pair<double, BcBackTunables>> best;
  std::map<long, BcBackTunables> best_mdiv;
  for (long n : tune_ns)
    for (size_t im = 0; im < (tune_rows.empty() ? mdivs.size() : tune_rows.size()); ++im) {
      const long mdiv = tune_rows.empty() ? mdivs[im] : 0;
      const long m = tune_rows.empty() ? n / mdiv : tune_rows[im];
      if (elapsed() > seconds) {
        std::printf("tune   n=%6ld m=%6ld skipped (budget)\n", n, m);
        continue;
      }
      Problem p(n, b, m);
      const BcBackTunables def = pipevd::gpu::default_bc_back_tunables(p.m, p.L.b);
      std::vector<BcBackTunables> list{def};
      for (const BcBackTunables& t : pipevd::gpu::bc_back_variants())
        if (name(t).find(only) != std::string::npos) list.push_back(t);
      for (long lanes : lane_counts) {
        BcBackTunables t = def;
        t.group_lanes = static_cast<int>(lanes);
        if (def.tensor) list.push_back(t);
      }
      for (int threads : {64, 256}) {
        BcBackTunables t = def;
        t.threads = threads;
        if (!def.tensor && only.empty()) list.push_back(t);
      }
      for (size_t k = 0; k < list.size(); ++k) {
        if (elapsed() > seconds) break;
        const double sec = run_blas2(p, list[k]);
        if (k == 0)
          PIPEVD_CUDA_CHECK(
              cudaMemcpy(p.xref, p.x, sizeof(double) * p.m * n, cudaMemcpyDeviceToDevice));
        report_blas2("tune", p, list[k], sec, k > 0);
        auto& bst = best[{n, mdiv}];
        if (bst.first == 0.0 || sec < bst.first) bst = {sec, list[k]};
      }
      best_mdiv[mdiv] = best[{n, mdiv}].second;
    }

  std::printf("\n%-6s %6s %6s | %-16s %9s %7s | %-16s %9s | %9s %9s %7s %9s | %s\n", "table", "n",
              "m", "default", "s", "TF/s", "best tuned", "s", "blas3 s", "(T form)", "TF/s", "diff",
              "blas3/blas2");
  std::vector<std::string> rows;
  for (long n : ns)
    for (long mdiv : mdivs) {
      const long m = n / mdiv;
      if (elapsed() > seconds) {
        rows.push_back("n=" + std::to_string(n) + " m=" + std::to_string(m) + " skipped (budget)");
        std::printf("table  n=%6ld m=%6ld skipped (budget)\n", n, m);
        continue;
      }
      Problem p(n, b, m);
      const BcBackTunables def = pipevd::gpu::default_bc_back_tunables(m, p.L.b);
      const double t_def = run_blas2(p, def);
      PIPEVD_CUDA_CHECK(cudaMemcpy(p.xref, p.x, sizeof(double) * m * n, cudaMemcpyDeviceToDevice));
      report_blas2("blas2", p, def, t_def, false);
      BcBackTunables tuned = def;
      if (best.count({n, mdiv}))
        tuned = best[{n, mdiv}].second;
      else if (best_mdiv.count(mdiv))
        tuned = best_mdiv[mdiv];
      double t_tuned = t_def;
      if (name(tuned) != name(def) && elapsed() < seconds) {
        t_tuned = run_blas2(p, tuned);
        report_blas2("blas2", p, tuned, t_tuned, true);
      }
      double t3 = 0.0, t3form = 0.0, diff3 = 0.0;
      if (blas3 && elapsed() < seconds) {
        void* work = nullptr;
        PIPEVD_CUDA_CHECK(cudaMalloc(
            &work, pipevd::gpu::bc_back_blas3_workspace_bytes(p.L, m, static_cast<int>(group3))));
        p.reset();
        t3form =
            1e-3 * time_ms([&] {
              pipevd::gpu::bc_back_blas3(p.L, p.v, p.tau, m, p.x, m, static_cast<int>(group3), work,
                                         handle, nullptr, pipevd::gpu::Blas3Part::form_only);
            });
        p.reset();
        t3 = 1e-3 * time_ms([&] {
               pipevd::gpu::bc_back_blas3(p.L, p.v, p.tau, m, p.x, m, static_cast<int>(group3),
                                          work, handle, nullptr);
             });
        cudaFree(work);
        diff3 = max_abs_diff(p.x, p.xref, m * n) / p.x0max;
        std::printf(
            "blas3  n=%6ld m=%6ld b=%2ld  G=%ld %9.4f s (V/T formation alone %.4f s)  "
            "%6.2f TFLOP/s (2mn^2 model)  diff_vs_blas2=%.2e\n",
            n, m, p.L.b, group3, t3, t3form, p.flops() / t3 * 1e-12, diff3);
        std::fflush(stdout);
      }
      const double t2 = std::min(t_def, t_tuned);
      char line[512];
      std::snprintf(
          line, sizeof line,
          "%-6s %6ld %6ld | %-16s %9.4f %7.2f | %-16s %9.4f | %9.4f %9.4f %7.2f %9.2e | %s",
          "table", n, m, name(def).c_str(), t_def, p.flops() / t_def * 1e-12, name(tuned).c_str(),
          t_tuned, t3, t3form, t3 > 0 ? p.flops() / t3 * 1e-12 : 0.0, diff3,
          t3 > 0 ? (std::to_string(t3 / t2).substr(0, 5) + "x").c_str() : "-");
      rows.push_back(line);
    }
  std::printf(
      "\nsummary (b = %ld; TF/s with the 2 m n^2 model; blas3/blas2 = BLAS3 time over the "
      "faster BLAS2 time)\n",
      b);
  for (const std::string& r : rows) std::printf("%s\n", r.c_str());
  cublasDestroy(handle);
  return 0;
}
