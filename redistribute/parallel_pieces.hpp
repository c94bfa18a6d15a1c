// Packing and unpacking on threads. A message to or from the engine is walked run by run (its
// order: outer loop over the source's column runs for direct segments, row runs for mirrored
// ones, column runs of the destination for engine -> block-cyclic), so a range of outer runs is a
// contiguous slice of the message: pieces of work that threads can copy independently once a
// counting pass has given each its offset.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#include "redistribute/redistribution_plan.hpp"

namespace pipevd {

// Threads for packing and unpacking: `requested` when > 0, else the CPUs in this process's
// affinity mask (its share of the node under mpirun binding), capped by PIPEVD_THREADS if set.
int redistribution_threads(int requested);

// f(i) for i in [0, count) on up to `threads` threads (this one included), dynamically shared.
template <class F>
void parallel_for(long count, int threads, F&& f) {
  if (threads <= 1 || count <= 1) {
    for (long i = 0; i < count; ++i) f(i);
    return;
  }
  std::atomic<long> next{0};
  auto work = [&] {
    for (long i = next++; i < count; i = next++) f(i);
  };
  std::vector<std::thread> pool;
  const long extra = std::min<long>(threads, count) - 1;
  for (long t = 0; t < extra; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

// A clock for worker threads (MPI_Wtime belongs to the thread that initialised MPI).
inline double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// [k0, k1) ranges that split `count` runs into at most `parts` nearly equal pieces (none empty).
inline std::vector<std::pair<size_t, size_t>> split_runs(size_t count, int parts) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t p = std::max<size_t>(1, std::min<size_t>(count, static_cast<size_t>(parts)));
  for (size_t k = 0; k < p; ++k) {
    const size_t k0 = count * k / p, k1 = count * (k + 1) / p;
    if (k1 > k0) out.emplace_back(k0, k1);
  }
  return out;
}

// The runs with only rows [k0, k1) (or columns) kept.
inline LocalRuns with_rows(const LocalRuns& r, size_t k0, size_t k1) {
  return {std::vector<Run>(r.rows.begin() + k0, r.rows.begin() + k1), r.cols};
}
inline LocalRuns with_cols(const LocalRuns& r, size_t k0, size_t k1) {
  return {r.rows, std::vector<Run>(r.cols.begin() + k0, r.cols.begin() + k1)};
}

}  // namespace pipevd
