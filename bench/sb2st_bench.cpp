// LAPACK's dsytrd_sb2st (STAGE1 = 'N', VECT = 'N', UPLO = 'L': d and e of the band matrix's
// tridiagonal form, no Householder vectors kept), the CPU-resident bulge chasing that MAGMA and
// LAPACK use, on the band matrices bc_bench gives the GPU (same seeds).
//
//   sb2st_bench [--n 8192,16384,32768] [--b 16,32,64] [--dir /tmp/bc_lapack]
//
// Every (n, b) case runs in its own thread at once: on the GPU machine the LAPACK (Debian's
// libopenblas0-pthread 0.3.21) is built without OpenMP, so dsytrd_sb2st is sequential whatever
// OPENBLAS_NUM_THREADS says, and one core per case is what it can use. The figure reported is the
// calling thread's CPU time (the routine's one-core time even when other work shares the cores,
// as when this runs in the background of the GPU session), next to its wall time. Results go to
// DIR/n_b.bin (see bc_bench_common.hpp), printed as each case ends. Plain C++: builds with g++
// -O2 -I. bench/sb2st_bench.cpp -llapack -lpthread, so it can start before the library is built.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bc_bench_common.hpp"

extern "C" void dsytrd_sb2st_(const char* stage1, const char* vect, const char* uplo, const int* n,
                              const int* kd, double* ab, const int* ldab, double* d, double* e,
                              double* hous, const int* lhous, double* work, const int* lwork,
                              int* info, size_t, size_t, size_t);

namespace {

using namespace pipevd::bench;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// One dsytrd_sb2st run; the result goes to DIR/n_b.bin (written under a temporary name, then
// renamed, so a reader never sees half a file).
void run_lapack(long n_, long b_, std::string dir) {
  const int n = static_cast<int>(n_), kd = static_cast<int>(b_), ld = kd + 1;
  std::vector<double> ab = random_band(n_, b_, band_seed(n_, b_));
  std::vector<double> d(n, 0.0), e(n, 0.0);
  int lh = -1, lw = -1, info = 0;
  double qh = 0, qw = 0;
  dsytrd_sb2st_("N", "N", "L", &n, &kd, ab.data(), &ld, d.data(), e.data(), &qh, &lh, &qw, &lw,
                &info, 1, 1, 1);
  lh = std::max(1, static_cast<int>(qh)), lw = std::max(1, static_cast<int>(qw));
  std::vector<double> hous(lh), work(lw);
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_seconds();
  dsytrd_sb2st_("N", "N", "L", &n, &kd, ab.data(), &ld, d.data(), e.data(), hous.data(), &lh,
                work.data(), &lw, &info, 1, 1, 1);
  const double cpu = thread_cpu_seconds() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string name = lapack_file(dir, n_, b_);
  FILE* f = std::fopen((name + ".tmp").c_str(), "wb");
  if (!f) return;
  const double head[3] = {cpu, wall, static_cast<double>(info)};
  std::fwrite(head, sizeof(double), 3, f);
  std::fwrite(d.data(), sizeof(double), n, f);
  std::fwrite(e.data(), sizeof(double), n, f);
  std::fclose(f);
  std::rename((name + ".tmp").c_str(), name.c_str());
  std::printf("dsytrd_sb2st n = %ld, b = %ld: %.3f s thread CPU, %.3f s wall, INFO = %d\n", n_, b_,
              cpu, wall, info);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{8192, 16384, 32768}, bs{16, 32, 64};
  std::string dir = "/tmp/bc_lapack";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--n")
      ns = parse_list(argv[i + 1]);
    else if (a == "--b")
      bs = parse_list(argv[i + 1]);
    else if (a == "--dir")
      dir = argv[i + 1];
  }
  std::printf("dsytrd_sb2st: %zu cases, one thread each, on %u cores; OPENBLAS_NUM_THREADS=%s\n",
              ns.size() * bs.size(), std::thread::hardware_concurrency(),
              std::getenv("OPENBLAS_NUM_THREADS") ? std::getenv("OPENBLAS_NUM_THREADS") : "unset");
  std::fflush(stdout);
  std::filesystem::create_directories(dir);
  std::vector<std::thread> pool;
  for (long n : ns)
    for (long b : bs) pool.emplace_back(run_lapack, n, b, dir);
  for (auto& t : pool) t.join();
  return 0;
}
