// What the bulge-chasing benchmarks share: their size lists, the band matrices (the same seeds on
// the GPU and in LAPACK) and the files through which sb2st_bench hands dsytrd_sb2st's results to
// bc_bench.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace pipevd::bench {

// "1024,2048" -> {1024, 2048}: the --n and --b lists.
inline std::vector<long> parse_list(const char* s) {
  std::vector<long> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atol(item.c_str()));
  return out;
}

// Lower band storage, ldab = b + 1, entries uniform in [-1, 1].
inline std::vector<double> random_band(long n, long b, unsigned seed) {
  std::vector<double> ab(static_cast<size_t>(n * (b + 1)), 0.0);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i <= b && j + i < n; ++i) ab[i + j * (b + 1)] = u(gen);
  return ab;
}

inline unsigned band_seed(long n, long b) { return static_cast<unsigned>(n * 100 + b); }

// DIR/n_b.bin: seconds of thread CPU time, seconds of wall time, INFO (as doubles), d[n], e[n].
inline std::string lapack_file(const std::string& dir, long n, long b) {
  return dir + "/" + std::to_string(n) + "_" + std::to_string(b) + ".bin";
}

struct LapackResult {
  double cpu = 0, wall = 0;
  int info = 0;
  std::vector<double> d, e;
};

inline bool read_lapack(const std::string& dir, long n, long b, LapackResult& r) {
  FILE* f = std::fopen(lapack_file(dir, n, b).c_str(), "rb");
  if (!f) return false;
  double head[3];
  r.d.assign(n, 0.0), r.e.assign(n, 0.0);
  const bool ok = std::fread(head, sizeof(double), 3, f) == 3 &&
                  std::fread(r.d.data(), sizeof(double), n, f) == static_cast<size_t>(n) &&
                  std::fread(r.e.data(), sizeof(double), n, f) == static_cast<size_t>(n);
  std::fclose(f);
  r.cpu = head[0], r.wall = head[1], r.info = static_cast<int>(head[2]);
  return ok;
}

}  // namespace pipevd::bench
