// Descriptors whose first block lives on process (RSRC, CSRC) != (0, 0), through pdsyevd_ as a
// relinked application calls it. ScaLAPACK 2.2's PDSYEVD returns wrong eigenpairs when CSRC != 0,
// so pipevd's forwarding solves a copy that starts on process (0, 0); the answers must be those of
// the matrix (LAPACK's eigenvalues, residual and orthogonality below ScaLAPACK's threshold).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"

extern "C" void pdsyevd_(const char*, const char*, const int*, double*, const int*, const int*,
                         const int*, double*, double*, const int*, const int*, const int*, double*,
                         const int*, int*, const int*, int*, size_t, size_t);

namespace pipevd::test {
namespace {

struct SourceCase {
  int rows, n, nb, rsrc, csrc;  // rows of the grid: 0 for all ranks; the columns take the rest
  char uplo;
};

class SourceProcess : public testing::TestWithParam<SourceCase> {};

TEST_P(SourceProcess, AnswersAreThoseOfTheMatrix) {
  const SourceCase c = GetParam();
  const int size = world_size();
  const int nprow = c.rows == 0 ? size : (size % c.rows == 0 ? c.rows : 1), npcol = size / nprow;
  BlacsGrid grid(nprow, npcol);
  // Sources past the grid's edge are clamped to it (on one rank both are 0).
  const BlockCyclicLayout layout{
      c.n, c.n, c.nb, c.nb, std::min(c.rsrc, nprow - 1), std::min(c.csrc, npcol - 1), 2};
  DistributedMatrix a(grid, layout), z(grid, layout);
  auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 5); };
  a.fill(entry);
  const int one = 1;
  int info = 0, lwork = -1, liwork = -1, iwq = 0;
  double wq = 0;
  std::vector<double> w(c.n);
  const char jobz = 'V';
  pdsyevd_(&jobz, &c.uplo, &c.n, a.data(), &one, &one, a.desc, w.data(), z.data(), &one, &one,
           z.desc, &wq, &lwork, &iwq, &liwork, &info, 1, 1);
  ASSERT_EQ(info, 0);
  lwork = static_cast<int>(wq);
  liwork = iwq;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  pdsyevd_(&jobz, &c.uplo, &c.n, a.data(), &one, &one, a.desc, w.data(), z.data(), &one, &one,
           z.desc, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  ASSERT_EQ(info, 0);

  std::vector<double> full(static_cast<size_t>(c.n) * c.n);
  for (long j = 0; j < c.n; ++j)
    for (long i = 0; i < c.n; ++i) full[i + j * c.n] = entry(i, j);
  EXPECT_LE(eigenvalue_difference(w, lapack_eigenvalues(c.n, full)), 1e-12);
  const std::vector<double> zf = z.gather(grid);
  EXPECT_LT(residual(c.n, full, zf, w), kScalapackThreshold);
  EXPECT_LT(orthogonality(c.n, zf), kScalapackThreshold);
}

INSTANTIATE_TEST_SUITE_P(Grids, SourceProcess,
                         testing::Values(SourceCase{1, 45, 4, 0, 1, 'L'},  // 1 x P, CSRC = 1
                                         SourceCase{1, 45, 4, 0, 3, 'U'},  // 1 x P, CSRC = P - 1
                                         SourceCase{0, 45, 4, 3, 0, 'L'},  // P x 1, RSRC = P - 1
                                         SourceCase{2, 64, 8, 1, 1,
                                                    'U'},  // 2 x P/2 where P is even
                                         SourceCase{2, 37, 5, 1, 1, 'L'}));

}  // namespace
}  // namespace pipevd::test
