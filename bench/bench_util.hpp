// What the single-GPU benchmarks share: their main (MPI around run, errors reported), wall-clock
// seconds, "a,b,c" size lists, and the splitmix64 finalizer that turns a counter into a value
// uniform in (-1, 1) (host and device, so a matrix generated on the GPU equals one generated on
// the host from the same counters).
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define PIPEVD_BENCH_HD __host__ __device__
#else
#define PIPEVD_BENCH_HD
#endif

namespace pipevd::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "1024,2048" -> {1024, 2048}.
inline std::vector<long> parse_list(const std::string& s) {
  std::vector<long> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atol(item.c_str()));
  return out;
}

// The body of a benchmark's main: run(argc, argv) between MPI_Init_thread (MPI_THREAD_MULTIPLE)
// and MPI_Finalize; an exception is reported as "name: what" and gives 1.
inline int bench_main(int argc, char** argv, const char* name, int (*run)(int, char**)) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rc = 1;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
  }
  MPI_Finalize();
  return rc;
}

// splitmix64's mixing of z, mapped to (-1, 1) from its top 53 bits.
PIPEVD_BENCH_HD inline double splitmix_uniform(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
}

}  // namespace pipevd::bench
