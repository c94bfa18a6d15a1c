#include "redistribute/parallel_pieces.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace pipevd {

int redistribution_threads(int requested) {
  if (requested > 0) return requested;
  int n = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = std::max(1, CPU_COUNT(&set));
  if (const char* cap = std::getenv("PIPEVD_THREADS")) {
    const int c = std::atoi(cap);
    if (c > 0) n = std::min(n, c);
  }
  return n;
}

}  // namespace pipevd
