// pzheevd_ end to end on pipevd's engine (PIPEVD_BACKEND=host, or gpu in the GPU build of this
// file) against ScaLAPACK's PZHEEVD: Hermitian matrices Q diag(lambda) Q^H with a random unitary Q
// (the spectra of the real tests, a degenerate one, zero, the identity), both triangles, NaN in the
// triangle not referenced, submatrices, P x 1 and 1 x P grids, odd n and NB, tiny and huge norms
// (PZHEEVD's scaling). Eigenvalues equal ScaLAPACK's to 1e-12 of the spectrum's norm (its
// reference solve on a copy at (1, 1), where its own PZHEEVD computes right) and to the known
// spectrum; residual and orthogonality of Z under ScaLAPACK's threshold; A and Z outside the
// submatrix untouched; JOBZ = 'N' the same eigenvalues; the path is the one the run names
// (PIPEVD_TEST_EXPECT_PATH: one_stage, two_stage), so the GPU build checks the one-stage path and,
// forced, the GPU two-stage engine on 1 to 4 GPUs alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/scalapack_api.hpp"
#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "include/pipevd.h"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/guarded_array.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/spectra.hpp"

extern "C" void pzheevd_(const char*, const char*, const int*, void*, const int*, const int*,
                         const int*, double*, void*, const int*, const int*, const int*, void*,
                         const int*, double*, const int*, int*, const int*, int*, size_t, size_t);

namespace pipevd::test {
namespace {

// The interposed pzheevd_ with a workspace query first; returns INFO.
int call_pzheevd(char jobz, char uplo, int n, Complex* a, int ia, int ja, const int* desca,
                 double* w, Complex* z, int iz, int jz, const int* descz) {
  int info = 0, lwork = -1, lrwork = -1, liwork = -1, iwq = 0;
  Complex wq = 0;
  double rwq = 0;
  pzheevd_(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, &wq, &lwork, &rwq, &lrwork,
           &iwq, &liwork, &info, 1, 1);
  if (info != 0) return info;
  lwork = static_cast<int>(wq.real());
  lrwork = static_cast<int>(rwq);
  liwork = iwq;
  std::vector<Complex> work(lwork);
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(liwork);
  pzheevd_(&jobz, &uplo, &n, a, &ia, &ja, desca, w, z, &iz, &jz, descz, work.data(), &lwork,
           rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
  return info;
}

enum class Kind { Spectrum, Degenerate, Zero, Identity };

struct Case {
  std::string name;
  char grid;  // grid_shape's code: 's' squarest, 'r' 1 x P, 'c' P x 1
  int n, nb;
  char uplo;
  Kind kind = Kind::Spectrum;
  Spectrum spectrum = Spectrum::Uniform;
  int row_off = 0, col_off = 0;  // sub(A) and sub(Z) at (row_off + 1, col_off + 1)
  int src = 0;                   // RSRC = CSRC = src mod the grid's extent
  int lld_extra = 0;
  bool nan_other = false;  // NaN in the triangle UPLO does not name
  // A power of two multiplying the matrix (tiny and huge norms: PZHEEVD's scaling), divided out of
  // W before the checks (exactly).
  double scale = 1;
};

std::vector<double> eigenvalues(const Case& c) {
  switch (c.kind) {
    case Kind::Spectrum:
      return eigenvalues_of(c.spectrum, c.n, 11);
    case Kind::Degenerate: {
      std::vector<double> l(c.n);
      for (int i = 0; i < c.n; ++i) l[i] = i < c.n / 3 ? -1.0 : (i < 2 * c.n / 3 ? 2.0 : 2.5);
      return l;
    }
    case Kind::Zero:
      return std::vector<double>(c.n, 0.0);
    case Kind::Identity:
      return std::vector<double>(c.n, 1.0);
  }
  return {};
}

const Complex kOutside(99.0, -99.0), kZSentinel(7.0, 7.0);

void run_case(const Case& c) {
  const GridShape shape = grid_shape(c.grid);
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const int n = c.n, m = n + std::max(c.row_off, c.col_off);
  const std::vector<Complex> h = hermitian_with_eigenvalues(eigenvalues(c), 5);
  std::vector<Complex> scaled = h;
  for (Complex& v : scaled) v *= c.scale;
  const bool lower = c.uplo == 'L';
  const int rsrc = c.src % shape.nprow, csrc = c.src % shape.npcol;
  auto entry = [&](long i, long j) -> Complex {
    const long si = i - c.row_off, sj = j - c.col_off;
    if (si < 0 || sj < 0 || si >= n || sj >= n) return kOutside;
    if (c.nan_other && (lower ? si < sj : si > sj))
      return {std::numeric_limits<double>::quiet_NaN(), 0.0};
    return scaled[si + sj * static_cast<long>(n)];
  };
  ComplexDistributedMatrix a(grid, m, c.nb, rsrc, csrc, c.lld_extra);
  ComplexDistributedMatrix z(grid, m, c.nb, rsrc, csrc, c.lld_extra);
  a.fill(entry);
  z.fill([](long, long) { return kZSentinel; });
  const std::vector<Complex> a_before(a.data(), a.data() + a.local_size());
  std::vector<double> w(n), w_ref(n), w_values(n);
  const int ia = c.row_off + 1, ja = c.col_off + 1;
  ASSERT_EQ(
      call_pzheevd('V', c.uplo, n, a.data(), ia, ja, a.desc, w.data(), z.data(), ia, ja, z.desc),
      0);
  if (const char* path = std::getenv("PIPEVD_TEST_EXPECT_PATH"))
    EXPECT_STREQ(pipevd_last_path(), path);
  // pipevd's engine reads A and leaves it as it was, NaN included.
  for (std::size_t k = 0; k < a_before.size(); ++k)
    ASSERT_EQ(std::memcmp(&a_before[k], a.data() + k, sizeof(Complex)), 0) << "A changed at " << k;

  // ScaLAPACK's PZHEEVD on a copy at (1, 1) on process (0, 0), both triangles set.
  ComplexDistributedMatrix a_ref(grid, n, c.nb), z_ref(grid, n, c.nb);
  a_ref.fill([&](long i, long j) { return scaled[i + j * static_cast<long>(n)]; });
  ASSERT_EQ(call_scalapack_pzheevd('V', c.uplo, n, a_ref.data(), 1, 1, a_ref.desc, w_ref.data(),
                                   z_ref.data(), 1, 1, z_ref.desc),
            0);
  for (std::vector<double>* v : {&w, &w_ref})
    for (double& x : *v) x /= c.scale;
  // ScaLAPACK 2.2.1's PZHEEVD returns W = 0 for N = 1 on a grid of several processes: there only
  // the known spectrum is the reference.
  if (n > 1 || grid.nprow * grid.npcol == 1) EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
  std::vector<double> lambda = eigenvalues(c);
  std::sort(lambda.begin(), lambda.end());
  EXPECT_LE(eigenvalue_difference(w, lambda), 1e-12);

  const std::vector<Complex> zf = z.gather(grid);
  std::vector<Complex> zs(static_cast<std::size_t>(n) * n);
  for (long j = 0; j < m; ++j)
    for (long i = 0; i < m; ++i) {
      const long si = i - c.row_off, sj = j - c.col_off;
      const Complex v = zf[i + j * m];
      if (si >= 0 && sj >= 0 && si < n && sj < n)
        zs[si + sj * n] = v;
      else
        ASSERT_EQ(v, kZSentinel) << "Z written outside sub(Z) at " << i << "," << j;
    }
  EXPECT_LT(hermitian_residual(n, h, zs, w), kScalapackThreshold);
  EXPECT_LT(unitary_orthogonality(n, zs), kScalapackThreshold);

  // JOBZ = 'N' (pipevd's extension on the engine): the same eigenvalues.
  ASSERT_EQ(call_pzheevd('N', c.uplo, n, a.data(), ia, ja, a.desc, w_values.data(), z.data(), ia,
                         ja, z.desc),
            0);
  for (double& x : w_values) x /= c.scale;
  EXPECT_LE(eigenvalue_difference(w_values, lambda), 1e-12);
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (Spectrum s : kAllSpectra)
    for (char uplo : {'L', 'U'}) {
      Case c{std::string(to_string(s)) + "_n37_nb8_" + uplo, 's', 37, 8, uplo};
      c.spectrum = s;
      v.push_back(c);
    }
  for (char grid : {'r', 'c'})
    for (char uplo : {'L', 'U'}) {
      Case c{std::string("grid_") + grid + "_n50_nb7_" + uplo, grid, 50, 7, uplo};
      c.spectrum = Spectrum::Geometric;
      c.lld_extra = 3;
      v.push_back(c);
    }
  v.push_back({"degenerate_n45_nb5_L", 's', 45, 5, 'L', Kind::Degenerate});
  v.push_back({"zero_n21_nb4_U", 's', 21, 4, 'U', Kind::Zero});
  v.push_back({"identity_n33_nb3_L", 's', 33, 3, 'L', Kind::Identity});
  for (char uplo : {'L', 'U'}) {
    Case nan{std::string("nan_other_n41_nb6_") + uplo, 's', 41, 6, uplo};
    nan.nan_other = true;
    v.push_back(nan);
    Case sub{std::string("submatrix_n39_nb5_") + uplo, 's', 39, 5, uplo};
    sub.row_off = sub.col_off = 10;
    sub.src = 1;
    sub.lld_extra = 2;
    v.push_back(sub);
    Case cols{std::string("columns_off3_n31_nb4_") + uplo, 'r', 31, 4, uplo};
    cols.col_off = 3;  // JA off a block boundary: PZHEEVD's checks allow it
    cols.nan_other = true;
    v.push_back(cols);
  }
  v.push_back({"n1_nb1_L", 's', 1, 1, 'L'});
  // Tiny and huge norms with LLD = N: on one rank the direct path's upload finds the norm, and the
  // call goes the general path, which scales a copy.
  for (double scale : {0x1p-1000, 0x1p+400})
    for (char uplo : {'L', 'U'}) {
      Case c{std::string(scale < 1 ? "tiny" : "huge") + "_n40_nb8_" + uplo, 's', 40, 8, uplo};
      c.spectrum = Spectrum::Geometric;
      c.scale = scale;
      c.nan_other = true;
      v.push_back(c);
    }
  // Several times the engine's default band (32): several DBBR panels, bulge chasing's sweeps
  // several steps long, the engine ranks' columns unequal; from an offset submatrix.
  Case wide{"wide_n203_nb16_U", 's', 203, 16, 'U'};
  wide.spectrum = Spectrum::Normal;
  wide.row_off = wide.col_off = 16;
  v.push_back(wide);
  return v;
}

class PzheevdEndToEnd : public testing::TestWithParam<Case> {};

TEST_P(PzheevdEndToEnd, MatchesScalapack) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cases, PzheevdEndToEnd, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.name; });

using GuardedArray = test::GuardedArray<Complex>;

// The reference itself (call_scalapack_pzheevd) with A's and Z's local arrays each ending where
// nothing can be read: with UPLO = 'U', OpenBLAS's ZGEMV reads past the end of the A that PZHEEVD
// is given (see scalapack_reference.cpp), which must land in the wrapper's padding and not past
// the caller's array, wherever the caller's allocator put it. The wide case's shape.
TEST(ScalapackReference, ReadsNothingPastTheCallersArrays) {
  const GridShape shape = grid_shape('s');
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const int n = 203, nb = 16;
  std::vector<double> lambda = eigenvalues_of(Spectrum::Normal, n, 11);
  const std::vector<Complex> h = hermitian_with_eigenvalues(lambda, 5);
  ComplexDistributedMatrix a(grid, n, nb);
  a.fill([&](long i, long j) { return h[i + j * static_cast<long>(n)]; });
  const std::size_t reach = static_cast<std::size_t>(a.desc[scalapack::LLD_]) * sizeof(Complex);
  GuardedArray a_guarded(a.local_size(), reach), z_guarded(a.local_size(), reach);
  std::copy(a.data(), a.data() + a.local_size(), a_guarded.data());
  std::vector<double> w(n);
  ASSERT_EQ(call_scalapack_pzheevd('V', 'U', n, a_guarded.data(), 1, 1, a.desc, w.data(),
                                   z_guarded.data(), 1, 1, a.desc),
            0);
  std::sort(lambda.begin(), lambda.end());
  EXPECT_LE(eigenvalue_difference(w, lambda), 1e-12);
}

// A NaN or an infinity in the referenced triangle: INFO = N + 1 on every rank, A, W and Z
// untouched, nothing computed (as for PDSYEVD).
TEST(PzheevdNonFinite, RefusedWithNPlusOne) {
  const GridShape shape = grid_shape('s');
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const int n = 30, nb = 4;
  const std::vector<Complex> h = hermitian_with_eigenvalues(std::vector<double>(n, 1.0), 3);
  struct Bad {
    char uplo;
    long i, j;
    Complex value;
  };
  const double inf = std::numeric_limits<double>::infinity(),
               nan = std::numeric_limits<double>::quiet_NaN();
  // LLD = N: on one rank, where the engine takes the one-stage path, its upload finds them.
  for (const Bad& bad : {Bad{'L', 17, 4, Complex(0, inf)}, Bad{'L', 17, 4, Complex(nan, 0)},
                         Bad{'U', 4, 17, Complex(-inf, 1)}, Bad{'U', 9, 9, Complex(1, nan)},
                         Bad{'L', n - 1, n - 1, Complex(nan, nan)}}) {
    SCOPED_TRACE(std::string("uplo=") + bad.uplo + " at (" + std::to_string(bad.i) + "," +
                 std::to_string(bad.j) + ")");
    ComplexDistributedMatrix a(grid, n, nb), z(grid, n, nb);
    a.fill([&](long i, long j) { return i == bad.i && j == bad.j ? bad.value : h[i + j * n]; });
    z.fill([](long, long) { return kZSentinel; });
    const std::vector<Complex> a_before(a.data(), a.data() + a.local_size());
    std::vector<double> w(n, -5.0);
    const int info =
        call_pzheevd('V', bad.uplo, n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
    EXPECT_EQ(info, n + 1);
    EXPECT_TRUE(same_on_every_rank(info));
    EXPECT_EQ(std::memcmp(a_before.data(), a.data(), a_before.size() * sizeof(Complex)), 0);
    for (double v : w) EXPECT_EQ(v, -5.0);
    for (std::size_t k = 0; k < z.local_size(); ++k) EXPECT_EQ(z.data()[k], kZSentinel);
    EXPECT_STREQ(pipevd_last_path(), "");
  }
}

}  // namespace
}  // namespace pipevd::test
