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

std::vector<Run> clip_runs(const std::vector<Run>& runs, long lo, long hi) {
  std::vector<Run> out;
  for (const Run& r : runs) {
    const Run c = clip(r, lo, hi);
    if (c.len > 0) out.push_back(c);
  }
  return out;
}

std::vector<Run> local_stretch(const std::vector<Run>& runs, long first, long len, long at) {
  std::vector<Run> out;
  for (const Run& r : runs) {
    const long lo = std::max(r.local, first), hi = std::min(r.local + r.len, first + len);
    if (lo < hi) out.push_back(Run{r.global + (lo - r.local), at + (lo - first), hi - lo});
  }
  return out;
}

std::vector<std::vector<Run>> cut_runs(const std::vector<Run>& runs, long parts) {
  long total = 0;
  for (const Run& r : runs) total += r.len;
  if (total == 0) return {};
  parts = std::max(1L, std::min(parts, total));
  std::vector<std::vector<Run>> out(static_cast<size_t>(parts));
  long done = 0;  // elements of the runs before r
  for (const Run& r : runs) {
    for (long t = 0; t < r.len;) {
      // The part that element done + t falls in, and where that part ends.
      const long p = (done + t) * parts / total;
      const long end = std::min(r.len, ((p + 1) * total + parts - 1) / parts - done);
      out[static_cast<size_t>(p)].push_back(Run{r.global + t, r.local + t, end - t});
      t = end;
    }
    done += r.len;
  }
  return out;
}

}  // namespace pipevd
