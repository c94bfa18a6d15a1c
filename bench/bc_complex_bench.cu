// Complex bulge chasing benchmark (issue 28): gpu::bulge_chase_complex with each step's window
// staged in shared memory against the step in place on the band, on the same random Hermitian
// band (on the device, every reflector written), and whether their outputs are bitwise equal.
//
//   bc_complex_bench [--n 16384,32768] [--b 32] [--reps 3] [--per-block 1,2,3]
//
// Rows per (n, b): "in place" with the defaults (default_bulge_chasing_tunables with the
// PIPEVD_GPU_BC_* overrides, stage_window off); "in place" with 4 sweeps per block and every
// block that fits on each SM (the complex kernel's schedule before it took the tunables);
// "staged" with the defaults; one "staged" row per --per-block value (capped by shared memory).
// Times: device events around gpu::bulge_chase_complex (band copy-in, the sweeps, extraction),
// median and minimum of --reps runs after one warm-up (one run where a run takes over 2 s).
// bitwise: d, the subdiagonal, v and tau of every run of the row equal the first in-place run's
// (compared on the device); for the first row, its later runs.
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "base/cuda_check.hpp"
#include "bench/bench_util.hpp"
#include "core/reflector_store.hpp"
#include "gpu/bulge_chasing_complex.cuh"
#include "interface/gpu_options.hpp"

namespace {

using pipevd::ReflectorLayout;
using pipevd::bench::parse_list;
using pipevd::gpu::BulgeChasingTunables;
using Z = cuDoubleComplex;

// Differing 8-byte words of x and y, added to *count.
__global__ void count_differences(const unsigned long long* x, const unsigned long long* y,
                                  std::size_t words, unsigned long long* count) {
  unsigned long long mine = 0;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < words;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    mine += x[k] != y[k];
  if (mine) atomicAdd(count, mine);
}

// A random Hermitian band in lower band storage (ldab = b + 1), entries in the unit square, the
// diagonal real, nothing stored below the matrix.
std::vector<Z> random_band(long n, long b) {
  std::mt19937_64 gen(static_cast<unsigned>(n * 100 + b));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Z> ab(static_cast<std::size_t>(n * (b + 1)), make_cuDoubleComplex(0.0, 0.0));
  for (long j = 0; j < n; ++j)
    for (long r = 0; r <= b && j + r < n; ++r) {
      const double re = u(gen), im = u(gen);
      ab[r + j * (b + 1)] = make_cuDoubleComplex(re, r == 0 ? 0.0 : im);
    }
  return ab;
}

// The chase's outputs on the device.
struct Outputs {
  double* d = nullptr;
  Z *sub = nullptr, *v = nullptr, *tau = nullptr;
  Outputs(long n, const ReflectorLayout& L) {
    PIPEVD_CUDA_CHECK(cudaMalloc(&d, sizeof(double) * n));
    PIPEVD_CUDA_CHECK(cudaMalloc(&sub, sizeof(Z) * n));
    PIPEVD_CUDA_CHECK(cudaMalloc(&v, sizeof(Z) * std::max(1L, L.vector_array_size())));
    PIPEVD_CUDA_CHECK(cudaMalloc(&tau, sizeof(Z) * std::max(1L, L.count())));
  }
  ~Outputs() { cudaFree(d), cudaFree(sub), cudaFree(v), cudaFree(tau); }
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;
};

class Problem {
 public:
  Problem(long n, long b) : n_(n), b_(b), L_{n, std::min(b, n - 1)}, ref_(n, L_), out_(n, L_) {
    const std::vector<Z> ab = random_band(n, b);
    PIPEVD_CUDA_CHECK(cudaMalloc(&ab_, sizeof(Z) * ab.size()));
    PIPEVD_CUDA_CHECK(cudaMemcpy(ab_, ab.data(), sizeof(Z) * ab.size(), cudaMemcpyHostToDevice));
    PIPEVD_CUDA_CHECK(cudaMalloc(&work_, pipevd::gpu::bulge_chase_complex_workspace_bytes(n, b)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&count_, sizeof(unsigned long long)));
  }
  ~Problem() { cudaFree(ab_), cudaFree(work_), cudaFree(count_); }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  // Seconds of one chase into the reference outputs (to_ref) or the scratch ones.
  double chase(const BulgeChasingTunables& tun, bool to_ref) {
    Outputs& o = to_ref ? ref_ : out_;
    PIPEVD_CUDA_CHECK(cudaMemset(o.tau, 0xff, sizeof(Z) * std::max(1L, L_.count())));  // poison
    cudaEvent_t e0, e1;
    PIPEVD_CUDA_CHECK(cudaEventCreate(&e0));
    PIPEVD_CUDA_CHECK(cudaEventCreate(&e1));
    PIPEVD_CUDA_CHECK(cudaEventRecord(e0));
    pipevd::gpu::bulge_chase_complex(n_, b_, ab_, b_ + 1, o.d, o.sub, o.v, o.tau, work_, tun,
                                     nullptr);
    PIPEVD_CUDA_CHECK(cudaEventRecord(e1));
    PIPEVD_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    return ms * 1e-3;
  }

  // The scratch outputs bitwise equal to the reference ones.
  bool same_as_reference() {
    return same(ref_.d, out_.d, n_) && same(ref_.sub, out_.sub, n_ - 1) &&
           same(ref_.v, out_.v, L_.vector_array_size()) && same(ref_.tau, out_.tau, L_.count());
  }

 private:
  template <class T>
  bool same(const T* x, const T* y, long count) {
    if (count <= 0) return true;
    const std::size_t words = sizeof(T) * static_cast<std::size_t>(count) / 8;
    PIPEVD_CUDA_CHECK(cudaMemset(count_, 0, sizeof(unsigned long long)));
    count_differences<<<1024, 256>>>(reinterpret_cast<const unsigned long long*>(x),
                                     reinterpret_cast<const unsigned long long*>(y), words, count_);
    PIPEVD_CUDA_CHECK(cudaGetLastError());
    unsigned long long differing = 0;
    PIPEVD_CUDA_CHECK(cudaMemcpy(&differing, count_, sizeof(differing), cudaMemcpyDeviceToHost));
    return differing == 0;
  }

  long n_, b_;
  ReflectorLayout L_;
  Outputs ref_, out_;
  Z* ab_ = nullptr;
  void* work_ = nullptr;
  unsigned long long* count_ = nullptr;
};

// One row: a warm-up and reps timed runs with tun. The first row's warm-up makes the reference
// outputs.
void run_row(Problem& p, long n, long b, const BulgeChasingTunables& tun, bool first, int reps) {
  const pipevd::gpu::ComplexChasePlan plan = pipevd::gpu::bulge_chase_complex_plan(n, b, tun);
  std::vector<double> times;
  bool bitwise = true;
  const double warm = p.chase(tun, first);
  if (!first) bitwise = p.same_as_reference();
  if (warm > 2.0) reps = std::min(reps, 1);
  for (int r = 0; r < reps; ++r) {
    times.push_back(p.chase(tun, false));
    bitwise = bitwise && p.same_as_reference();
  }
  std::sort(times.begin(), times.end());
  const std::string per_sm =
      tun.blocks_per_sm > 0 ? std::to_string(tun.blocks_per_sm) : std::string("all");
  std::printf("%6ld %4ld %-8s %10d %8s %12.1f %10.4f %10.4f %8s\n", n, b,
              plan.staged ? "staged" : "in place", plan.sweeps_per_block, per_sm.c_str(),
              plan.shared_bytes_per_sweep / 1024.0, times[times.size() / 2], times.front(),
              bitwise ? "yes" : "NO");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{16384, 32768}, bs{32}, per_blocks;
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc)
      ns = parse_list(argv[++i]);
    else if (a == "--b" && i + 1 < argc)
      bs = parse_list(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--per-block" && i + 1 < argc)
      per_blocks = parse_list(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--n N,...] [--b B,...] [--reps R] [--per-block K,...]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    int device = 0;
    cudaDeviceProp prop{};
    PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
    PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::printf("device: %s, %d SMs, L2 %d MB, %zu KB shared memory per block (opt-in)\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
                prop.sharedMemPerBlockOptin >> 10);
    std::printf("%6s %4s %-8s %10s %8s %12s %10s %10s %8s\n", "n", "b", "variant", "per_block",
                "per_sm", "KB_per_sweep", "median_s", "min_s", "bitwise");
    const auto overrides = pipevd::gpu_tuning(pipevd::process_policy().policy).bulge_chasing;
    for (long n : ns)
      for (long b : bs) {
        Problem p(n, b);
        const BulgeChasingTunables def = pipevd::gpu::with_overrides(
            pipevd::gpu::default_bulge_chasing_tunables(device, n, b), overrides);
        BulgeChasingTunables in_place = def, all_sms = def;
        in_place.stage_window = all_sms.stage_window = false;
        all_sms.sweeps_per_block = 4;
        all_sms.blocks_per_sm = 0;
        std::vector<BulgeChasingTunables> rows{in_place, all_sms, def};
        for (long k : per_blocks) {
          rows.push_back(def);
          rows.back().sweeps_per_block = static_cast<int>(k);
        }
        for (std::size_t r = 0; r < rows.size(); ++r) run_row(p, n, b, rows[r], r == 0, reps);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bc_complex_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
