// The process's real memory, not pipevd's counters: after calls with n growing and shrinking,
// pipevd_release() hands back what the calls kept (the kept buffers' pages, the node window's
// /dev/shm pages), down to the level after a first call and a release; with
// PIPEVD_KEEP_MEMORY=0 no call keeps any.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "include/pipevd.h"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"
#include "tests/support/process_memory.hpp"
#include "tests/support/random_pdsyevd_call.hpp"

namespace pipevd::test {
namespace {

constexpr long kMiB = 1L << 20;
constexpr int kLargest = 2000;  // A, Z and the window: 32 MB each

int solve(int n) { return call_pdsyevd_on_random('V', n, 5); }

void print(const char* what, const ProcessMemory& m) {
  std::printf("rank %d %-8s heap %6.1f MiB, anon %6.1f MiB, shmem %6.1f MiB, /dev/shm %6.1f MiB\n",
              world_rank(), what, double(m.heap_in_use) / kMiB, double(m.rss_anon) / kMiB,
              double(m.rss_shmem) / kMiB, double(m.dev_shm) / kMiB);
  std::fflush(stdout);
}

// Private memory (heap in use, resident anonymous pages) may differ from the baseline by what
// other libraries grow and keep on their own: MPI's free lists, BLAS's per-thread buffers, thread
// stacks, malloc's rounding; a few MiB. Shared memory by MPI's own segments touched further.
// What pipevd keeps at n = kLargest is tens of MiB: A and Z's kept buffers on one rank, the
// window's n^2 doubles mapped by every process of the node.
constexpr long kPrivateSlack = 8 * kMiB;
constexpr long kSharedSlack = 2 * kMiB;

void expect_near(const ProcessMemory& m, const ProcessMemory& base, const char* when) {
  EXPECT_LE(m.heap_in_use - base.heap_in_use, kPrivateSlack) << when;
  EXPECT_LE(m.rss_anon - base.rss_anon, kPrivateSlack) << when;
  EXPECT_LE(m.rss_shmem - base.rss_shmem, kSharedSlack) << when;
  EXPECT_LE(m.dev_shm - base.dev_shm, kSharedSlack) << when;
}

TEST(ReleaseMemory, RealMemoryReturnsToTheFirstCallsLevel) {
  const char* keep = std::getenv("PIPEVD_KEEP_MEMORY");
  const bool kept = !(keep && std::strcmp(keep, "0") == 0);
  // The first call, at the largest n, grows what lives as long as the process whatever pipevd
  // keeps (communicator caches, BLACS, MPI's buffers, BLAS's buffers at their largest blocking):
  // the baseline has it.
  ASSERT_EQ(solve(kLargest), 0);
  pipevd_release();
  const ProcessMemory base = trimmed_process_memory();
  print("baseline", base);
  long most_kept = 0;  // private and shared, over the calls
  for (int n : {300, 1200, 600, kLargest, 200}) {
    ASSERT_EQ(solve(n), 0) << n;
    const ProcessMemory m = trimmed_process_memory();
    print(("n=" + std::to_string(n)).c_str(), m);
    most_kept = std::max(most_kept, m.rss_anon - base.rss_anon + m.rss_shmem - base.rss_shmem);
    if (!kept) expect_near(m, base, "PIPEVD_KEEP_MEMORY=0 kept memory after a call");
  }
  // Else the check below would show nothing: the calls must have kept far more than the slack.
  if (kept) EXPECT_GT(most_kept, 3 * kPrivateSlack);
  pipevd_release();
  const ProcessMemory after = trimmed_process_memory();
  print("released", after);
  expect_near(after, base, "after pipevd_release()");
}

}  // namespace
}  // namespace pipevd::test
