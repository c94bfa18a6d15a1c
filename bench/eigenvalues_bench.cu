// Eigenvalues-only tridiagonal solvers (the engine's JOBZ = 'N' stage 3): the GPU's parallel
// bisection (GpuBackend::tridiagonal_eigenvalues: scaling on the host, copies, one thread per
// eigenvalue, copy back, sort) against LAPACK dsterf on one core (the previous stage 3) and the
// host bisection on all cores, on the same random tridiagonal T (uniform(-1, 1) entries).
//
//   eigenvalues_bench [--n 8192,16384,32768,65536] [--kind random|glued_wilkinson|toeplitz]
//                     [--reps 3] [--dsterf-max-n 32768] [--host-bisection-max-n 16384]
//
// GPU: wall time of the whole call, median of --reps after one warm-up; every run bitwise equal to
// the first. Agreement: max |w_gpu - w_dsterf| in units of eps * ||T|| (Gershgorin norm).
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/tridiagonal_bisection.hpp"
#include "core/tridiagonal_solver.hpp"
#include "gpu/gpu_backend.hpp"
#include "tests/tridiagonal_cases.hpp"

using namespace pipevd;
using namespace pipevd::testing_tridiagonal;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<long> parse_list(const char* s) {
  std::vector<long> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atol(p));
    const char* c = std::strchr(p, ',');
    if (!c) break;
    p = c + 1;
  }
  return v;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes{8192, 16384, 32768, 65536};
  std::string kind = "random";
  int reps = 3;
  long dsterf_max = 32768, host_max = 16384;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--n"))
      sizes = parse_list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--kind"))
      kind = argv[a + 1];
    else if (!std::strcmp(argv[a], "--reps"))
      reps = std::max(1, std::atoi(argv[a + 1]));
    else if (!std::strcmp(argv[a], "--dsterf-max-n"))
      dsterf_max = std::atol(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--host-bisection-max-n"))
      host_max = std::atol(argv[a + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[a]);
      return 2;
    }
  }
  gpu::GpuBackend be;
  for (long n : sizes) {
    const Tridiagonal t = make_case(kind, n);
    const double unit = DBL_EPSILON * gershgorin_norm(t);
    std::vector<double> w0(n), w(n);
    be.tridiagonal_eigenvalues(n, t.d.data(), t.e.data(), w0.data());  // warm-up
    std::vector<double> times;
    bool stable = true;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      be.tridiagonal_eigenvalues(n, t.d.data(), t.e.data(), w.data());
      times.push_back(seconds_since(t0));
      stable = stable && w == w0;
    }
    std::sort(times.begin(), times.end());
    const double gpu_s = times[times.size() / 2];
    std::printf("eigenvalues_bench n=%ld kind=%s gpu_bisection=%.4f s (min %.4f) repeatable=%s", n,
                kind.c_str(), gpu_s, times.front(), stable ? "yes" : "NO");
    if (n <= dsterf_max) {
      std::vector<double> ref(n);
      const auto t0 = std::chrono::steady_clock::now();
      const int info = tridiagonal_eigenvalues_copy(n, t.d.data(), t.e.data(), ref.data());
      const double s = seconds_since(t0);
      std::printf(" dsterf=%.3f s (info %d) speedup=%.1fx |gpu-dsterf|=%.2f eps||T||", s, info,
                  s / gpu_s, max_diff(w0, ref) / unit);
    }
    if (n <= host_max) {
      std::vector<double> hb(n);
      const auto t0 = std::chrono::steady_clock::now();
      tridiagonal_eigenvalues_bisection(n, t.d.data(), t.e.data(), hb.data());
      const double s = seconds_since(t0);
      std::printf(" host_bisection=%.3f s bitwise_as_gpu=%s", s, hb == w0 ? "yes" : "NO");
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
