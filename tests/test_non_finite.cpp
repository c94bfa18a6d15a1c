// A NaN or an infinity at one entry of the referenced triangle of sub(A), in either triangle (UPLO
// L or U), on and off the diagonal: INFO = N + 1 on every rank, A, W and Z untouched, whatever the
// route (ctest runs it under host, scalapack and auto). The same value in the triangle UPLO does
// not name, or outside the submatrix, is ignored: INFO = 0 and the eigenvalues of the referenced
// triangle's matrix. The same cases on the whole matrix with LLD = N (no offset): on one rank and
// the one-stage path (PIPEVD_ENGINE_PATH=one_stage on the host engine, the GPU engine's table)
// the engine's upload scans A instead of dispatch (interface/engine_route.hpp's
// entry_scan_at_upload), and the call must end alike.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "include/pipevd.h"
#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd::test {
namespace {

constexpr int kN = 37, kNb = 8;
constexpr int kOff = 8;  // sub(A) = A(9:45, 9:45) of a 53 x 53 matrix, or (0) the whole A
constexpr double kSentinel = -3.25;

struct Case {
  char uplo;
  long i, j;  // entry of sub(A) (0-based; may lie outside it) that holds `value`
  double value;
  bool referenced;  // inside sub(A) and in the triangle UPLO names
};

std::string name(const Case& c) {
  return std::string("uplo=") + c.uplo + " (" + std::to_string(c.i) + "," + std::to_string(c.j) +
         ")=" + std::to_string(c.value);
}

void run_case(const Case& c, int off = kOff) {
  SCOPED_TRACE(name(c) + " offset=" + std::to_string(off));
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const int big = kN + 2 * off;
  const BlockCyclicLayout layout{big, big, kNb, kNb, 0, 0, 0};
  DistributedMatrix a(grid, layout), z(grid, layout);
  auto entry = [&](long gi, long gj) {
    const long i = gi - off, j = gj - off;
    return i == c.i && j == c.j ? c.value : random_symmetric_entry(i, j, 3);
  };
  a.fill(entry);
  z.fill([](long, long) { return kSentinel; });
  const std::vector<double> a_before = a.local, z_before = z.local;
  std::vector<double> w(kN, kSentinel);
  const int info = call_pdsyevd('V', c.uplo, kN, a.data(), off + 1, off + 1, a.desc, w.data(),
                                z.data(), off + 1, off + 1, z.desc);
  EXPECT_TRUE(same_on_every_rank(info)) << "ranks returned different INFO";
  if (c.referenced) {
    EXPECT_EQ(info, kN + 1);
    EXPECT_TRUE(bitwise_equal(a.local, a_before)) << "A changed";
    EXPECT_TRUE(bitwise_equal(z.local, z_before)) << "Z changed";
    for (double v : w) EXPECT_EQ(v, kSentinel) << "W changed";
    EXPECT_STREQ(pipevd_last_path(), "") << "a path computed";
    return;
  }
  ASSERT_EQ(info, 0);
  std::vector<double> full(static_cast<std::size_t>(kN) * kN);
  for (long j = 0; j < kN; ++j)
    for (long i = 0; i < kN; ++i) full[i + j * kN] = random_symmetric_entry(i, j, 3);
  EXPECT_LE(eigenvalue_difference(w, lapack_eigenvalues(kN, full)), 1e-12);
}

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(NonFinite, InTheReferencedTriangleIsRefused) {
  for (const Case& c :
       {Case{'L', 30, 5, kNan, true}, Case{'L', 12, 12, kInf, true}, Case{'U', 5, 30, -kInf, true},
        Case{'U', 36, 36, kNan, true}, Case{'L', 36, 0, kInf, true}, Case{'U', 0, 36, kNan, true}})
    run_case(c);
}

TEST(NonFinite, ElsewhereIsIgnored) {
  for (const Case& c : {Case{'L', 5, 30, kNan, false}, Case{'U', 30, 5, kInf, false},
                        Case{'L', -3, 4, kNan, false}, Case{'U', 40, 40, kInf, false}})
    run_case(c);
}

// The whole matrix at (1, 1), LLD = N: on one rank the direct path.
TEST(NonFinite, WholeMatrixInTheReferencedTriangleIsRefused) {
  for (const Case& c :
       {Case{'L', 30, 5, kNan, true}, Case{'L', 12, 12, kInf, true}, Case{'U', 5, 30, -kInf, true},
        Case{'U', 36, 36, kNan, true}, Case{'L', 36, 0, kInf, true}, Case{'U', 0, 36, kNan, true},
        Case{'L', 0, 0, kNan, true}, Case{'U', 0, 0, -kInf, true}})
    run_case(c, 0);
}

TEST(NonFinite, WholeMatrixElsewhereIsIgnored) {
  for (const Case& c : {Case{'L', 5, 30, kNan, false}, Case{'U', 30, 5, kInf, false},
                        Case{'L', 0, 36, kNan, false}, Case{'U', 36, 0, -kInf, false}})
    run_case(c, 0);
}

}  // namespace
}  // namespace pipevd::test
