// pipevd's own INFO values (README, "INFO codes") through pdsyevd_ as a relinked code calls it:
// every rank returns the INFO that PIPEVD_TEST_EXPECT_INFO names (ctest sets the environment that
// leads there: a bad PIPEVD_* value, an explicit engine that does not fit or is absent), nobody
// aborts or hangs, A and W are untouched, and a second call answers the same.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

int expected_info() {
  const char* s = std::getenv("PIPEVD_TEST_EXPECT_INFO");
  return s ? std::atoi(s) : 0;
}

TEST(InfoCodes, EveryRankReturnsTheSameInfoAndATouchesNothing) {
  const int want = expected_info();
  ASSERT_NE(want, 0) << "set PIPEVD_TEST_EXPECT_INFO";
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int n = 37, nb = 8;
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, 0};
  DistributedMatrix a(grid, layout), z(grid, layout);
  auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 5); };
  a.fill(entry);
  const std::vector<double> a_before = a.local;
  for (int call = 0; call < 2; ++call) {
    std::vector<double> w(n, -3.5);
    const int info =
        call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
    EXPECT_EQ(info, want) << "call " << call;
    EXPECT_TRUE(same_on_every_rank(info)) << "ranks returned different INFO";
    EXPECT_EQ(a.local, a_before) << "A changed";
    for (double v : w) ASSERT_EQ(v, -3.5) << "W changed";
  }
}

}  // namespace
}  // namespace pipevd::test
