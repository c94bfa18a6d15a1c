// pdsyevd_ called as a relinked application calls it (libpipevd ahead of ScaLAPACK): the call
// reaches pipevd, and the answers equal ScaLAPACK's own on the same input.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

TEST(Interposition, PdsyevdResolvesToPipevd) {
  Dl_info where{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&pdsyevd_), &where), 0);
  EXPECT_NE(std::strstr(where.dli_fname, "libpipevd"), nullptr) << where.dli_fname;
}

struct Case {
  int n, nb;
  char uplo;
  char shape;  // 's': squarest grid, 'r': 1 x P, 'c': P x 1 (column-major BLACS order)
};

class InterpositionSquare : public testing::TestWithParam<Case> {};

TEST_P(InterpositionSquare, EqualsScalapack) {
  const Case c = GetParam();
  const GridShape shape = grid_shape(c.shape);
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const BlockCyclicLayout layout{c.n, c.n, c.nb, c.nb, 0, 0, 3};
  DistributedMatrix a(grid, layout), a_ref(grid, layout), z(grid, layout), z_ref(grid, layout);
  auto entry = [](long i, long j) { return random_symmetric_entry(i, j, 7); };
  a.fill(entry);
  a_ref.fill(entry);
  std::vector<double> w(c.n), w_ref(c.n);
  const int info =
      call_pdsyevd('V', c.uplo, c.n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
  const int info_ref = call_scalapack_pdsyevd('V', c.uplo, c.n, a_ref.data(), 1, 1, a_ref.desc,
                                              w_ref.data(), z_ref.data(), 1, 1, z_ref.desc);
  ASSERT_EQ(info, 0);
  ASSERT_EQ(info_ref, 0);
  EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
  std::vector<double> full(static_cast<size_t>(c.n) * c.n);
  for (long j = 0; j < c.n; ++j)
    for (long i = 0; i < c.n; ++i) full[i + j * c.n] = entry(i, j);
  const std::vector<double> zf = z.gather(grid);
  EXPECT_LT(residual(c.n, full, zf, w), kScalapackThreshold);
  EXPECT_LT(orthogonality(c.n, zf), kScalapackThreshold);
}

INSTANTIATE_TEST_SUITE_P(Sizes, InterpositionSquare,
                         testing::Values(Case{1, 4, 'L', 's'}, Case{2, 1, 'U', 's'},
                                         Case{37, 8, 'L', 's'}, Case{37, 8, 'U', 'r'},
                                         Case{100, 7, 'L', 'c'}, Case{131, 16, 'U', 's'},
                                         Case{97, 3, 'L', 'r'}, Case{64, 5, 'U', 'c'}));

// ScaLAPACK 2.2's PDSYEVD corrupts memory on submatrices; pipevd's forwarding solves a copy.
// Expected: Z's submatrix equals ScaLAPACK's Z on the same matrix copied to (1,1), and nothing
// outside the submatrix changes.
TEST(InterpositionSubmatrix, OffsetsGoThroughACopy) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int n = 100, nb = 8, off = 8, big = n + 2 * off;
  const BlockCyclicLayout outer{big, big, nb, nb, 0, 0, 0};
  DistributedMatrix a(grid, outer), z(grid, outer);
  auto entry = [&](long i, long j) { return random_symmetric_entry(i - off, j - off, 11); };
  a.fill(entry);
  const double sentinel = -12345.5;
  z.fill([&](long, long) { return sentinel; });
  std::vector<double> w(n), w_ref(n);
  ASSERT_EQ(call_pdsyevd('V', 'L', n, a.data(), off + 1, off + 1, a.desc, w.data(), z.data(),
                         off + 1, off + 1, z.desc),
            0);

  const BlockCyclicLayout inner{n, n, nb, nb, 0, 0, 0};
  DistributedMatrix a1(grid, inner), z1(grid, inner);
  a1.fill([&](long i, long j) { return entry(i + off, j + off); });
  ASSERT_EQ(call_scalapack_pdsyevd('V', 'L', n, a1.data(), 1, 1, a1.desc, w_ref.data(), z1.data(),
                                   1, 1, z1.desc),
            0);
  EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
  const std::vector<double> zf = z.gather(grid), z1f = z1.gather(grid);
  double zdiff = 0;
  long touched_outside = 0;
  for (long j = 0; j < big; ++j)
    for (long i = 0; i < big; ++i) {
      const bool inside = i >= off && i < off + n && j >= off && j < off + n;
      const double v = zf[i + j * big];
      if (!inside)
        touched_outside += v != sentinel;
      else
        zdiff = std::max(zdiff, std::fabs(v - z1f[(i - off) + (j - off) * n]));
    }
  EXPECT_EQ(touched_outside, 0);
  EXPECT_LE(zdiff, 1e-10);  // the same routine on the same data: equal up to rounding
}

}  // namespace
}  // namespace pipevd::test
