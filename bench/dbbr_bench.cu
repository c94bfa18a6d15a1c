// DBBR alone on one GPU (issue 5): reduce_to_band on the GPU backend, one engine rank, with the
// time split over its parts (device events around each part: panel QR, A W, form Z, the recursive
// panel updates, the trailing update, copies/allocations, broadcasts), next to cuSOLVER's
// one-stage tridiagonalization (sytrd) of the same matrix, and the panel QR alone.
//
//   dbbr_bench [--n 8192,16384,32768,49152] [--b 32] [--k 1024,256,512,2048] [--seconds 200]
//              [--sytrd-max-n 32768] [--panel-syr2k 0,1] [--qr 1] [--panel-qr auto,cusolver]
//              [--aw symm,gemm]
//              [--qr-sweep 8192,16384,32768,49152 --qr-b 32,64]
//
// b and the first k default to PIPEVD_BAND / PIPEVD_BLOCK where set (else the engine's defaults);
// the first k of --k is the one both --panel-syr2k settings run with, the others run with the
// first --panel-syr2k value only. TFLOP/s counts 4/3 n^3 for every method. Per size: DBBR's cases,
// then cusolverDnDsytrd (the 32-bit API: this CUDA has no cusolverDnXsytrd, so sizes with n^2 past
// INT_MAX are skipped, and so are sizes above --sytrd-max-n), then the panel QR of an n x b panel
// (backend panel_qr = cusolverDnXgeqrf + T + W; Xgeqrf alone; the leaf level of a TSQR, batched
// geqrf of 256 x b row blocks, as a lower bound of what a TSQR could take) and A W alone (GEMM
// with A^T as DBBR does, GEMM with A, Dsymm on one triangle). Cases whose start would
// pass --seconds are skipped. "gaps" is the wall time not covered by any part (host launch work
// the device waited for). --panel-qr: the backend's panel QR paths each DBBR case runs with (auto =
// the fused kernel of gpu/panel_qr.cuh where it applies; cusolver = Xgeqrf always), named at the
// end of the line. The panel QR line times the backend with both paths. --qr-sweep: only the panel
// QR line for these m and every --qr-b, then exit. --aw: A W through the backend's
// symmetric_product kernel (symm, the default, where it applies: b <= 32, m >= 8192) and/or
// GEMMs on full columns (gemm).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "gpu/dbbr_event_clock.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "interface/policy.hpp"

namespace {

using pipevd::DbbrPart;
using pipevd::bench::Clock;
using pipevd::bench::parse_list;
using pipevd::bench::seconds_since;
using pipevd::bench::splitmix_uniform;

constexpr int kParts = pipevd::kDbbrParts;
using EventProfiler = pipevd::gpu::DbbrEventClock;

// A(i, j) = A(j, i) uniform in (-1, 1) from a hash of (min, max): symmetric, full storage.
__global__ void random_symmetric(long n, std::uint64_t seed, double* a) {
  const long total = n * n;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / n, i = k - j * n;
    const std::uint64_t lo = i < j ? i : j, hi = i < j ? j : i;
    a[k] = splitmix_uniform(seed + lo * 0x9E3779B97F4A7C15ull + hi * 0xBF58476D1CE4E5B9ull);
  }
}

// count values uniform in (-1, 1).
__global__ void random_values(long count, std::uint64_t seed, double* a) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    a[k] = splitmix_uniform(seed + k * 0x9E3779B97F4A7C15ull);
  }
}
void fill_random(cudaStream_t s, long n, double* a) {
  random_symmetric<<<4096, 256, 0, s>>>(n, 12345, a);
  PIPEVD_CUDA_CHECK_LAUNCH();
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s));
}

double tflops(long n, double s) { return 4.0 / 3.0 * double(n) * n * n / s * 1e-12; }

struct DbbrCase {
  long n, b, k;
  bool panel_syr2k;
  pipevd::gpu::GpuBackend::PanelQrPath qr_path = pipevd::gpu::GpuBackend::PanelQrPath::Auto;
  bool aw_symm = true;  // A W by symmetric_product's kernel where it applies (false: GEMMs)
};
const char* path_name(pipevd::gpu::GpuBackend::PanelQrPath p) {
  return p == pipevd::gpu::GpuBackend::PanelQrPath::Cusolver ? "cusolver" : "auto";
}

// One DBBR run on the device matrix `a` (regenerated first); prints one line.
void run_dbbr(pipevd::gpu::GpuBackend& be, cudaStream_t s, EventProfiler& prof, double* a,
              const DbbrCase& c) {
  fill_random(s, c.n, a);
  be.set_panel_qr_path(c.qr_path);
  be.set_symmetric_product(c.aw_symm);
  const pipevd::EngineLayout L = pipevd::plan_engine_layout(c.n, 1, c.b);
  pipevd::DbbrOptions opt{c.b, c.k, true};
  opt.panel_syr2k = c.panel_syr2k;
  opt.profiler = &prof;
  prof.collect();
  const auto t0 = Clock::now();
  double wall = 0;
  {
    pipevd::ReflectorPanels p = pipevd::reduce_to_band(be, L, 0, a, opt);
    be.synchronize();
    wall = seconds_since(t0);
  }  // the reflectors go (keep_reflectors as for JOBZ = 'V': they take their memory meanwhile)
  const auto parts = prof.collect();
  double sum = 0;
  std::printf("dbbr n=%ld b=%ld k=%ld panel_syr2k=%d: %.4f s %.2f TFLOP/s |", c.n, c.b, c.k,
              c.panel_syr2k ? 1 : 0, wall, tflops(c.n, wall));
  for (int i = 0; i < kParts; ++i) {
    std::printf(" %s %.4f", pipevd::to_string(static_cast<DbbrPart>(i)), parts[i]);
    sum += parts[i];
  }
  std::printf(" | gaps %.4f | panel_qr_path %s%s | aw %s\n", wall - sum, path_name(c.qr_path),
              c.qr_path == pipevd::gpu::GpuBackend::PanelQrPath::Auto
                  ? (be.panel_qr_fused(c.n, c.b) ? " (fused)" : " (cusolver: fused n/a)")
                  : "",
              be.symmetric_product_used(c.n - c.b, c.b) ? "symm" : "gemm");  // the first panel's m
  be.set_panel_qr_path(pipevd::gpu::GpuBackend::PanelQrPath::Auto);
  be.set_symmetric_product(true);
  std::fflush(stdout);
}

// cusolverDnDsytrd on the same matrix (regenerated), workspace outside the timing.
void run_sytrd(cusolverDnHandle_t solver, cudaStream_t s, double* a, long n) {
  if (static_cast<double>(n) * n > INT_MAX) {
    std::printf("sytrd n=%ld: skipped (cusolverDnDsytrd takes int sizes; no Xsytrd here)\n", n);
    return;
  }
  fill_random(s, n, a);
  const int in = static_cast<int>(n);
  double *d = nullptr, *e = nullptr, *tau = nullptr, *work = nullptr;
  int* info = nullptr;
  int lwork = 0;
  PIPEVD_CUDA_CHECK(cudaMalloc(&d, sizeof(double) * n));
  PIPEVD_CUDA_CHECK(cudaMalloc(&e, sizeof(double) * n));
  PIPEVD_CUDA_CHECK(cudaMalloc(&tau, sizeof(double) * n));
  PIPEVD_CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
  PIPEVD_CUSOLVER_CHECK(
      cusolverDnDsytrd_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, in, a, in, d, e, tau, &lwork));
  PIPEVD_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * std::max(1, lwork)));
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s));
  const auto t0 = Clock::now();
  PIPEVD_CUSOLVER_CHECK(
      cusolverDnDsytrd(solver, CUBLAS_FILL_MODE_LOWER, in, a, in, d, e, tau, work, lwork, info));
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s));
  const double t = seconds_since(t0);
  int h_info = 0;
  PIPEVD_CUDA_CHECK(cudaMemcpy(&h_info, info, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("sytrd n=%ld: %.4f s %.2f TFLOP/s info=%d\n", n, t, tflops(n, t), h_info);
  std::fflush(stdout);
  for (void* p : {static_cast<void*>(d), static_cast<void*>(e), static_cast<void*>(tau),
                  static_cast<void*>(work), static_cast<void*>(info)})
    cudaFree(p);
}

// The best of `reps` wall times of f() to the end of its work on stream s; prepare() (untimed)
// before each.
template <class Prepare, class F>
double best_seconds(int reps, cudaStream_t s, Prepare&& prepare, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    prepare();
    const auto t0 = Clock::now();
    f();
    PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s));
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// The panel QR of an m x b panel (a holds m x m, filled here, or with fill = false an m x b panel
// already filled; the same panel copied in per repetition).
void run_panel_qr(pipevd::gpu::GpuBackend& be, cusolverDnHandle_t solver, cublasHandle_t blas,
                  cudaStream_t s, double* a, long m, long b, bool fill = true) {
  const int reps = 10;
  pipevd::DeviceBuffer w(be, m * b), y(be, m * b), src(be, m * b);
  if (fill) fill_random(s, m, a);  // a holds m x m; its first b columns are the panel
  be.copy_matrix(m, b, a, m, src.get(), m);
  be.synchronize();
  auto time = [&](auto&& f) {
    return best_seconds(
        reps, s,
        [&] {
          be.copy_matrix(m, b, src.get(), m, a, m);
          be.synchronize();
        },
        f);
  };
  using Path = pipevd::gpu::GpuBackend::PanelQrPath;
  be.set_panel_qr_path(Path::Fused);  // the fused kernel wherever it fits, for the comparison
  const bool fused = be.panel_qr_fused(m, b);
  const double full = time([&] { be.panel_qr(m, b, a, m, w.get(), m, y.get(), m); });
  be.set_panel_qr_path(Path::Cusolver);
  const double old = time([&] { be.panel_qr(m, b, a, m, w.get(), m, y.get(), m); });
  be.set_panel_qr_path(Path::Auto);
  // Xgeqrf alone.
  cusolverDnParams_t params;
  PIPEVD_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  std::size_t dbytes = 0, hbytes = 0;
  PIPEVD_CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(
      solver, params, m, b, CUDA_R_64F, a, m, CUDA_R_64F, w.get(), CUDA_R_64F, &dbytes, &hbytes));
  void* dwork = nullptr;
  int* info = nullptr;
  PIPEVD_CUDA_CHECK(cudaMalloc(&dwork, std::max<std::size_t>(dbytes, 8)));
  PIPEVD_CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
  std::vector<char> hwork(std::max<std::size_t>(hbytes, 1));
  const double geqrf = time([&] {
    PIPEVD_CUSOLVER_CHECK(cusolverDnXgeqrf(solver, params, m, b, CUDA_R_64F, a, m, CUDA_R_64F,
                                           w.get(), CUDA_R_64F, dwork, dbytes, hwork.data(), hbytes,
                                           info));
  });
  // TSQR's leaf level: geqrf of every 256 x b row block in one batched call.
  const long leaf = 256, leaves = m / leaf;
  double batched = 0;
  if (leaves > 0) {
    std::vector<double*> ha(leaves), ht(leaves);
    for (long i = 0; i < leaves; ++i) {
      ha[i] = a + i * leaf;
      ht[i] = y.get() + i * b;  // tau of each leaf (y is m*b >= leaves*b doubles)
    }
    double** da = nullptr;
    double** dt = nullptr;
    PIPEVD_CUDA_CHECK(cudaMalloc(&da, sizeof(double*) * leaves));
    PIPEVD_CUDA_CHECK(cudaMalloc(&dt, sizeof(double*) * leaves));
    PIPEVD_CUDA_CHECK(cudaMemcpy(da, ha.data(), sizeof(double*) * leaves, cudaMemcpyHostToDevice));
    PIPEVD_CUDA_CHECK(cudaMemcpy(dt, ht.data(), sizeof(double*) * leaves, cudaMemcpyHostToDevice));
    int hinfo = 0;
    batched = time([&] {
      PIPEVD_CUBLAS_CHECK(cublasDgeqrfBatched(blas, static_cast<int>(leaf), static_cast<int>(b), da,
                                              static_cast<int>(m), dt, &hinfo,
                                              static_cast<int>(leaves)));
    });
    cudaFree(da);
    cudaFree(dt);
  }
  std::printf(
      "panel_qr m=%ld b=%ld: backend %.3f ms (%s); cusolver path %.3f ms (Xgeqrf %.3f ms, T and W "
      "%.3f ms), speed-up %.2fx; TSQR leaf level (batched geqrf of %ld x %ld blocks) %.3f ms\n",
      m, b, full * 1e3, fused ? "fused" : "fused n/a: cusolver", old * 1e3, geqrf * 1e3,
      (old - geqrf) * 1e3, old / full, leaf, b, batched * 1e3);
  std::fflush(stdout);
  cudaFree(dwork);
  cudaFree(info);
  cusolverDnDestroyParams(params);
}

// A W alone, the memory-bound part of every panel (A read once per panel): the m x m symmetric A
// times an m x b W as DBBR forms it (GEMM with A^T over its columns), as a GEMM with A, and as
// cublasDsymm on the lower triangle (half the bytes; the next step if it runs near bandwidth).
void run_aw_probe(pipevd::gpu::GpuBackend& be, cublasHandle_t blas, cudaStream_t s, double* a,
                  long m, long b) {
  const int reps = 5;
  pipevd::DeviceBuffer w(be, m * b), z(be, m * b);
  fill_random(s, m, a);
  be.copy_matrix(m, b, a, m, w.get(), m);  // any values
  auto time = [&](auto&& f) {
    return best_seconds(
        reps, s, [&] { be.synchronize(); }, f);
  };
  const double one = 1.0, zero = 0.0;
  const double t_gemm_t =
      time([&] { be.gemm('T', 'N', m, b, m, 1.0, a, m, w.get(), m, 0.0, z.get(), m); });
  const double t_gemm_n =
      time([&] { be.gemm('N', 'N', m, b, m, 1.0, a, m, w.get(), m, 0.0, z.get(), m); });
  const double t_symm = time([&] {
    PIPEVD_CUBLAS_CHECK(cublasDsymm_64(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, m, b, &one,
                                       a, m, w.get(), m, &zero, z.get(), m));
  });
  const double gb = 8.0 * m * m * 1e-9;  // the whole of A
  std::printf(
      "aw m=%ld b=%ld: gemm A^T W %.3f ms (%.0f GB/s of A), gemm A W %.3f ms (%.0f GB/s), "
      "symm (lower) %.3f ms (%.0f GB/s of the full A's size)\n",
      m, b, t_gemm_t * 1e3, gb / t_gemm_t, t_gemm_n * 1e3, gb / t_gemm_n, t_symm * 1e3,
      gb / t_symm);
  std::fflush(stdout);
}

}  // namespace

int run(int argc, char** argv) {
  const pipevd::PolicyOrError& pol = pipevd::process_policy();
  if (!pol.error.empty()) {
    std::fprintf(stderr, "dbbr_bench: %s\n", pol.error.c_str());
    return 2;
  }
  const pipevd::EngineOptions defaults;
  std::vector<long> sizes = {8192, 16384, 32768, 49152};
  long b = pol.policy.band > 0 ? pol.policy.band : defaults.b;
  const long k0 = pol.policy.block > 0 ? pol.policy.block : defaults.k;
  std::vector<long> ks = {k0};
  for (long k : {256L, 512L, 1024L, 2048L})
    if (k != k0) ks.push_back(k);
  std::vector<long> panel_syr2k = {0, 1};
  long sytrd_max_n = 32768;
  bool qr = true;
  std::vector<pipevd::gpu::GpuBackend::PanelQrPath> qr_paths = {
      pipevd::gpu::GpuBackend::PanelQrPath::Auto};
  std::vector<long> qr_sweep, qr_b = {32, 64};
  std::vector<bool> aw_symm = {true};
  double budget = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--n")
      sizes = parse_list(v);
    else if (a == "--b")
      b = std::atol(v.c_str());
    else if (a == "--k")
      ks = parse_list(v);
    else if (a == "--panel-syr2k")
      panel_syr2k = parse_list(v);
    else if (a == "--sytrd-max-n")
      sytrd_max_n = std::atol(v.c_str());
    else if (a == "--qr")
      qr = std::atoi(v.c_str()) != 0;
    else if (a == "--panel-qr") {
      qr_paths.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ','))
        qr_paths.push_back(item == "cusolver" ? pipevd::gpu::GpuBackend::PanelQrPath::Cusolver
                                              : pipevd::gpu::GpuBackend::PanelQrPath::Auto);
    } else if (a == "--aw") {
      aw_symm.clear();
      std::stringstream ss(v);
      std::string item;
      while (std::getline(ss, item, ',')) aw_symm.push_back(item != "gemm");
    } else if (a == "--qr-sweep")
      qr_sweep = parse_list(v);
    else if (a == "--qr-b")
      qr_b = parse_list(v);
    else if (a == "--seconds")
      budget = std::atof(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (ks.empty() || panel_syr2k.empty() || qr_paths.empty() || b < 1) {
    std::fprintf(stderr, "dbbr_bench: empty --k or --panel-syr2k, or b < 1\n");
    return 2;
  }
  const auto start = Clock::now();
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("# dbbr_bench on %s (%d SMs), b = %ld; seconds, TFLOP/s of 4/3 n^3\n", prop.name,
              prop.multiProcessorCount, b);

  pipevd::gpu::GpuBackend be(device);
  be.bind(MPI_COMM_SELF);
  pipevd::gpu::GpuContext& ctx = pipevd::gpu::GpuContext::for_device(device);
  cudaStream_t s = ctx.lane(0).stream;
  cusolverDnHandle_t solver = ctx.solver(s);
  cublasHandle_t blas = ctx.lane(0).blas;
  EventProfiler prof(device, s);

  if (!qr_sweep.empty()) {  // the panel QR alone: fused kernel against the cuSOLVER path
    for (long m : qr_sweep)
      for (long qb : qr_b) {
        pipevd::DeviceBuffer p(be, m * qb);
        random_values<<<1024, 256, 0, s>>>(m * qb, 777, p.get());
        PIPEVD_CUDA_CHECK_LAUNCH();
        run_panel_qr(be, solver, blas, s, p.get(), m, qb, false);
      }
    return 0;
  }

  {  // warm-up: handles, the memory pool, syr2k's workspaces
    pipevd::DeviceBuffer a(be, 2048L * 2048);
    run_dbbr(be, s, prof, a.get(), {2048, b, ks[0], false});
  }
  for (long n : sizes) {
    {  // what the pool kept from the previous size goes back, so the next size sees it free
      PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
      pipevd::gpu::trim_device_pools();
    }
    const double mem_gib = 8.0 * n * n / 1073741824.0;
    std::size_t free_b = 0, total_b = 0;
    PIPEVD_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    // The matrix, the kept reflectors (about one more matrix) and the block workspaces.
    if (2.3 * mem_gib > free_b / 1073741824.0) {
      std::printf("n=%ld: skipped (%.1f GiB per matrix, %.1f GiB free)\n", n, mem_gib,
                  free_b / 1073741824.0);
      continue;
    }
    pipevd::DeviceBuffer a(be, n * n);
    std::vector<DbbrCase> cases;
    for (bool symm : aw_symm)
      for (auto path : qr_paths) {
        for (long ps : panel_syr2k) cases.push_back({n, b, ks[0], ps != 0, path, symm});
        for (std::size_t i = 1; i < ks.size(); ++i)
          cases.push_back({n, b, ks[i], panel_syr2k[0] != 0, path, symm});
      }
    for (const DbbrCase& c : cases) {
      if (seconds_since(start) > budget) {
        std::printf("dbbr n=%ld k=%ld: skipped (budget)\n", c.n, c.k);
        continue;
      }
      run_dbbr(be, s, prof, a.get(), c);
    }
    if (n <= sytrd_max_n && seconds_since(start) < budget)
      run_sytrd(solver, s, a.get(), n);
    else
      std::printf("sytrd n=%ld: skipped (--sytrd-max-n %ld or budget)\n", n, sytrd_max_n);
    if (qr && seconds_since(start) < budget) {
      run_panel_qr(be, solver, blas, s, a.get(), n, b);
      run_aw_probe(be, blas, s, a.get(), n, b);
    }
  }
  return 0;
}

int main(int argc, char** argv) { return pipevd::bench::bench_main(argc, argv, "dbbr_bench", run); }
