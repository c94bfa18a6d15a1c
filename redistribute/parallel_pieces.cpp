#include "redistribute/parallel_pieces.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace pipevd {

int redistribution_threads(int requested) {
  if (requested > 0) return requested;
  int n = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = std::max(1, CPU_COUNT(&set));
  // Not bound (the mask is the whole machine, e.g. mpirun --bind-to none): a share of the CPUs per
  // rank on this node, as the launcher tells it (Open MPI, MPICH/Hydra), not all of them each.
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && n >= online)
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
      if (const char* local = std::getenv(name)) {
        const int ranks = std::atoi(local);
        if (ranks > 1) n = std::max(1, n / ranks);
        break;
      }
  if (const char* cap = std::getenv("PIPEVD_THREADS")) {
    const int c = std::atoi(cap);
    if (c > 0) n = std::min(n, c);
  }
  return n;
}

}  // namespace pipevd
