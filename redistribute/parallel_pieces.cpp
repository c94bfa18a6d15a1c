#include "redistribute/parallel_pieces.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace pipevd {

int redistribution_threads(int requested, int ranks_on_node) {
  if (requested > 0) return requested;
  int n = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = std::max(1, CPU_COUNT(&set));
  // Not bound (the mask is the whole machine, e.g. mpirun --bind-to none): a share of the CPUs per
  // rank on this node, not all of them each.
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && n >= online && ranks_on_node > 1) n = std::max(1, n / ranks_on_node);
  return n;
}

}  // namespace pipevd
