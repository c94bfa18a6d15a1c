// The entry scan (interface/non_finite_check) against a plain loop over the referenced triangle of
// sub(A): the non-finite flag, and the max-norm bit for bit (PDLANSY's / PZLANHE's 'M': |a_ij|, a
// complex entry's modulus, a Hermitian diagonal's |real part|). Special values where a vectorised
// loop may lose them: the last entry of a column (the loop's tail), the first, -0.0, an infinity
// next to a NaN, NaN only in an imaginary part, subnormal and huge entries, complex entries whose
// parts are equal (their modulus sqrt(2) times either). Sizes around the loop's blocks, both
// triangles, a submatrix, on 1 and several threads and over every rank's grid.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "interface/non_finite_check.hpp"
#include "redistribute/engine_comm.hpp"
#include "tests/support/distributed_matrix.hpp"

namespace pipevd::test {
namespace {

using Complex = std::complex<double>;
template <class S>
using Entry = std::function<S(long, long)>;  // entry (i, j) of sub(A), 0-based

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kMinSub = std::numeric_limits<double>::denorm_min();

struct Expected {
  bool non_finite = false;
  double max_abs = 0;
};

double modulus(double v, bool) { return std::fabs(v); }
double modulus(Complex v, bool diagonal) { return diagonal ? std::fabs(v.real()) : std::abs(v); }
bool finite(double v) { return std::isfinite(v); }
bool finite(Complex v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }

// The plain loop: every entry of the triangle, once.
template <class S>
Expected expected(long n, char uplo, const Entry<S>& f) {
  Expected e;
  for (long j = 0; j < n; ++j)
    for (long i = uplo == 'L' ? j : 0; i < (uplo == 'L' ? n : j + 1); ++i) {
      const S v = f(i, j);
      e.non_finite = e.non_finite || !finite(v);
      e.max_abs = std::max(e.max_abs, modulus(v, i == j));
    }
  return e;
}

// sub(A) = A(off+1 : off+n, off+1 : off+n) of an (n + 2 off)-square matrix on `grid`, nb x nb
// blocks; entries outside sub(A) or its triangle are NaN, which the scan must
// not read.
template <class S>
void check(const BlacsGrid& grid, long n, char uplo, long off, int nb, int threads,
           const Entry<S>& f, const std::string& what) {
  SCOPED_TRACE(what + " n=" + std::to_string(n) + " uplo=" + uplo + " off=" + std::to_string(off) +
               " nb=" + std::to_string(nb) + " threads=" + std::to_string(threads));
  const int big = static_cast<int>(n + 2 * off);
  const DistributedMatrix layout(grid, BlockCyclicLayout{big, big, nb, nb, 0, 0, 0});
  std::vector<S> local(static_cast<std::size_t>(layout.desc[8]) * std::max(1, layout.local_cols),
                       S(kNan));
  for (int lj = 0; lj < layout.local_cols; ++lj)
    for (int li = 0; li < layout.local_rows; ++li) {
      const long i = global_index(li, nb, layout.myrow, 0, layout.nprow) - off;
      const long j = global_index(lj, nb, layout.mycol, 0, layout.npcol) - off;
      const bool in_triangle = uplo == 'L' ? i >= j : i <= j;
      if (i >= 0 && i < n && j >= 0 && j < n && in_triangle)
        local[li + static_cast<std::size_t>(lj) * layout.desc[8]] = f(i, j);
    }
  const int n_arg = static_cast<int>(n), ia = static_cast<int>(off + 1);
  EigenCall<S> call{};
  call.jobz = 'V';
  call.uplo = uplo;
  call.n = &n_arg;
  call.a = local.data();
  call.ia = call.ja = &ia;
  call.desca = layout.desc;
  const EntryScan got = agreed_entry_scan(call, grid_comm(grid.ictxt), threads);
  const Expected want = expected(n, uplo, f);
  EXPECT_EQ(got.non_finite, want.non_finite);
  if (!want.non_finite)
    EXPECT_EQ(std::memcmp(&got.max_abs, &want.max_abs, sizeof(double)), 0)
        << "max_abs " << got.max_abs << " expected " << want.max_abs;
}

// Deterministic entries in [-1, 1): symmetric hashes, as the other tests' matrices.
double r(long i, long j, unsigned seed) { return random_symmetric_entry(i, j, seed); }
Complex rc(long i, long j) { return {r(i, j, 5), r(i, j, 6)}; }

const long kSizes[] = {1, 2, 3, 7, 8, 9, 16, 17, 37, 70};

// The squarest grid of every rank.
struct Grid : BlacsGrid {
  Grid() : BlacsGrid(squarest_grid(world_size()).nprow, squarest_grid(world_size()).npcol) {}
};

TEST(EntryScan, RandomEntriesGiveTheNormBitForBit) {
  const Grid grid;
  for (long n : kSizes)
    for (char uplo : {'L', 'U'}) {
      check<double>(
          grid, n, uplo, 3, 4, 1, [](long i, long j) { return r(i, j, 3); }, "real");
      check<Complex>(grid, n, uplo, 3, 4, 1, rc, "complex");
      // Parts of equal size: each modulus sqrt(2) |part|, the complex filter's tightest case.
      check<Complex>(
          grid, n, uplo, 0, 8, 1, [](long i, long j) { return Complex(r(i, j, 7), -r(i, j, 7)); },
          "equal parts");
    }
}

TEST(EntryScan, OneSpecialValueAnywhereInTheTriangle) {
  const Grid grid;
  struct Value {
    const char* name;
    double re, im;
  };
  const Value values[] = {{"NaN", kNan, 0.0},
                          {"-Inf", -kInf, 0.0},
                          {"NaN im", 0.5, kNan},
                          {"Inf im", 0.5, kInf},
                          {"largest", 1e300, -1e300},
                          {"-0", -0.0, -0.0},
                          {"subnormal", 3 * kMinSub, kMinSub}};
  for (long n : {9L, 17L})
    for (char uplo : {'L', 'U'})
      for (const Value& v : values)
        for (long at_j = 0; at_j < n; at_j += 3)
          for (long at_i = 0; at_i < n; ++at_i) {
            const bool in_triangle = uplo == 'L' ? at_i >= at_j : at_i <= at_j;
            if (!in_triangle) continue;
            const std::string what = std::string(v.name) + " at (" + std::to_string(at_i) + "," +
                                     std::to_string(at_j) + ")";
            check<double>(
                grid, n, uplo, 2, 4, 1,
                [&](long i, long j) { return i == at_i && j == at_j ? v.re : r(i, j, 3); },
                "real " + what);
            check<Complex>(
                grid, n, uplo, 2, 4, 1,
                [&](long i, long j) {
                  return i == at_i && j == at_j ? Complex(v.re, v.im) : rc(i, j);
                },
                "complex " + what);
          }
}

TEST(EntryScan, InfinityNextToNaN) {
  const Grid grid;
  for (char uplo : {'L', 'U'}) {
    const auto f = [](long i, long j) {
      return i == 12 && j == 3 ? kInf : i == 13 && j == 3 ? kNan : i == 11 && j == 3 ? kNan : 0.25;
    };
    check<double>(
        grid, 17, uplo == 'L' ? 'L' : 'U', 0, 4, 1,
        [&](long i, long j) { return uplo == 'L' ? f(i, j) : f(j, i); }, "inf nan");
  }
}

TEST(EntryScan, TinyAndZeroMatrices) {
  const Grid grid;
  for (char uplo : {'L', 'U'}) {
    check<double>(
        grid, 37, uplo, 1, 4, 1, [](long, long) { return -0.0; }, "all -0");
    check<Complex>(
        grid, 37, uplo, 1, 4, 1, [](long, long) { return Complex(-0.0, 0.0); }, "all -0");
    // Subnormal parts: the modulus filter's bound must hold where products lose their precision.
    check<Complex>(
        grid, 37, uplo, 1, 4, 1,
        [](long i, long j) {
          return Complex(kMinSub * (1 + (i * 7 + j) % 5), kMinSub * (1 + (i + 3 * j) % 4));
        },
        "subnormal");
    check<Complex>(
        grid, 37, uplo, 1, 4, 1,
        [](long i, long j) { return Complex(1e-300 * r(i, j, 3), 1e-300 * r(i, j, 4)); }, "tiny");
    // The smallest subnormal in both parts off the diagonal, zero on it: each modulus rounds to
    // the parts' size, where the filter's product has no precision left.
    check<Complex>(
        grid, 37, uplo, 1, 4, 1,
        [](long i, long j) { return i == j ? Complex(0, 0) : Complex(kMinSub, -kMinSub); },
        "smallest subnormal");
  }
}

// Large enough for several workers (interface/non_finite_check.cpp's per-thread share), with the
// special value in the last worker's columns.
TEST(EntryScan, SeveralThreads) {
  const Grid grid;
  const long n = 1500;
  for (char uplo : {'L', 'U'}) {
    check<double>(
        grid, n, uplo, 0, 64, 3, [](long i, long j) { return r(i, j, 3); }, "real");
    check<Complex>(grid, n, uplo, 0, 64, 3, rc, "complex");
    const long at = uplo == 'L' ? n - 1 : n - 2;
    check<double>(
        grid, n, uplo, 0, 64, 3,
        [&](long i, long j) { return i == at && j == n - 2 ? kNan : r(i, j, 3); },
        "NaN in the last columns");
  }
}

}  // namespace
}  // namespace pipevd::test
