// EngineBackend::copy_row_runs on the host backend (the default: one copy_matrix a run), real and
// complex: each run's rows of every column land at its destination rows, nothing else of the
// destination changes; no runs, a run of no rows and one-row runs among them.
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "host/host_backend.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

template <class T>
std::vector<T> numbered(long count, double base) {
  std::vector<T> v(count);
  for (long i = 0; i < count; ++i) v[i] = T(base + i);
  if constexpr (Scalar<T>::words == 2)
    for (long i = 0; i < count; ++i) v[i] += T(0, -0.5 * i);
  return v;
}

// dst with each run's rows of columns 0:cols copied from src, element by element.
template <class T>
std::vector<T> expected(long cols, const std::vector<RowRun>& runs, const std::vector<T>& src,
                        long lds, std::vector<T> dst, long ldd) {
  for (const RowRun& r : runs)
    for (long j = 0; j < cols; ++j)
      for (long i = 0; i < r.rows; ++i) dst[r.dst_row + i + j * ldd] = src[r.src_row + i + j * lds];
  return dst;
}

template <class T>
class CopyRowRuns : public testing::Test {};

using Scalars = testing::Types<double, Complex>;
TYPED_TEST_SUITE(CopyRowRuns, Scalars);

TYPED_TEST(CopyRowRuns, LoopsCopyMatrix) {
  using T = TypeParam;
  HostBackend be;
  const long cols = 3, lds = 40, ldd = 50;
  const std::vector<T> src = numbered<T>(lds * cols, 1.0), dst0 = numbered<T>(ldd * cols, -1000.0);
  const std::vector<std::vector<RowRun>> cases = {
      {},                                                  // nothing to copy
      {{5, 7, 0}},                                         // a run of no rows
      {{0, 0, 1}},                                         // one row
      {{3, 10, 1}, {20, 2, 1}, {39, 49, 1}},               // one-row runs, the last rows of both
      {{0, 30, 12}, {12, 0, 1}, {13, 13, 0}, {25, 1, 9}},  // out of order, a gap between
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    std::vector<T> dst = dst0;
    be.copy_row_runs(cols, cases[c], src.data(), lds, dst.data(), ldd);
    EXPECT_TRUE(test::bitwise_equal(dst, expected(cols, cases[c], src, lds, dst0, ldd)));
  }
}

}  // namespace
}  // namespace pipevd
