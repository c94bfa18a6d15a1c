// The CPU tridiagonal stage of the engine alone (LAPACK dstedc 'I' for JOBZ = 'V', dsterf for 'N')
// on a random tridiagonal T, in the main thread and in a std::thread as the engine runs it, with
// the BLAS thread count the process has. It answers how much of an engine run is this stage.
//   OPENBLAS_NUM_THREADS=16 dc_bench 8192 16384
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

extern "C" {
void dstedc_(const char*, const int*, double*, double*, double*, const int*, double*, const int*,
             int*, const int*, int*, size_t);
void dsterf_(const int*, double*, double*, int*);
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// dstedc 'I' on (d, e); returns seconds and INFO.
double time_dstedc(int n, std::vector<double> d, std::vector<double> e, int* info) {
  std::vector<double> z(static_cast<size_t>(n) * n);
  int lwork = -1, liwork = -1, iwq = 0;
  double wq = 0;
  dstedc_("I", &n, d.data(), e.data(), z.data(), &n, &wq, &lwork, &iwq, &liwork, info, 1);
  lwork = static_cast<int>(wq);
  liwork = iwq;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  const auto t0 = std::chrono::steady_clock::now();
  dstedc_("I", &n, d.data(), e.data(), z.data(), &n, work.data(), &lwork, iwork.data(), &liwork,
          info, 1);
  return seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  using get_threads_fn = int (*)();
  auto get_threads =
      reinterpret_cast<get_threads_fn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  std::printf("BLAS threads: %d (openblas_get_num_threads %s), hardware threads %u\n",
              get_threads ? get_threads() : -1, get_threads ? "found" : "absent",
              std::thread::hardware_concurrency());
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int a = 1; a < argc; ++a) {
    const int n = std::atoi(argv[a]);
    for (const char* kind : {"random", "toeplitz"}) {
      // random: entries uniform in [-1, 1) (D&C deflates much); toeplitz: d = 2, e = -1 (little
      // deflation, the expensive case).
      std::vector<double> d(n), e(std::max(1, n - 1));
      const bool random = kind[0] == 'r';
      for (double& x : d) x = random ? u(rng) : 2.0;
      for (double& x : e) x = random ? u(rng) : -1.0;
      int info = 0;
      const double main_s = time_dstedc(n, d, e, &info);
      int info_t = 0;
      double thread_s = 0;
      std::thread t([&] { thread_s = time_dstedc(n, d, e, &info_t); });
      t.join();
      std::vector<double> d2 = d, e2 = e;
      int info_f = 0;
      const auto t0 = std::chrono::steady_clock::now();
      dsterf_(&n, d2.data(), e2.data(), &info_f);
      const double sterf_s = seconds_since(t0);
      std::printf(
          "n=%d %s dstedc_I main=%.3f s thread=%.3f s (info %d %d) dsterf=%.3f s (info %d)\n", n,
          kind, main_s, thread_s, info, info_t, sterf_s, info_f);
      std::fflush(stdout);
    }
  }
  return 0;
}
