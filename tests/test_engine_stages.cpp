// The engine's stages on the host backend, each against LAPACK at small n, on every rank count:
// DBBR (Q_s orthogonal, Q_s^T A Q_s equal to the band it leaves), SBR-back (merged W blocks on any
// row block equal the panel-by-panel product), bulge chasing + both back transformations
// (Q_sb^T A Q_sb = T), and the whole engine (residual, orthogonality, eigenvalues vs dsyevd),
// for b in {2, 4, 8, 32}, k in {b, 4b}, n not a multiple of b or k, balanced and skewed layouts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/reflector_store.hpp"
#include "core/sbr_back.hpp"
#include "core/tridiagonal_solver.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/spectra.hpp"

namespace pipevd {
namespace {

using test::world_rank;
using test::world_size;

struct Shape {
  long n, b, k;
};

std::string name(const Shape& s) {
  return "n=" + std::to_string(s.n) + " b=" + std::to_string(s.b) + " k=" + std::to_string(s.k);
}

// The test shapes: every b of the issue, k = b and 4b, n a multiple of neither.
std::vector<Shape> shapes() {
  std::vector<Shape> v;
  for (long b : {2L, 4L, 8L, 32L})
    for (long k : {b, 4 * b})
      for (long n : {37L, 101L}) v.push_back({n, b, k});
  v.push_back({77, 4, 12});  // three panels per outer block: an uneven recursive panel update
  return v;
}

std::vector<double> random_matrix(long n, unsigned seed) {
  std::vector<double> a(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) a[i + j * n] = test::random_symmetric_entry(i, j, seed);
  return a;
}

std::vector<double> columns_of(const std::vector<double>& a, const EngineLayout& L, int e) {
  return std::vector<double>(a.begin() + L.col_begin[e] * L.n,
                             a.begin() + L.col_begin[e + 1] * L.n);
}

// Column widths growing with the rank (rank 0 may get none), multiples of b; heights skewed the
// other way with a zero height where there are enough ranks.
EngineLayout skewed_layout(long n, int ranks, long b) {
  EngineLayout L = plan_engine_layout(n, ranks, b, 0.0);
  const long bw = effective_bandwidth(n, b);
  const long weight = static_cast<long>(ranks) * (ranks + 1) / 2;
  long acc = 0;
  for (int e = 0; e < ranks; ++e) {
    L.col_begin[e] = std::min(n, bw * ((acc * n / weight) / bw));
    acc += e;  // rank 0 gets weight 0: no columns
  }
  L.col_begin[ranks] = n;
  for (int e = 0; e <= ranks; ++e) L.row_begin[e] = (n * e * (2 * ranks - e)) / (ranks * ranks);
  if (ranks >= 3) L.row_begin[2] = L.row_begin[1];  // rank 1 has no rows
  L.row_begin[ranks] = n;
  return L;
}

double frobenius(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

// C = A^T B A for n x n matrices (through the host backend's gemm).
std::vector<double> congruence(HostBackend& be, long n, const std::vector<double>& a,
                               const std::vector<double>& q) {
  std::vector<double> t(n * n), c(n * n);
  be.gemm('N', 'N', n, n, n, 1.0, a.data(), n, q.data(), n, 0.0, t.data(), n);
  be.gemm('T', 'N', n, n, n, 1.0, q.data(), n, t.data(), n, 0.0, c.data(), n);
  return c;
}

// Q_s = I Q_0 Q_1 ..., one panel at a time (no merging): the reference for SBR-back.
std::vector<double> panel_by_panel(HostBackend& be, const ReflectorPanels& p) {
  const long n = p.n;
  std::vector<double> q(n * n, 0.0), t(n * std::max(1L, p.b));
  for (long i = 0; i < n; ++i) q[i + i * n] = 1;
  for (const auto& pan : p.panels) {
    be.gemm('N', 'N', n, pan.width, pan.m, 1.0, q.data() + pan.row0 * n, n, pan.w.get(), pan.m, 0.0,
            t.data(), n);
    be.gemm('N', 'T', n, pan.m, pan.width, -1.0, t.data(), n, pan.y.get(), pan.m, 1.0,
            q.data() + pan.row0 * n, n);
  }
  return q;
}

struct Reduced {
  ReflectorPanels panels;
  std::vector<double> band;  // full n x n band matrix, both triangles
  long b;
};

Reduced run_dbbr(HostBackend& be, const std::vector<double>& a, const EngineLayout& L,
                 const Shape& s) {
  const int me = world_rank();
  std::vector<double> mine = columns_of(a, L, me);
  Reduced r;
  r.b = effective_bandwidth(s.n, s.b);
  r.panels = reduce_to_band(be, L, me, mine.data(), DbbrOptions{s.b, s.k, true});
  DeviceBuffer ab = gather_band(be, L, me, mine.data(), r.b);
  const long n = s.n, ldab = r.b + 1;
  r.band.assign(n * n, 0.0);
  for (long j = 0; j < n; ++j)
    for (long i = j; i <= std::min(n - 1, j + r.b); ++i)
      r.band[i + j * n] = r.band[j + i * n] = ab.get()[(i - j) + j * ldab];
  return r;
}

class EngineStages : public testing::TestWithParam<int> {  // 0: planned layout, 1: skewed
 protected:
  EngineLayout layout(const Shape& s) const {
    return GetParam() == 0 ? plan_engine_layout(s.n, world_size(), s.b)
                           : skewed_layout(s.n, world_size(), s.b);
  }
};

TEST_P(EngineStages, DbbrIsAnOrthogonalReductionToBand) {
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const std::vector<double> a = random_matrix(s.n, 7);
    const Reduced r = run_dbbr(be, a, layout(s), s);
    EXPECT_EQ(r.panels.panels.size(), static_cast<size_t>(std::max(0L, (s.n - 2) / r.b)));
    const std::vector<double> q = panel_by_panel(be, r.panels);
    EXPECT_LT(test::orthogonality(static_cast<int>(s.n), q), 10.0);
    // Q^T A Q equals the band DBBR left (so it is banded with bandwidth b: zero outside).
    std::vector<double> c = congruence(be, s.n, a, q);
    for (long i = 0; i < s.n * s.n; ++i) c[i] -= r.band[i];
    EXPECT_LT(frobenius(c) / (frobenius(a) * s.n * DBL_EPSILON), 10.0);
  }
}

TEST_P(EngineStages, SbrBackWithMergedBlocksEqualsPanelByPanel) {
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    Reduced r = run_dbbr(be, random_matrix(s.n, 11), layout(s), s);
    const std::vector<double> q = panel_by_panel(be, r.panels);
    for (long merge : {r.b, 3 * r.b, s.k, s.n}) {
      const auto blocks = merge_reflector_panels(be, r.panels, merge);
      for (auto [r0, r1] :
           {std::pair<long, long>{0, s.n}, {s.n / 3, s.n / 3 + 5}, {s.n - 1, s.n}}) {
        const long h = r1 - r0;
        std::vector<double> x(h * s.n, 0.0);
        for (long i = 0; i < h; ++i) x[i + (r0 + i) * h] = 1;
        apply_sbr_back(be, blocks, h, x.data(), h);
        double diff = 0;
        for (long j = 0; j < s.n; ++j)
          for (long i = 0; i < h; ++i)
            diff = std::max(diff, std::fabs(x[i + j * h] - q[r0 + i + j * s.n]));
        EXPECT_LT(diff, 1e-13) << "merge width " << merge << " rows " << r0 << ".." << r1;
      }
    }
  }
}

TEST_P(EngineStages, BackTransformationsReconstructTheTridiagonal) {
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const std::vector<double> a = random_matrix(s.n, 13);
    const EngineLayout L = layout(s);
    Reduced r = run_dbbr(be, a, L, s);
    const long n = s.n, ldab = r.b + 1;
    std::vector<double> ab(n * ldab, 0.0), d(n), e(n);
    for (long j = 0; j < n; ++j)
      for (long i = j; i <= std::min(n - 1, j + r.b); ++i)
        ab[(i - j) + j * ldab] = r.band[i + j * n];
    ReflectorStore u;
    be.bulge_chase(n, r.b, ab.data(), ldab, d.data(), e.data(), u);
    {  // T has the band matrix's eigenvalues
      std::vector<double> dt(d), et(e);
      ASSERT_EQ(tridiagonal_eigenvalues(n, dt.data(), et.data()), 0);
      dt.resize(n);
      EXPECT_LT(
          test::eigenvalue_difference(dt, test::lapack_eigenvalues(static_cast<int>(n), r.band)),
          1e-13);
    }
    // This rank's rows of Q_sb = I Q_s Q_b, then the whole Q_sb on every rank.
    const int me = world_rank();
    const long h = L.height(me), ldx = std::max(1L, h);
    std::vector<double> x(ldx * n, 0.0);
    for (long i = 0; i < h; ++i) x[i + (L.row_begin[me] + i) * ldx] = 1;
    apply_sbr_back(be, merge_reflector_panels(be, r.panels, s.k), h, x.data(), ldx);
    if (h > 0) be.bc_back(u, h, x.data(), ldx);
    std::vector<double> q(n * n);
    for (int p = 0; p < world_size(); ++p) {
      const long hp = L.height(p), ldp = std::max(1L, hp);
      std::vector<double> blk = p == me ? x : std::vector<double>(ldp * n);
      MPI_Bcast(blk.data(), static_cast<int>(ldp * n), MPI_DOUBLE, p, MPI_COMM_WORLD);
      for (long j = 0; j < n; ++j)
        for (long i = 0; i < hp; ++i) q[L.row_begin[p] + i + j * n] = blk[i + j * ldp];
    }
    EXPECT_LT(test::orthogonality(static_cast<int>(n), q), 20.0);
    std::vector<double> c = congruence(be, n, a, q);
    for (long i = 0; i < n; ++i) {
      c[i + i * n] -= d[i];
      if (i + 1 < n) c[i + 1 + i * n] -= e[i], c[i + (i + 1) * n] -= e[i];
    }
    EXPECT_LT(frobenius(c) / (frobenius(a) * n * DBL_EPSILON), 20.0);
  }
}

// Runs the engine on the full matrix a and gathers Z on every rank.
struct EngineResult {
  int info;
  std::vector<double> w, z;
};

EngineResult run_whole_engine(const std::vector<double>& a, const EngineLayout& L,
                              const EngineOptions& opt) {
  HostBackend be;
  const int me = world_rank();
  const long n = L.n, h = L.height(me), ldz = std::max(1L, h);
  const std::vector<double> mine = columns_of(a, L, me);
  EngineResult r;
  r.w.assign(std::max(1L, n), 0.0);
  std::vector<double> zr(ldz * n, 0.0);
  r.info = run_engine(be, MPI_COMM_WORLD, L, mine.data(), r.w.data(), zr.data(), opt, nullptr);
  r.w.resize(n);
  r.z.assign(n * n, 0.0);
  for (int p = 0; p < world_size() && opt.want_vectors; ++p) {
    const long hp = L.height(p), ldp = std::max(1L, hp);
    std::vector<double> blk = p == me ? zr : std::vector<double>(ldp * n);
    MPI_Bcast(blk.data(), static_cast<int>(ldp * n), MPI_DOUBLE, p, MPI_COMM_WORLD);
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < hp; ++i) r.z[L.row_begin[p] + i + j * n] = blk[i + j * ldp];
  }
  return r;
}

void expect_eigendecomposition(const std::vector<double>& a, long n, const EngineResult& r) {
  ASSERT_EQ(r.info, 0);
  const std::vector<double> ref = test::lapack_eigenvalues(static_cast<int>(n), a);
  EXPECT_LT(test::eigenvalue_difference(r.w, ref), 1e-12);
  EXPECT_LT(test::residual(static_cast<int>(n), a, r.z, r.w), test::kScalapackThreshold);
  EXPECT_LT(test::orthogonality(static_cast<int>(n), r.z), test::kScalapackThreshold);
}

TEST_P(EngineStages, WholeEngineMatchesLapack) {
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const std::vector<double> a = random_matrix(s.n, 17);
    for (bool threaded : {true, false})
      for (bool overlap : {false, true}) {  // SBR-back after or next to bulge chasing
        EngineOptions opt;
        opt.b = s.b;
        opt.k = s.k;
        opt.dc_in_thread = threaded;
        opt.overlap_sbr_back = overlap;
        expect_eigendecomposition(a, s.n, run_whole_engine(a, layout(s), opt));
      }
    EngineOptions values_only;
    values_only.b = s.b;
    values_only.k = s.k;
    values_only.want_vectors = false;
    const EngineResult r = run_whole_engine(a, layout(s), values_only);
    EXPECT_EQ(r.info, 0);
    EXPECT_LT(test::eigenvalue_difference(r.w, test::lapack_eigenvalues(static_cast<int>(s.n), a)),
              1e-12);
  }
}

TEST_P(EngineStages, SmallAndSpecialMatrices) {
  for (long n : {1L, 2L, 3L, 4L, 5L, 33L}) {
    for (int kind = 0; kind < 3; ++kind) {  // random, zero, identity
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      std::vector<double> a = random_matrix(n, 19);
      if (kind > 0)
        for (long i = 0; i < n * n; ++i) a[i] = (kind == 2 && i % (n + 1) == 0) ? 1.0 : 0.0;
      EngineOptions opt;
      opt.b = 2;
      opt.k = 4;
      const Shape s{n, opt.b, opt.k};
      expect_eigendecomposition(a, n, run_whole_engine(a, layout(s), opt));
    }
  }
}

TEST_P(EngineStages, SpectraOfTheTableAndDegenerateEigenvalues) {
  const long n = 90;
  EngineOptions opt;
  opt.b = 8;
  opt.k = 32;
  std::vector<std::vector<double>> spectra;
  for (test::Spectrum sp : test::kAllSpectra) spectra.push_back(test::eigenvalues_of(sp, n, 3));
  std::vector<double> degenerate(n);
  for (long i = 0; i < n; ++i) degenerate[i] = static_cast<double>(i % 3) - 1.0;  // -1, 0, 1 x 30
  spectra.push_back(degenerate);
  for (size_t s = 0; s < spectra.size(); ++s) {
    SCOPED_TRACE(s < 6 ? test::to_string(test::kAllSpectra[s]) : "degenerate");
    const std::vector<double> a = test::matrix_with_eigenvalues(spectra[s], 5);
    expect_eigendecomposition(a, n, run_whole_engine(a, layout(Shape{n, opt.b, opt.k}), opt));
  }
}

// Stage 3 by tridiagonal_dc (small leaves and panels so that n = 37..101 runs merges), in the
// thread and not, started after SBR-back or before it, and on the table's spectra.
TEST_P(EngineStages, WholeEngineWithDcMatchesLapack) {
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const std::vector<double> a = random_matrix(s.n, 23);
    for (int variant = 0; variant < 3; ++variant) {
      EngineOptions opt;
      opt.b = s.b;
      opt.k = s.k;
      opt.dc_in_thread = variant != 1;
      opt.dc_at_sbr_back = variant == 2;
      opt.tridiagonal = TridiagonalSolver::Dc;
      opt.dc.leaf = 8;
      opt.dc.panel = 16;
      opt.dc.threads = 2;
      expect_eigendecomposition(a, s.n, run_whole_engine(a, layout(s), opt));
    }
  }
  for (test::Spectrum sp : test::kAllSpectra) {
    SCOPED_TRACE(test::to_string(sp));
    const long n = 90;
    EngineOptions opt;
    opt.b = 8;
    opt.k = 32;
    opt.tridiagonal = TridiagonalSolver::Dc;
    opt.dc.leaf = 12;
    const std::vector<double> a = test::matrix_with_eigenvalues(test::eigenvalues_of(sp, n, 3), 5);
    expect_eigendecomposition(a, n, run_whole_engine(a, layout(Shape{n, opt.b, opt.k}), opt));
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, EngineStages, testing::Values(0, 1));

TEST(EnginePlan, ColumnsAreMultiplesOfBAndRowsCoverN) {
  for (int ranks = 1; ranks <= 8; ++ranks)
    for (long n : {1L, 7L, 100L, 1000L, 5000L}) {
      const EngineLayout L = plan_engine_layout(n, ranks, 32);
      const long bw = effective_bandwidth(n, 32);
      ASSERT_EQ(L.engine_ranks(), ranks);
      EXPECT_EQ(L.col_begin.back(), n);
      EXPECT_EQ(L.row_begin.back(), n);
      for (int e = 0; e < ranks; ++e) {
        EXPECT_GE(L.width(e), 0);
        EXPECT_GE(L.height(e), 0);
        EXPECT_TRUE(L.col_begin[e] % bw == 0 || L.col_begin[e] == n);
      }
    }
}

// Engine rank 0 runs the D&C next to its back transformation: it takes the fewest rows the slack
// allows, the others equal shares; every height within the slack of n / E, summing to n.
TEST(EnginePlan, RankZeroTakesFewerRowsWithinTheSlack) {
  for (int ranks : {1, 2, 3, 4, 8})
    for (long n : {1L, 7L, 1000L, 8192L, 32768L}) {
      SCOPED_TRACE("ranks=" + std::to_string(ranks) + " n=" + std::to_string(n));
      const EngineLayout L = plan_engine_layout(n, ranks, 32, 0.05);
      long sum = 0;
      for (int e = 0; e < ranks; ++e) {
        sum += L.height(e);
        EXPECT_LE(L.height(e), static_cast<long>(1.05 * n / ranks) + 1);
        EXPECT_GE(L.height(e), static_cast<long>(0.95 * n / ranks) - 1);
        if (e > 0) EXPECT_LE(L.height(0), L.height(e));
        if (e > 1) EXPECT_LE(std::abs(L.height(e) - L.height(1)), 1);
      }
      EXPECT_EQ(sum, n);
      if (ranks > 1 && n >= 1000) EXPECT_LT(L.height(0), L.height(ranks - 1));
    }
  // Slack 0, the default: equal shares (BC-back's waves of rows, core/engine_plan.hpp).
  const EngineLayout even = plan_engine_layout(1000, 4, 32, 0.0);
  for (int e = 0; e < 4; ++e) EXPECT_EQ(even.height(e), 250);
  const EngineLayout by_default = plan_engine_layout(32768, 2, 32);
  for (int e = 0; e < 2; ++e) EXPECT_EQ(by_default.height(e), 16384);
}

// With BC-back's wave (rows at once on the device): no rank needs more waves than the equal
// share, the others take up to (1 + slack) n / E, or their waves in full where that takes a wave
// off rank 0 (the D&C's), which takes the rest.
TEST(EnginePlan, HeightsFollowBcBackWaves) {
  // 2 H200s (16896 rows a wave): one wave each at 32768 with 8 SMs' blocks left to rank 0's D&C;
  // at 49152 rank 1 fills its two waves and rank 0 keeps one.
  EXPECT_EQ(back_transformation_heights(32768, 2, 0.05, 16896), (std::vector<long>{15872, 16896}));
  EXPECT_EQ(back_transformation_heights(49152, 2, 0.05, 16896), (std::vector<long>{15360, 33792}));
  // 3 ranks at 49152 (share 16384, one wave): the others cannot take rank 0's whole wave
  // without a second one, so the slack decides.
  EXPECT_EQ(back_transformation_heights(49152, 3, 0.05, 16896),
            (std::vector<long>{15360, 16896, 16896}));
  // Within one wave the slack decides: rank 0 keeps its share of SBR-back and the final GEMM.
  EXPECT_EQ(back_transformation_heights(16384, 2, 0.05, 16896), (std::vector<long>{7783, 8601}));
  EXPECT_EQ(back_transformation_heights(16896, 2, 0.05, 16896), (std::vector<long>{8026, 8870}));
  EXPECT_EQ(back_transformation_heights(30000, 3, 0.05, 16896),
            (std::vector<long>{9000, 10500, 10500}));
  for (int ranks = 2; ranks <= 8; ++ranks)
    for (long n : {7L, 1000L, 33791L, 40000L, 98304L})
      for (long wave : {100L, 16896L}) {
        SCOPED_TRACE("ranks=" + std::to_string(ranks) + " n=" + std::to_string(n) +
                     " wave=" + std::to_string(wave));
        const std::vector<long> h = back_transformation_heights(n, ranks, 0.05, wave);
        const long share = (n + ranks - 1) / ranks, waves = (share + wave - 1) / wave;
        long sum = 0;
        for (int e = 0; e < ranks; ++e) {
          sum += h[e];
          EXPECT_GE(h[e], 0);
          EXPECT_LE((h[e] + wave - 1) / wave, waves) << "rank " << e << " runs an extra wave";
          if (e > 0) EXPECT_EQ(h[e], h[1]);
          if (e > 0 && n >= 1000) EXPECT_LE(h[0], h[e]);
        }
        EXPECT_EQ(sum, n);
        // Past the slack only where rank 0 then runs fewer waves than with the slack's heights.
        const long slack_each = std::max(std::min<long>(1.05 * n / ranks, waves * wave),
                                         std::min(share, n / (ranks - 1)));
        if (n >= 1000 && h[1] > slack_each) {
          const long r0_slack = n - (ranks - 1) * slack_each;
          EXPECT_LT((h[0] + wave - 1) / wave, (r0_slack + wave - 1) / wave);
          EXPECT_GE(waves, 2);
          EXPECT_GT(h[0], 0);
        }
      }
}

}  // namespace
}  // namespace pipevd
