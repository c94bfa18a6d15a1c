// The two-stage engine over its scalars on the host backend, one test body for real symmetric and
// complex Hermitian matrices: A = Q diag(lambda) Q^H with a random orthogonal (unitary) Q, odd n,
// b not dividing n, on 1-4 engine ranks (the MPI ranks). The stages: I Q_s Q_b (D) from SBR-back
// and BC-back is unitary and reduces A to the real tridiagonal bulge chasing hands the D&C; the
// whole engine (dstedc, dc, dc folded into the final GEMM, eigenvalues only): eigenvalues against
// the known spectrum and LAPACK (dsyevd, zheevd), residual ||A Z - Z W||_F / (||A||_F n eps) and
// orthogonality ||Z^H Z - I||_F / (n eps) under ScaLAPACK's threshold; SBR-back's right order
// forced gives the same eigenvalues bitwise and Z to rounding where a rank holds every row, else
// bitwise.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/lapack_prototypes.hpp"
#include "core/sbr_back.hpp"
#include "core/timeline.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/reduction_shape.hpp"
#include "tests/support/spectra.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using test::world_rank;
using test::world_size;

using Shape = test::ReductionShape;
using test::name;

// Odd n, b not dividing n, k = b and a few b, one panel per outer block and several; b = 1 (the
// band already tridiagonal: only D for complex); n below any sweep.
const Shape kShapes[] = {{37, 4, 12}, {37, 8, 8},  {101, 8, 32}, {101, 32, 32}, {77, 4, 12},
                         {45, 1, 4},  {1, 32, 32}, {2, 32, 32},  {3, 2, 2}};

// The spectrum's matrix: Q diag(lambda) Q^T, or Q diag(lambda) Q^H with Q unitary.
std::vector<double> with_spectrum(const std::vector<double>& lambda, unsigned seed, double*) {
  return test::matrix_with_eigenvalues(lambda, seed);
}
std::vector<Complex> with_spectrum(const std::vector<double>& lambda, unsigned seed, Complex*) {
  return test::hermitian_with_eigenvalues(lambda, seed);
}

double residual(int n, const std::vector<double>& a, const std::vector<double>& z,
                const std::vector<double>& w) {
  return test::residual(n, a, z, w);
}
double residual(int n, const std::vector<Complex>& a, const std::vector<Complex>& z,
                const std::vector<double>& w) {
  return test::hermitian_residual(n, a, z, w);
}
double orthogonality(int n, const std::vector<double>& z) { return test::orthogonality(n, z); }
double orthogonality(int n, const std::vector<Complex>& z) {
  return test::unitary_orthogonality(n, z);
}

// LAPACK's eigenvalues: dsyevd, zheevd.
std::vector<double> lapack_eigenvalues(int n, const std::vector<double>& a) {
  return test::lapack_eigenvalues(n, a);
}
std::vector<double> lapack_eigenvalues(int n, std::vector<Complex> a) {
  std::vector<double> w(std::max(1, n));
  int info = 0, lwork = -1, lrwork = -1, liwork = -1, iq = 0;
  Complex wq = 0;
  double rq = 0;
  zheevd_("N", "L", &n, a.data(), &n, w.data(), &wq, &lwork, &rq, &lrwork, &iq, &liwork, &info, 1,
          1);
  lwork = std::max(1, static_cast<int>(wq.real()));
  lrwork = std::max(1, static_cast<int>(rq));
  liwork = std::max(1, iq);
  std::vector<Complex> work(lwork);
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(liwork);
  zheevd_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &lrwork,
          iwork.data(), &liwork, &info, 1, 1);
  EXPECT_EQ(info, 0);
  w.resize(n);
  return w;
}

using test::frobenius;

// The full n x n matrix on every rank from each rank's rows of it (ld max(1, height)).
template <class T>
std::vector<T> gather_rows(const EngineLayout& L, const std::vector<T>& mine) {
  const long n = L.n;
  std::vector<T> full(n * n, T(0));
  for (int p = 0; p < world_size(); ++p) {
    const long hp = L.height(p), ldp = std::max(1L, hp);
    std::vector<T> blk = p == world_rank() ? mine : std::vector<T>(ldp * n);
    MPI_Bcast(blk.data(), static_cast<int>(Scalar<T>::words * ldp * n), MPI_DOUBLE, p,
              MPI_COMM_WORLD);
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < hp; ++i) full[L.row_begin[p] + i + j * n] = blk[i + j * ldp];
  }
  return full;
}

template <class T>
std::vector<T> columns_of(const std::vector<T>& a, const EngineLayout& L, int e) {
  return std::vector<T>(a.begin() + L.col_begin[e] * L.n, a.begin() + L.col_begin[e + 1] * L.n);
}

template <class T>
class EngineScalars : public testing::Test {
 protected:
  static std::vector<T> matrix(const std::vector<double>& lambda, unsigned seed) {
    return with_spectrum(lambda, seed, static_cast<T*>(nullptr));
  }
};

using Scalars = testing::Types<double, Complex>;
TYPED_TEST_SUITE(EngineScalars, Scalars);

// Stages 1, 2 and 4: X = I Q_s Q_b (D) on each rank's rows, gathered, is unitary and X^H A X is the
// real tridiagonal (d, e) that stage 3 receives.
TYPED_TEST(EngineScalars, BackTransformationsReduceToTheRealTridiagonal) {
  using T = TypeParam;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(name(s));
    const long n = s.n;
    const std::vector<double> lambda = test::eigenvalues_of(test::Spectrum::Uniform, n, 3);
    const std::vector<T> a = TestFixture::matrix(lambda, 17);
    const EngineLayout L = plan_engine_layout(n, world_size(), s.b);
    const int me = world_rank();
    HostBackend be;
    be.bind(MPI_COMM_WORLD);
    const long b = effective_bandwidth(n, s.b);
    std::vector<T> mine = columns_of(a, L, me);
    const DbbrOptions opt{s.b, s.k, true};
    auto panels = reduce_to_band(be, L, me, mine.data(), opt);
    const auto band = gather_band(be, L, me, mine.data(), opt);
    std::vector<double> d(std::max(1L, n)), e(std::max(1L, n));
    BasicReflectorStore<T> u;
    be.bulge_chase(n, b, band.get(), b + 1, d.data(), e.data(), u);

    const long h = L.height(me), ldx = std::max(1L, h);
    std::vector<T> x(ldx * n, T(0));
    for (long i = 0; i < h; ++i) x[i + (L.row_begin[me] + i) * ldx] = 1.0;
    apply_sbr_back(be, merge_reflector_panels(be, panels, s.k), h, x.data(), ldx);
    if (h > 0) be.bc_back(u, h, x.data(), ldx);
    const std::vector<T> q = gather_rows(L, x);

    // X^H A X - T and X^H X - I, in units of ||A||_F n eps and n eps.
    std::vector<T> aq(n * n), t(n * n);
    be.gemm('N', 'N', n, n, n, 1.0, a.data(), n, q.data(), n, 0.0, aq.data(), n);
    be.gemm(Scalar<T>::adjoint, 'N', n, n, n, 1.0, q.data(), n, aq.data(), n, 0.0, t.data(), n);
    for (long i = 0; i < n; ++i) {
      t[i + i * n] -= d[i];
      if (i + 1 < n) {
        t[i + 1 + i * n] -= e[i];
        t[i + (i + 1) * n] -= e[i];
      }
    }
    const double eps = DBL_EPSILON;
    EXPECT_LT(frobenius(t) / (std::max(frobenius(a), DBL_MIN) * n * eps), 100.0);
    EXPECT_LT(orthogonality(static_cast<int>(n), q), 100.0);
    if constexpr (is_complex_v<T>) {
      for (long i = 0; i + 1 < n; ++i) EXPECT_GE(e[i], 0.0) << i;  // D made it |e|
      EXPECT_EQ(static_cast<long>(u.phase.size()), n);
    }
  }
}

// The whole engine, stage 3 by each solver, against the known spectrum and LAPACK.
TYPED_TEST(EngineScalars, WholeEngineMatchesTheSpectrumAndLapack) {
  using T = TypeParam;
  struct Solver {
    const char* name;
    TridiagonalSolver solver;
    bool fold;
  };
  const Solver solvers[] = {{"dstedc", TridiagonalSolver::Dstedc, false},
                            {"dc", TridiagonalSolver::Dc, false},
                            {"dc_fold", TridiagonalSolver::Dc, true}};
  for (const Shape& s : kShapes)
    for (test::Spectrum spectrum : {test::Spectrum::Uniform, test::Spectrum::Geometric,
                                    test::Spectrum::Cluster0, test::Spectrum::Normal})
      for (const Solver& solver : solvers) {
        SCOPED_TRACE(name(s) + " " + test::to_string(spectrum) + " " + solver.name);
        const long n = s.n;
        const int in = static_cast<int>(n);
        std::vector<double> lambda = test::eigenvalues_of(spectrum, n, 5);
        const std::vector<T> a = TestFixture::matrix(lambda, 29);
        std::sort(lambda.begin(), lambda.end());
        const EngineLayout L = plan_engine_layout(n, world_size(), s.b);
        const int me = world_rank();
        EngineOptions opt;
        opt.b = s.b;
        opt.k = s.k;
        opt.tridiagonal = solver.solver;
        opt.dc_fold = solver.fold;
        const std::vector<T> mine = columns_of(a, L, me);
        const long ldz = std::max(1L, L.height(me));
        std::vector<T> z(ldz * n, T(0));
        std::vector<double> w(std::max(1L, n));
        HostBackend be;
        ASSERT_EQ(run_engine(be, MPI_COMM_WORLD, L, mine.data(), w.data(), z.data(), opt, nullptr),
                  0);
        w.resize(n);
        EXPECT_LT(test::eigenvalue_difference(w, lambda), 1e-12);
        EXPECT_LT(test::eigenvalue_difference(w, lapack_eigenvalues(in, a)), 1e-12);
        const std::vector<T> zf = gather_rows(L, z);
        EXPECT_LT(residual(in, a, zf, w), test::kScalapackThreshold);
        EXPECT_LT(orthogonality(in, zf), test::kScalapackThreshold);

        // SBR-back from the right on every rank: the same eigenvalues, and Z to rounding where a
        // rank holds every row (auto forms Q_s from the left there), else bitwise.
        EngineOptions right = opt;
        right.sbr_back_order = SbrBackOrder::Right;
        std::vector<T> zr(ldz * n, T(0));
        std::vector<double> wr(std::max(1L, n));
        HostBackend right_be;
        ASSERT_EQ(run_engine(right_be, MPI_COMM_WORLD, L, mine.data(), wr.data(), zr.data(), right,
                             nullptr),
                  0);
        wr.resize(n);
        EXPECT_TRUE(test::bitwise_equal(wr, w)) << "eigenvalues, SBR-back's right order";
        bool every_row = false;
        for (int e = 0; e < L.engine_ranks(); ++e) every_row = every_row || L.height(e) == n;
        if (every_row)
          EXPECT_LT(test::max_abs_diff(zr, z), 1e-10) << "Z, SBR-back's right order";
        else
          EXPECT_TRUE(test::bitwise_equal(zr, z)) << "Z, SBR-back's right order";

        // Eigenvalues only: the same tridiagonal, so the same eigenvalues to rounding.
        opt.want_vectors = false;
        std::vector<double> values(std::max(1L, n));
        HostBackend values_be;
        ASSERT_EQ(run_engine(values_be, MPI_COMM_WORLD, L, mine.data(), values.data(), nullptr, opt,
                             nullptr),
                  0);
        values.resize(n);
        EXPECT_LT(test::eigenvalue_difference(values, lambda), 1e-12);
      }
}

// DBBR tells its hook of each outer block's panels once, in order, the ranges covering every
// panel; blockwise and cyclic columns.
TYPED_TEST(EngineScalars, DbbrTellsEachOuterBlocksPanels) {
  using T = TypeParam;
  for (const bool cyclic : {false, true})
    for (const Shape& s : {Shape{131, 8, 36}, Shape{300, 16, 64}}) {
      SCOPED_TRACE(name(s) + (cyclic ? " cyclic" : " blockwise"));
      const std::vector<T> a =
          TestFixture::matrix(test::eigenvalues_of(test::Spectrum::Uniform, s.n, 5), 31);
      const EngineLayout L = plan_engine_layout(s.n, world_size(), s.b);
      DbbrOptions opt;
      opt.b = s.b;
      opt.k = s.k;
      opt.cyclic_blocks = cyclic;
      HostBackend be;
      be.bind(MPI_COMM_WORLD);
      std::vector<T> mine(s.n * dbbr_columns(L, opt).width(world_rank()));
      const DbbrColumns cols = dbbr_columns(L, opt);
      for (const ColumnSegment& seg : cols.segments(world_rank()))
        std::copy(a.begin() + seg.begin * s.n, a.begin() + seg.end * s.n,
                  mine.begin() + seg.local * s.n);
      std::vector<std::pair<long, long>> told;
      const PanelsReady<T> ready = [&](BasicReflectorPanels<T>& q, long first, long last) {
        EXPECT_EQ(static_cast<long>(q.panels.size()), last);
        told.emplace_back(first, last);
      };
      const BasicReflectorPanels<T> q =
          reduce_to_band(be, L, world_rank(), mine.data(), opt, ready);
      ASSERT_EQ(told.size(), outer_blocks(L, opt).size());
      long next = 0;
      for (auto [first, last] : told) {
        EXPECT_EQ(first, next);
        EXPECT_LT(first, last);
        next = last;
      }
      EXPECT_EQ(next, static_cast<long>(q.panels.size()));
    }
}

// The engine on its ranks' columns of a (host backend), eigenvalues and this rank's rows of Z.
template <class T>
struct RankResult {
  std::vector<double> w;
  std::vector<T> z;
};
template <class T>
RankResult<T> engine_rows(const std::vector<T>& a, const EngineLayout& L,
                          const EngineOptions& opt) {
  const int me = world_rank();
  const long n = L.n;
  const std::vector<T> mine = columns_of(a, L, me);
  RankResult<T> r{std::vector<double>(std::max(1L, n)),
                  std::vector<T>(std::max(1L, L.height(me)) * n, T(0))};
  HostBackend be;
  EXPECT_EQ(run_engine(be, MPI_COMM_WORLD, L, mine.data(), r.w.data(), r.z.data(), opt, nullptr),
            0);
  r.w.resize(n);
  return r;
}

// SBR-back beside DBBR (its blocks applied as DBBR makes their panels) against beside bulge
// chasing: the same groups, GEMMs and order, so W and Z bit for bit, and Z accurate; odd n, n not
// a multiple of b or k, k not a multiple of b (merged blocks and outer blocks of other widths),
// DBBR's columns blockwise and cyclic.
TYPED_TEST(EngineScalars, SbrBackBesideDbbrEqualsBesideChase) {
  using T = TypeParam;
  for (const bool cyclic : {false, true})
    for (const Shape& s : {Shape{131, 8, 36}, Shape{300, 16, 64}, Shape{517, 8, 24}}) {
      SCOPED_TRACE(name(s) + (cyclic ? " cyclic" : " blockwise"));
      const long n = s.n;
      const int in = static_cast<int>(n);
      const std::vector<double> lambda = test::eigenvalues_of(test::Spectrum::Uniform, n, 5);
      const std::vector<T> a = TestFixture::matrix(lambda, 37);
      const EngineLayout L = plan_engine_layout(n, world_size(), s.b);
      EngineOptions opt;
      opt.b = s.b;
      opt.k = s.k;
      opt.dbbr_cyclic_blocks = cyclic;
      opt.overlap_sbr_back = true;
      const RankResult<T> chase = engine_rows(a, L, opt);
      opt.sbr_back_beside_dbbr = true;
      const RankResult<T> dbbr = engine_rows(a, L, opt);
      EXPECT_TRUE(test::bitwise_equal(dbbr.w, chase.w)) << "W";
      EXPECT_TRUE(test::bitwise_equal(dbbr.z, chase.z)) << "Z";
      const std::vector<T> zf = gather_rows(L, dbbr.z);
      EXPECT_LT(residual(in, a, zf, dbbr.w), test::kScalapackThreshold);
      EXPECT_LT(orthogonality(in, zf), test::kScalapackThreshold);
    }
}

// EngineOptions::after_dbbr (the route joins the pool's staged growth there): called once on every
// rank, after DBBR's stage and before any later stage, with eigenvectors and without.
TYPED_TEST(EngineScalars, AfterDbbrRunsOnceBetweenDbbrAndTheNextStage) {
  using T = TypeParam;
  const Shape s{101, 8, 32};
  const std::vector<T> a =
      TestFixture::matrix(test::eigenvalues_of(test::Spectrum::Uniform, s.n, 5), 41);
  const EngineLayout L = plan_engine_layout(s.n, world_size(), s.b);
  for (const bool vectors : {true, false}) {
    SCOPED_TRACE(vectors ? "eigenvectors" : "eigenvalues only");
    Timeline timeline;
    timeline.start(MPI_COMM_WORLD);
    EngineOptions opt;
    opt.b = s.b;
    opt.k = s.k;
    opt.want_vectors = vectors;
    opt.timeline = &timeline;
    std::vector<std::string> stages_then;
    int calls = 0;
    opt.after_dbbr = [&] {
      ++calls;
      for (const TimelineInterval& i : timeline.intervals())
        if (i.thread == "main") stages_then.push_back(i.stage);
    };
    engine_rows(a, L, opt);
    EXPECT_EQ(calls, 1);
    ASSERT_FALSE(stages_then.empty());
    EXPECT_EQ(stages_then.back(), "dbbr");
    for (const TimelineInterval& i : timeline.intervals())
      if (i.thread == "main" && i.stage != "engine_bind" && i.stage != "dbbr")
        EXPECT_EQ(std::count(stages_then.begin(), stages_then.end(), i.stage), 0) << i.stage;
  }
}

// One engine rank with one triangle given (the route's direct path: opt.symmetrize), the other
// holding garbage: the backend rebuilds the symmetric (Hermitian) matrix, the diagonal's
// imaginary parts dropped as zheevd drops them.
TYPED_TEST(EngineScalars, OneTriangleIsMirrored) {
  using T = TypeParam;
  if (world_size() != 1) GTEST_SKIP() << "one engine rank";
  const long n = 41;
  const int in = static_cast<int>(n);
  std::vector<double> lambda = test::eigenvalues_of(test::Spectrum::Arithmetic, n, 7);
  const std::vector<T> a = TestFixture::matrix(lambda, 31);
  std::sort(lambda.begin(), lambda.end());
  for (char uplo : {'L', 'U'}) {
    SCOPED_TRACE(std::string(1, uplo));
    std::vector<T> given = a;
    for (long j = 0; j < n; ++j) {
      for (long i = 0; i < n; ++i)
        if (uplo == 'L' ? i < j : i > j) given[i + j * n] = 1e300;
      if constexpr (is_complex_v<T>) given[j + j * n] += Complex(0.0, 3.0);
    }
    EngineOptions opt;
    opt.b = 4;
    opt.k = 8;
    opt.symmetrize = uplo;
    std::vector<T> z(n * n);
    std::vector<double> w(n);
    HostBackend be;
    const EngineLayout L = plan_engine_layout(n, 1, opt.b);
    ASSERT_EQ(run_engine(be, MPI_COMM_WORLD, L, given.data(), w.data(), z.data(), opt, nullptr), 0);
    EXPECT_LT(test::eigenvalue_difference(w, lambda), 1e-12);
    EXPECT_LT(residual(in, a, z, w), test::kScalapackThreshold);
  }
}

}  // namespace
}  // namespace pipevd
