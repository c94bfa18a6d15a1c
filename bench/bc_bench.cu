// Bulge chasing benchmark: gpu::bulge_chase (band -> tridiagonal, all reflectors kept) against
// LAPACK's dsytrd_sb2st (VECT = 'N', d and e only: the CPU-resident algorithm that MAGMA and
// LAPACK use) on the same band matrices, n in {8192, 16384, 32768, 65536}, b in {16, 32, 64}.
//
//   bc_bench [--n 8192,16384,...] [--b 16,32,64] [--reps 3] [--tune] [--ceilings]
//            [--lapack-dir DIR] [--lapack-seconds 240]
//            [--tune-n 16384] [--tune-seconds 1e9] [--tune-only] [--stage on|off|both]
//            [--step registers|loops|both]
//
// --stage: the table's GPU runs with each step's window staged in shared memory (on, the
// default), in place in the band (off), or both (one row each, the in-place row marked "L2");
// both must give bitwise the same d, e, tau.
// --step: the staged runs' step with its entries in registers (registers, the default for b <= 32),
// as loops over shared memory (loops), or both (an extra row "loops"); bitwise the same.
// --tune: for each b in --b and n in --tune-n (in that order), one timed run of every
// threads_per_sweep {16, 32} x sweeps_per_block {2, 4, 8} x blocks_per_sm {1, 2}; d, e and tau of
// each compared bitwise with the first configuration's (the schedule must not change the
// arithmetic); cases not started within --tune-seconds of the start are skipped. The table below
// then uses the fastest tuned configuration for its (n, b), else the defaults. --tune-only: no
// table, no LAPACK.
//
// GPU times: device events around gpu::bulge_chase (band copy-in, the sweeps, d/e extraction),
// band already on the device, median of --reps runs after one warm-up; d, e and tau of every run
// compared bitwise with the first (a moving result is a race). Throughput: the bytes each step
// reads and writes (the reflector's column, the left block, the lower triangle of the diagonal
// block, the right block, the reflector written out), over time, next to the device-to-device copy
// bandwidth (--ceilings), to show how far from the memory limit the sweeps are.
//
// LAPACK: the OpenBLAS/LAPACK linked (on the GPU machine Debian's libopenblas0-pthread 0.3.21,
// whose LAPACK is built without OpenMP, so dsytrd_sb2st runs on one core whatever
// OPENBLAS_NUM_THREADS says) runs in sb2st_bench, started in the background before the GPU work
// (see that file); bc_bench waits for its result files in DIR at most --lapack-seconds (counted
// from its own start), then prints them next to its times; unfinished cases are reported as such.
#include <cuda_runtime.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bc_bench_common.hpp"
#include "core/reflector_store.hpp"
#include "gpu/bulge_chasing.cuh"
#include "gpu/gpu_context.hpp"
#include "interface/gpu_options.hpp"

namespace {

using namespace pipevd::bench;
using pipevd::ReflectorLayout;
using pipevd::gpu::BulgeChasingTunables;

// Bytes the steps read and write (see the header comment), summed over all steps.
double touched_bytes(long n, long b) {
  const ReflectorLayout L{n, b};
  double total = 0.0;
  for (long s = 0; s < L.sweeps(); ++s)
    for (long t = 0; t < L.steps(s); ++t) {
      const long first = L.first_row(s, t), len = L.length(s, t);
      const long left = t == 0 ? 0 : b - 1;
      const long below = std::min(n, first + len + b) - (first + len);
      const double entries = len + len * left + len * (len + 1) / 2.0 + below * len;
      total += 8.0 * (2.0 * entries + b + 1);
    }
  return total;
}

struct GpuBuffers {
  double *ab = nullptr, *d = nullptr, *e = nullptr, *v = nullptr, *tau = nullptr;
  void* work = nullptr;
  ~GpuBuffers() {
    cudaFree(ab), cudaFree(d), cudaFree(e), cudaFree(v), cudaFree(tau), cudaFree(work);
  }
};

struct GpuTiming {
  double median_s = 0.0, min_s = 0.0;
  bool repeatable = true;
  std::vector<double> d, e, tau;
};

GpuTiming time_gpu(long n, long b, const std::vector<double>& ab, const BulgeChasingTunables& tun,
                   int reps) {
  const ReflectorLayout L{n, b};
  GpuBuffers g;
  PIPEVD_CUDA_CHECK(cudaMalloc(&g.ab, sizeof(double) * ab.size()));
  PIPEVD_CUDA_CHECK(cudaMalloc(&g.d, sizeof(double) * n));
  PIPEVD_CUDA_CHECK(cudaMalloc(&g.e, sizeof(double) * n));
  PIPEVD_CUDA_CHECK(cudaMalloc(&g.v, sizeof(double) * L.vector_array_size()));
  PIPEVD_CUDA_CHECK(cudaMalloc(&g.tau, sizeof(double) * L.count()));
  PIPEVD_CUDA_CHECK(cudaMalloc(&g.work, pipevd::gpu::bulge_chase_workspace_bytes(n, b)));
  PIPEVD_CUDA_CHECK(
      cudaMemcpy(g.ab, ab.data(), sizeof(double) * ab.size(), cudaMemcpyHostToDevice));
  cudaEvent_t e0, e1;
  PIPEVD_CUDA_CHECK(cudaEventCreate(&e0));
  PIPEVD_CUDA_CHECK(cudaEventCreate(&e1));
  GpuTiming out;
  std::vector<double> times, d(n), e(n), tau(L.count()), tau0;
  for (int r = 0; r <= reps; ++r) {                                          // r = 0: warm-up
    PIPEVD_CUDA_CHECK(cudaMemset(g.tau, 0xff, sizeof(double) * L.count()));  // poison
    PIPEVD_CUDA_CHECK(cudaEventRecord(e0));
    pipevd::gpu::bulge_chase(n, b, g.ab, b + 1, g.d, g.e, g.v, g.tau, g.work, tun, nullptr);
    PIPEVD_CUDA_CHECK(cudaEventRecord(e1));
    PIPEVD_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    PIPEVD_CUDA_CHECK(cudaMemcpy(d.data(), g.d, sizeof(double) * n, cudaMemcpyDeviceToHost));
    PIPEVD_CUDA_CHECK(cudaMemcpy(e.data(), g.e, sizeof(double) * n, cudaMemcpyDeviceToHost));
    PIPEVD_CUDA_CHECK(
        cudaMemcpy(tau.data(), g.tau, sizeof(double) * L.count(), cudaMemcpyDeviceToHost));
    if (r == 0) {
      out.d = d, out.e = e, tau0 = tau, out.tau = tau;
      if (reps == 0) times.push_back(ms * 1e-3);  // --tune: the one run is the timed one
      if (ms > 2000.f) reps = std::min(reps, 1);  // long runs: one timed run after the warm-up
    } else {
      times.push_back(ms * 1e-3);
      out.repeatable = out.repeatable && std::memcmp(d.data(), out.d.data(), 8 * n) == 0 &&
                       std::memcmp(e.data(), out.e.data(), 8 * (n - 1)) == 0 &&
                       std::memcmp(tau.data(), tau0.data(), 8 * L.count()) == 0;
    }
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  std::sort(times.begin(), times.end());
  out.median_s = times[times.size() / 2];
  out.min_s = times.front();
  return out;
}

// Device-to-device copy bandwidth, bytes read + written per second.
double copy_bandwidth() {
  const size_t bytes = size_t(2) << 30;
  void *a = nullptr, *b = nullptr;
  PIPEVD_CUDA_CHECK(cudaMalloc(&a, bytes));
  PIPEVD_CUDA_CHECK(cudaMalloc(&b, bytes));
  PIPEVD_CUDA_CHECK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  std::vector<double> t;
  for (int r = 0; r < 6; ++r) {
    cudaEventRecord(e0);
    PIPEVD_CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r) t.push_back(ms * 1e-3);
  }
  std::sort(t.begin(), t.end());
  cudaFree(a), cudaFree(b), cudaEventDestroy(e0), cudaEventDestroy(e1);
  return 2.0 * bytes / t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{8192, 16384, 32768, 65536}, bs{16, 32, 64};
  int reps = 3;
  bool tune = false, ceilings = false, tune_only = false;
  std::string stage_mode = "on";        // on | off | both: the step window staged in shared memory
  std::string step_mode = "registers";  // registers | loops | both: the staged step's form
  std::vector<long> tune_ns{16384};
  double tune_seconds = 1e9;
  double lapack_seconds = 240;
  std::string lapack_dir = "/tmp/bc_lapack";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc)
      ns = parse_list(argv[++i]);
    else if (a == "--b" && i + 1 < argc)
      bs = parse_list(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--lapack-seconds" && i + 1 < argc)
      lapack_seconds = std::atof(argv[++i]);
    else if (a == "--lapack-dir" && i + 1 < argc)
      lapack_dir = argv[++i];
    else if (a == "--tune")
      tune = true;
    else if (a == "--tune-only")
      tune = tune_only = true;
    else if (a == "--tune-n" && i + 1 < argc)
      tune_ns = parse_list(argv[++i]);
    else if (a == "--tune-seconds" && i + 1 < argc)
      tune_seconds = std::atof(argv[++i]);
    else if (a == "--stage" && i + 1 < argc)
      stage_mode = argv[++i];
    else if (a == "--step" && i + 1 < argc)
      step_mode = argv[++i];
    else if (a == "--ceilings")
      ceilings = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  int device = 0;
  cudaDeviceProp prop{};
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device: %s, %d SMs, L2 %d MB; host: %u cores; OPENBLAS_NUM_THREADS=%s\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, std::thread::hardware_concurrency(),
              std::getenv("OPENBLAS_NUM_THREADS") ? std::getenv("OPENBLAS_NUM_THREADS") : "unset");

  double copy_bw = 0.0;
  if (ceilings) {
    copy_bw = copy_bandwidth();
    std::printf("device-to-device copy: %.0f GB/s (read + write)\n", copy_bw * 1e-9);
  }

  // Tunables per (n, b): the --tune winners, else the per-GPU defaults.
  std::map<std::pair<long, long>, BulgeChasingTunables> chosen;
  if (tune) {
    std::printf(
        "\ntuning (one run each, with reflectors; bitwise = same d, e, tau as the first)\n");
    std::printf("%6s %4s %4s %10s %9s %10s %8s\n", "n", "b", "tps", "per_block", "per_sm", "time_s",
                "bitwise");
    std::fflush(stdout);
    {  // load each kernel instance once (lazy module loading) before anything is timed
      const auto ab = random_band(2048, 16, 1);
      for (int tps : {32, 16}) time_gpu(2048, 16, ab, BulgeChasingTunables{tps, 2, 1}, 0);
    }
    for (long b : bs)
      for (long n : tune_ns) {
        const auto elapsed = [&] {
          return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        };
        if (elapsed() > tune_seconds) {
          std::printf("%6ld %4ld  skipped (--tune-seconds)\n", n, b);
          continue;
        }
        const auto ab = random_band(n, b, band_seed(n, b));
        double best = 1e30;
        GpuTiming first;
        bool have_first = false;
        for (int tps : {32, 16})
          for (int per_block : {2, 4, 8})
            for (int per_sm : {1, 2}) {
              if (elapsed() > tune_seconds) {
                std::printf("%6ld %4ld %4d %10d %9d  skipped (--tune-seconds)\n", n, b, tps,
                            per_block, per_sm);
                continue;
              }
              const BulgeChasingTunables tun{tps, per_block, per_sm};
              const GpuTiming t = time_gpu(n, b, ab, tun, 0);
              bool same = true;
              if (!have_first)
                first = t, have_first = true;
              else
                same = std::memcmp(t.d.data(), first.d.data(), 8 * n) == 0 &&
                       std::memcmp(t.e.data(), first.e.data(), 8 * (n - 1)) == 0 &&
                       std::memcmp(t.tau.data(), first.tau.data(), 8 * t.tau.size()) == 0;
              std::printf("%6ld %4ld %4d %10d %9d %10.4f %8s\n", n, b, tps, per_block, per_sm,
                          t.median_s, same ? "yes" : "NO");
              std::fflush(stdout);
              if (t.median_s < best) best = t.median_s, chosen[{n, b}] = tun;
            }
        if (!chosen.count({n, b})) continue;
        const auto& c = chosen[{n, b}];
        std::printf("n = %ld, b = %ld: best tps %d, per_block %d, per_sm %d: %.4f s\n", n, b,
                    c.threads_per_sweep, c.sweeps_per_block, c.blocks_per_sm, best);
        std::fflush(stdout);
      }
  }
  if (tune_only) return 0;
  for (long n : ns)
    for (long b : bs)
      if (!chosen.count({n, b}))
        chosen[{n, b}] = pipevd::gpu::with_overrides(
            pipevd::gpu::default_bulge_chasing_tunables(device, n, b),
            pipevd::gpu_tuning(pipevd::process_policy().policy).bulge_chasing);

  struct Row {
    long n, b;
    GpuTiming g;
    double bytes;
  };
  std::vector<Row> rows;
  std::printf("\n%6s %4s %12s %10s %8s %14s %10s\n", "n", "b", "gpu_median_s", "gpu_min_s",
              "repeat", "touched_GB/s", "of_copy");
  for (long n : ns)
    for (long b : bs) {
      const auto ab = random_band(n, b, band_seed(n, b));
      const double bytes = touched_bytes(n, b);
      const auto print_row = [&](const GpuTiming& t, const std::string& note) {
        std::printf("%6ld %4ld %12.4f %10.4f %8s %14.0f %9.1f%%%s\n", n, b, t.median_s, t.min_s,
                    t.repeatable ? "yes" : "NO", bytes / t.median_s * 1e-9,
                    copy_bw > 0 ? 100.0 * bytes / t.median_s / copy_bw : 0.0, note.c_str());
      };
      GpuTiming in_place;
      if (stage_mode != "on") {
        BulgeChasingTunables tun = chosen[{n, b}];
        tun.stage_window = false;
        in_place = time_gpu(n, b, ab, tun, reps);
        print_row(in_place, "  L2 (in place)");
        if (stage_mode == "off") {
          rows.push_back({n, b, in_place, bytes});
          continue;
        }
      }
      const auto identical = [n](const GpuTiming& x, const GpuTiming& y) {
        return std::memcmp(x.d.data(), y.d.data(), 8 * n) == 0 &&
               std::memcmp(x.e.data(), y.e.data(), 8 * (n - 1)) == 0 &&
               std::memcmp(x.tau.data(), y.tau.data(), 8 * x.tau.size()) == 0;
      };
      BulgeChasingTunables tun = chosen[{n, b}];
      tun.register_step = step_mode != "loops";
      GpuTiming loops;
      if (step_mode == "both") {
        BulgeChasingTunables lt = tun;
        lt.register_step = false;
        loops = time_gpu(n, b, ab, lt, reps);
        const bool same = stage_mode != "both" || identical(loops, in_place);
        print_row(loops, same ? "  staged, loops" : "  staged, loops (DIFFERS from L2)");
      }
      const GpuTiming g = time_gpu(n, b, ab, tun, reps);
      rows.push_back({n, b, g, bytes});
      std::string note;
      if (stage_mode == "both")
        note += identical(g, in_place) ? "  staged (bitwise = L2)" : "  staged (DIFFERS)";
      if (step_mode == "both")
        note += identical(g, loops) ? "  registers (bitwise = loops)"
                                    : "  registers (DIFFERS from loops)";
      print_row(g, note);
      std::fflush(stdout);
    }

  // The LAPACK results (waiting for them at most --lapack-seconds from this run's start).
  std::printf(
      "\nLAPACK dsytrd_sb2st('N', 'N', 'L'), one core (thread CPU time), next to "
      "gpu::bulge_chase on the same band matrices\n");
  std::printf("%6s %4s %12s %12s %12s %9s %12s %14s\n", "n", "b", "lapack_cpu_s", "lapack_wall_s",
              "gpu_s", "speedup", "max|d-d_l|", "max||e|-|e_l||");
  for (const auto& row : rows) {
    LapackResult r;
    bool have = false;
    for (;;) {
      have = read_lapack(lapack_dir, row.n, row.b, r);
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (have || waited > lapack_seconds) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    if (!have) {
      std::printf("%6ld %4ld %12s %12s %12.4f\n", row.n, row.b, "(none)", "", row.g.median_s);
      continue;
    }
    double dd = 0, de = 0;
    for (long i = 0; i < row.n; ++i) dd = std::max(dd, std::fabs(r.d[i] - row.g.d[i]));
    for (long i = 0; i + 1 < row.n; ++i)
      de = std::max(de, std::fabs(std::fabs(r.e[i]) - std::fabs(row.g.e[i])));
    std::printf("%6ld %4ld %12.3f %12.3f %12.4f %8.1fx %12.2e %14.2e%s\n", row.n, row.b, r.cpu,
                r.wall, row.g.median_s, r.cpu / row.g.median_s, dd, de,
                r.info ? "  (INFO != 0)" : "");
  }
  std::fflush(stdout);
  return 0;
}
