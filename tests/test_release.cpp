// Host memory kept between calls (redistribute/kept_buffer, the node window of
// redistribute/node_window): repeated calls with n growing and shrinking keep some,
// pipevd_release() hands all of it back (kept bytes and windows zero on every rank), and a call
// afterwards works; with PIPEVD_KEEP_MEMORY=0 nothing is kept after any call.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "include/pipevd.h"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_window.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"
#include "tests/support/random_pdsyevd_call.hpp"

namespace pipevd::test {
namespace {

// One call at order n (A's copy above the kept buffers' 8 MiB threshold from n = 1100 on one
// rank); returns INFO.
int solve(int n) { return call_pdsyevd_on_random('N', n, 9); }

long most_kept_bytes() {
  long mine = static_cast<long>(kept_bytes()), most = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

long most_windows() {
  long mine = node_windows_held(), most = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

TEST(Release, KeptMemoryGoesBackOnRequest) {
  const char* keep = std::getenv("PIPEVD_KEEP_MEMORY");
  const bool kept = !(keep && std::strcmp(keep, "0") == 0);
  // Several callers on one node redistribute through a window; a single caller needs none.
  const bool window = world_size() > 1;
  ASSERT_EQ(most_windows(), 0);
  for (int n : {1600, 1200, 1800}) {
    ASSERT_EQ(solve(n), 0) << n;
    if (kept) {
      EXPECT_GT(most_kept_bytes(), 0) << "nothing kept after n = " << n;
      EXPECT_EQ(most_windows(), window ? 1 : 0) << "n = " << n;
    } else {
      EXPECT_EQ(most_kept_bytes(), 0) << "PIPEVD_KEEP_MEMORY=0 kept memory after n = " << n;
      EXPECT_EQ(most_windows(), 0) << "PIPEVD_KEEP_MEMORY=0 kept the window after n = " << n;
    }
  }
  pipevd_release();
  EXPECT_EQ(most_kept_bytes(), 0);
  EXPECT_EQ(most_windows(), 0);
  ASSERT_EQ(solve(1300), 0);
  pipevd_release();
  EXPECT_EQ(most_kept_bytes(), 0);
  EXPECT_EQ(most_windows(), 0);
}

}  // namespace
}  // namespace pipevd::test
