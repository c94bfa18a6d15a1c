// The end-to-end check of the interposed pdsyevd_ on one full symmetric matrix: JOBZ = 'V'
// eigenvalues equal ScaLAPACK's PDSYEVD to 1e-12 (relative to the spectrum's norm), residual and
// orthogonality of the gathered Z under ScaLAPACK's threshold, and JOBZ = 'N' the same
// eigenvalues. Include only in tests linked with pipevd::pipevd (see interposed_pdsyevd.hpp).
#pragma once
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {

// `full` is the n x n matrix (column-major) on grid `shape_code` (see grid_shape) with square
// blocks nb; `scale` is the factor already applied to `full` (tiny/huge norms), divided out of
// the residual, whose measure would otherwise under/overflow. lld_extra: the descriptors' LLD
// beyond what is needed (0 on one rank: the engine reads the caller's array directly); nan_other:
// the triangle other than uplo holds NaN (never to be read).
inline void expect_pdsyevd_matches_scalapack(char shape_code, int n, int nb, char uplo,
                                             const std::vector<double>& full, double scale = 1.0,
                                             int lld_extra = 2, bool nan_other = false) {
  const GridShape shape = grid_shape(shape_code);
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, lld_extra};
  DistributedMatrix a(grid, layout), a_ref(grid, layout), z(grid, layout), z_ref(grid, layout);
  const bool lower = uplo == 'L' || uplo == 'l';
  auto entry = [&](long i, long j) {
    if (nan_other && (lower ? i < j : i > j)) return std::numeric_limits<double>::quiet_NaN();
    return full[i + j * static_cast<long>(n)];
  };
  a.fill(entry);
  a_ref.fill(entry);
  std::vector<double> w(n), w_ref(n), w_values(n);
  ASSERT_EQ(call_pdsyevd('V', uplo, n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc),
            0);
  ASSERT_EQ(call_scalapack_pdsyevd('V', uplo, n, a_ref.data(), 1, 1, a_ref.desc, w_ref.data(),
                                   z_ref.data(), 1, 1, z_ref.desc),
            0);
  EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
  const std::vector<double> zf = z.gather(grid);
  std::vector<double> unscaled = full, w_unscaled = w;
  for (double& v : unscaled) v /= scale;
  for (double& v : w_unscaled) v /= scale;
  EXPECT_LT(residual(n, unscaled, zf, w_unscaled), kScalapackThreshold);
  EXPECT_LT(orthogonality(n, zf), kScalapackThreshold);

  // JOBZ = 'N' (pipevd's extension on the engine): the same eigenvalues.
  a.fill(entry);
  ASSERT_EQ(
      call_pdsyevd('N', uplo, n, a.data(), 1, 1, a.desc, w_values.data(), z.data(), 1, 1, z.desc),
      0);
  EXPECT_LE(eigenvalue_difference(w_values, w_ref), 1e-12);
}

}  // namespace pipevd::test
