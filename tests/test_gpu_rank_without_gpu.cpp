// A caller rank that sees no GPU next to ranks that do (issue 24): the route is agreed over the
// grid (interface/agreement.hpp: the GPU engine only where every rank sees a device), so the ranks
// never diverge. Launched as an MPMD job with one rank's devices hidden (tests/CMakeLists.txt).
// PIPEVD_BACKEND=auto: every rank forwards to ScaLAPACK, INFO 0 everywhere, and the eigenpairs
// are right (residual and orthogonality under ScaLAPACK's threshold, eigenvalues equal LAPACK's).
// PIPEVD_BACKEND=gpu: the GPU engine is absent for the grid, so every rank returns INFO = -1001
// (README, "INFO codes") with W and Z untouched, and none computes anything.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "include/pipevd.h"
#include "interface/info_codes.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

// Whether every rank of MPI_COMM_WORLD holds the same string (collective).
bool same_text_on_every_rank(const char* text) {
  char mine[64] = {0};
  std::strncpy(mine, text, sizeof mine - 1);
  std::vector<char> all(sizeof mine * static_cast<size_t>(world_size()));
  MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < world_size(); ++r)
    if (std::strncmp(all.data() + r * sizeof mine, mine, sizeof mine) != 0) return false;
  return true;
}

TEST(RankWithoutGpu, OneRouteOneInfoOnEveryRank) {
  const char* backend_env = std::getenv("PIPEVD_BACKEND");
  const std::string backend = backend_env ? backend_env : "auto";
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int n = 200, nb = 16;
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, 1};
  DistributedMatrix a(grid, layout), z(grid, layout);
  const auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 53); };
  a.fill(entry);
  const double untouched = -7.0;
  z.fill([&](long, long) { return untouched; });
  std::vector<double> w(n, untouched);

  const int info =
      call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
  EXPECT_TRUE(same_on_every_rank(info)) << "INFO " << info << " on rank " << world_rank();
  EXPECT_TRUE(same_text_on_every_rank(pipevd_last_path()))
      << "path '" << pipevd_last_path() << "' on rank " << world_rank();

  if (backend == "gpu") {
    EXPECT_EQ(info, kInfoConfiguration);
    EXPECT_STREQ(pipevd_last_path(), "");
    EXPECT_TRUE(std::all_of(w.begin(), w.end(), [&](double v) { return v == untouched; }));
    const std::vector<double> zf = z.gather(grid);
    EXPECT_TRUE(std::all_of(zf.begin(), zf.end(), [&](double v) { return v == untouched; }));
    return;
  }
  ASSERT_EQ(backend, "auto");
  ASSERT_EQ(info, 0);
  EXPECT_STREQ(pipevd_last_path(), "scalapack");
  std::vector<double> full(static_cast<size_t>(n) * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) full[i + j * n] = entry(i, j);
  const std::vector<double> zf = z.gather(grid);
  EXPECT_LT(residual(n, full, zf, w), kScalapackThreshold);
  EXPECT_LT(orthogonality(n, zf), kScalapackThreshold);
  EXPECT_LE(eigenvalue_difference(w, lapack_eigenvalues(n, full)), 1e-12);
}

}  // namespace
}  // namespace pipevd::test
