// Every bad argument gets the INFO ScaLAPACK's PDSYEVD gives; workspace queries give its answers.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "include/pipevd.h"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/scalapack_reference.hpp"

namespace pipevd::test {
namespace {

struct Args {
  char jobz = 'V', uplo = 'L';
  int n = 37, ia = 1, ja = 1, iz = 1, jz = 1, lwork = 0, liwork = 0;
  int desca[9] = {}, descz[9] = {};
};

struct Outcome {
  int info;
  double work0;
  int iwork0;
};

// Runs one call through fn with private copies of every array, WORK/IWORK sized generously so a
// bad LWORK is only a number, never an overflow.
Outcome run(const std::function<void(Args&, double*, double*, double*, double*, int*, int*)>& fn,
            Args args) {
  std::vector<double> a(200 * 200, 1.0), z(200 * 200, 0.0), w(400), work(400000, -1.0);
  std::vector<int> iwork(40000, -1);
  int info = 12345;
  fn(args, a.data(), w.data(), z.data(), work.data(), iwork.data(), &info);
  return {info, work[0], iwork[0]};
}

Outcome via_pipevd(Args args) {
  return run(
      [](Args& g, double* a, double* w, double* z, double* work, int* iwork, int* info) {
        pipevd_pdsyevd(&g.jobz, &g.uplo, &g.n, a, &g.ia, &g.ja, g.desca, w, z, &g.iz, &g.jz,
                       g.descz, work, &g.lwork, iwork, &g.liwork, info);
      },
      args);
}

Outcome via_scalapack(Args args) {
  return run(
      [](Args& g, double* a, double* w, double* z, double* work, int* iwork, int* info) {
        scalapack_pdsyevd()(&g.jobz, &g.uplo, &g.n, a, &g.ia, &g.ja, g.desca, w, z, &g.iz, &g.jz,
                            g.descz, work, &g.lwork, iwork, &g.liwork, info, 1, 1);
      },
      args);
}

TEST(ArgumentChecks, WorkspaceQueryEqualsScalapack) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  for (int n : {1, 5, 37, 100, 129})
    for (int nb : {1, 4, 8, 32}) {
      const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, 0};
      DistributedMatrix m(grid, layout);
      Args g;
      g.n = n;
      g.lwork = -1;
      g.liwork = 1;
      std::copy(m.desc, m.desc + 9, g.desca);
      std::copy(m.desc, m.desc + 9, g.descz);
      const Outcome ours = via_pipevd(g), theirs = via_scalapack(g);
      EXPECT_EQ(ours.info, theirs.info) << "n=" << n << " nb=" << nb;
      EXPECT_EQ(ours.work0, theirs.work0) << "n=" << n << " nb=" << nb;
      EXPECT_EQ(ours.iwork0, theirs.iwork0) << "n=" << n << " nb=" << nb;
    }
}

}  // namespace
}  // namespace pipevd::test
