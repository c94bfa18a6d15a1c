// The engine's stages, one test body per check over the backends (a Host/ and a Gpu/ instance),
// each against LAPACK: DBBR (Q_s orthogonal, Q_s^T A Q_s equal to the band it leaves), SBR-back
// (merged W blocks on any row block equal the panel-by-panel product), bulge chasing + both back
// transformations (Q_sb^T A Q_sb = T), and the whole engine (residual, orthogonality, eigenvalues
// vs dsyevd; other stage orders of the same arithmetic give the same eigenvalues bitwise, the
// D&C's top merge folded into the final GEMM too, and SBR-back's right order forced, whose Z is
// bitwise the default's where no rank holds every row; DBBR on the layout's columns instead of its
// cyclic outer blocks the same eigenvalues to rounding), for b
// in {2, 4, 8, 32}, k in {b, 4b}, n not a multiple of b or k, balanced and skewed layouts. DBBR,
// SBR-back and the engine run twice must give the same bits (a moving result is a race).
//
// The host backend is the oracle and runs on every rank count. The GPU backend runs on one GPU
// (one rank), also at larger n (up to 2000 at the engine's default b and k), and must equal the
// host backend's band, Q_s, BC-back and eigenvalues to rounding. Where no CUDA device is visible
// its tests are skipped (failed with PIPEVD_REQUIRE_GPU=1).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/backend_factory.hpp"
#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/reflector_store.hpp"
#include "core/sbr_back.hpp"
#include "core/timeline.hpp"
#include "core/tridiagonal_solver.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/gpu_instance.hpp"
#include "tests/support/reduction_shape.hpp"
#include "tests/support/spectra.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::bitwise_equal;
using test::max_abs_diff;
using test::world_rank;
using test::world_size;

enum class Backend { Host, Gpu };
enum class Layout { Planned, Skewed };

using Shape = test::ReductionShape;
using test::name;

// Every b of the issue, k = b and 4b, n a multiple of neither. The GPU also runs the larger n its
// own tests ran: more panels, outer blocks and BC-back rows than the small shapes give its kernels
// (too slow for the host instance on every rank count).
std::vector<Shape> test_shapes(Backend backend) {
  std::vector<Shape> v;
  for (long b : {2L, 4L, 8L, 32L})
    for (long k : {b, 4 * b})
      for (long n : {37L, 101L}) v.push_back({n, b, k});
  v.push_back({77, 4, 12});  // three panels per outer block: an uneven recursive panel update
  if (backend == Backend::Gpu)
    for (Shape s : {Shape{2, 32, 32}, Shape{33, 8, 8}, Shape{100, 8, 32}, Shape{257, 32, 32},
                    Shape{513, 32, 128}, Shape{777, 16, 64}, Shape{2000, 32, 1024}})
      v.push_back(s);
  return v;
}

Mat random_matrix(long n, unsigned seed) {
  Mat a(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) a[i + j * n] = test::random_symmetric_entry(i, j, seed);
  return a;
}

// kind 0: random_matrix(n, seed); 1: the zero matrix; 2: the identity.
Mat special_matrix(long n, int kind, unsigned seed) {
  Mat a = random_matrix(n, seed);
  if (kind > 0)
    for (long i = 0; i < n * n; ++i) a[i] = (kind == 2 && i % (n + 1) == 0) ? 1.0 : 0.0;
  return a;
}

// The eigenvalues of the table's spectra at n, then degenerate ones (-1, 0, 1, each n / 3 times),
// with their names.
struct NamedSpectrum {
  std::string name;
  Mat lambda;
};
std::vector<NamedSpectrum> table_and_degenerate_spectra(long n) {
  std::vector<NamedSpectrum> spectra;
  for (test::Spectrum sp : test::kAllSpectra)
    spectra.push_back({test::to_string(sp), test::eigenvalues_of(sp, n, 3)});
  Mat degenerate(n);
  for (long i = 0; i < n; ++i) degenerate[i] = static_cast<double>(i % 3) - 1.0;
  spectra.push_back({"degenerate", degenerate});
  return spectra;
}

Mat columns_of(const Mat& a, const EngineLayout& L, int e) {
  return Mat(a.begin() + L.col_begin[e] * L.n, a.begin() + L.col_begin[e + 1] * L.n);
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

double frobenius(const Mat& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

Mat to_host(EngineBackend& be, const double* p, long count) {
  Mat v(std::max(0L, count));
  if (count > 0) be.copy_to_host(p, v.data(), count);
  return v;
}

// C = Q^T A Q for n x n matrices, on the host.
Mat congruence(long n, const Mat& a, const Mat& q) {
  HostBackend host;
  Mat t(n * n), c(n * n);
  host.gemm('N', 'N', n, n, n, 1.0, a.data(), n, q.data(), n, 0.0, t.data(), n);
  host.gemm('T', 'N', n, n, n, 1.0, q.data(), n, t.data(), n, 0.0, c.data(), n);
  return c;
}

// Q_s = I Q_0 Q_1 ..., one panel at a time (no merging), on the host from the panels read back:
// the reference for SBR-back.
Mat panel_by_panel(EngineBackend& be, const ReflectorPanels& p) {
  HostBackend host;
  const long n = p.n;
  Mat q(n * n, 0.0), t(n * std::max(1L, p.b));
  for (long i = 0; i < n; ++i) q[i + i * n] = 1;
  for (const auto& pan : p.panels) {
    const Mat w = to_host(be, pan.w.get(), pan.m * pan.width);
    const Mat y = to_host(be, pan.y.get(), pan.m * pan.width);
    host.gemm('N', 'N', n, pan.width, pan.m, 1.0, q.data() + pan.row0 * n, n, w.data(), pan.m, 0.0,
              t.data(), n);
    host.gemm('N', 'T', n, pan.m, pan.width, -1.0, t.data(), n, y.data(), pan.m, 1.0,
              q.data() + pan.row0 * n, n);
  }
  return q;
}

// The full n x n matrix on every rank from each rank's rows of it (ld max(1, height)).
Mat gather_rows(const EngineLayout& L, const Mat& mine) {
  const long n = L.n;
  const int me = world_rank();
  Mat full(n * n, 0.0);
  for (int p = 0; p < world_size(); ++p) {
    const long hp = L.height(p), ldp = std::max(1L, hp);
    Mat blk = p == me ? mine : Mat(ldp * n);
    MPI_Bcast(blk.data(), static_cast<int>(ldp * n), MPI_DOUBLE, p, MPI_COMM_WORLD);
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < hp; ++i) full[L.row_begin[p] + i + j * n] = blk[i + j * ldp];
  }
  return full;
}

// Rows [r0, r0 + h) of the n x n identity in the backend's memory, ld max(1, h).
DeviceBuffer identity_rows(EngineBackend& be, long n, long r0, long h) {
  const long ld = std::max(1L, h);
  DeviceBuffer x(be, ld * n);  // zero-filled
  if (h > 0) be.fill_matrix(h, h, 0.0, 1.0, x.get() + r0 * ld, ld);
  return x;
}

// Rows [r0, r0 + h) of I Q_s by SBR-back on the backend, read back (ld max(1, h)).
Mat sbr_back_rows(EngineBackend& be, const std::vector<MergedReflectorBlock>& blocks, long n,
                  long r0, long h) {
  DeviceBuffer x = identity_rows(be, n, r0, h);
  apply_sbr_back(be, blocks, h, x.get(), std::max(1L, h));
  return to_host(be, x.get(), std::max(1L, h) * n);
}

// DBBR on this rank's columns of a, uploaded to the backend.
struct Reduced {
  long b = 0;              // the bandwidth DBBR used
  ReflectorPanels panels;  // Q_s's panels, in the backend's memory
  DeviceBuffer ab;         // the band in lower band storage (ldab = b + 1), on every rank
  Mat ab_host;             // ab read back
  Mat band;                // the full n x n band matrix, both triangles
};

Reduced run_dbbr(EngineBackend& be, const Mat& a, const EngineLayout& L, const Shape& s) {
  const int me = world_rank();
  const Mat mine = columns_of(a, L, me);
  const long count = static_cast<long>(mine.size());
  DeviceBuffer da(be, count);
  if (count > 0) be.copy_to_device(mine.data(), da.get(), count);
  Reduced r;
  r.b = effective_bandwidth(s.n, s.b);
  const DbbrOptions opt{s.b, s.k, true};
  r.panels = reduce_to_band(be, L, me, da.get(), opt);
  r.ab = gather_band(be, L, me, da.get(), opt);
  const long n = s.n, ldab = r.b + 1;
  r.ab_host = to_host(be, r.ab.get(), n * ldab);
  r.band.assign(n * n, 0.0);
  for (long j = 0; j < n; ++j)
    for (long i = j; i <= std::min(n - 1, j + r.b); ++i)
      r.band[i + j * n] = r.band[j + i * n] = r.ab_host[(i - j) + j * ldab];
  return r;
}

// The engine on the full matrix a, Z gathered on every rank.
struct EngineResult {
  int info = 0;
  Mat w, z;
};

EngineResult run_whole_engine(EngineBackend& be, const Mat& a, const EngineLayout& L,
                              const EngineOptions& opt, EngineStats* stats = nullptr) {
  const int me = world_rank();
  const long n = L.n, ldz = std::max(1L, L.height(me));
  const Mat mine = columns_of(a, L, me);
  EngineResult r;
  r.w.assign(std::max(1L, n), 0.0);
  Mat zr(ldz * n, 0.0);
  r.info = run_engine(be, MPI_COMM_WORLD, L, mine.data(), r.w.data(), zr.data(), opt, stats);
  r.w.resize(n);
  if (opt.want_vectors) r.z = gather_rows(L, zr);
  return r;
}

void expect_eigendecomposition(const Mat& a, long n, const EngineResult& r) {
  ASSERT_EQ(r.info, 0);
  const Mat ref = test::lapack_eigenvalues(static_cast<int>(n), a);
  EXPECT_LT(test::eigenvalue_difference(r.w, ref), 1e-12);
  EXPECT_LT(test::residual(static_cast<int>(n), a, r.z, r.w), test::kScalapackThreshold);
  EXPECT_LT(test::orthogonality(static_cast<int>(n), r.z), test::kScalapackThreshold);
}

// Whether some engine rank of L holds every row (SBR-back's left order runs there).
bool holds_every_row(const EngineLayout& L) {
  for (int e = 0; e < L.engine_ranks(); ++e)
    if (L.height(e) == L.n) return true;
  return false;
}

// Another order of the same arithmetic (a stage in a thread, on a companion, earlier or later):
// the same T, so the same eigenvalues bitwise, and Z to rounding (a race shows far beyond it).
void expect_same_arithmetic(const EngineResult& r, const EngineResult& ref) {
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(bitwise_equal(r.w, ref.w)) << "eigenvalues";
  EXPECT_LT(max_abs_diff(r.z, ref.z), 1e-10) << "Z";
}

// The engine's options with DBBR's bandwidth b and outer block k.
EngineOptions reduction_options(long b, long k) {
  EngineOptions opt;
  opt.b = b;
  opt.k = k;
  return opt;
}

// Stage 3 by tridiagonal_dc, its leaves and panels small enough that every n of s runs merges.
EngineOptions dc_options(const Shape& s) {
  EngineOptions opt = reduction_options(s.b, s.k);
  opt.tridiagonal = TridiagonalSolver::Dc;
  opt.dc.leaf = s.n < 300 ? 8 : 48;
  opt.dc.panel = s.n < 300 ? 16 : 300;
  opt.dc.threads = 2;
  return opt;
}

class EngineStages : public testing::TestWithParam<std::tuple<Backend, Layout>> {
 protected:
  void SetUp() override {
    if (kind() == Backend::Gpu) test::skip_gpu_instance_without_device();
  }
  Backend kind() const { return std::get<0>(GetParam()); }
  // The host backend is the oracle: checked against itself, a comparison could not fail.
  bool is_oracle() const { return kind() == Backend::Host; }
  // The GPU backend on device 0 with the route's default settings: its instance runs on 1 rank.
  std::unique_ptr<EngineBackend> make_backend() const {
    return kind() == Backend::Host ? make_host_backend()
                                   : make_gpu_backend(0, GpuBackendSettings{});
  }
  std::unique_ptr<EngineBackend> bound_backend() const {
    std::unique_ptr<EngineBackend> be = make_backend();
    be->bind(MPI_COMM_WORLD);
    return be;
  }
  EngineResult engine(const Mat& a, const EngineLayout& L, const EngineOptions& opt,
                      EngineStats* stats = nullptr) const {
    const std::unique_ptr<EngineBackend> be = make_backend();
    return run_whole_engine(*be, a, L, opt, stats);
  }
  EngineLayout layout(const Shape& s) const {
    return std::get<1>(GetParam()) == Layout::Planned ? plan_engine_layout(s.n, world_size(), s.b)
                                                      : skewed_layout(s.n, world_size(), s.b);
  }
  std::vector<Shape> shapes() const { return test_shapes(kind()); }
};

TEST_P(EngineStages, DbbrIsAnOrthogonalReductionToBand) {
  const std::unique_ptr<EngineBackend> be = bound_backend();
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const Mat a = random_matrix(s.n, 7);
    const EngineLayout L = layout(s);
    const Reduced r = run_dbbr(*be, a, L, s);
    EXPECT_EQ(r.panels.panels.size(), static_cast<size_t>(std::max(0L, (s.n - 2) / r.b)));
    const Mat q = panel_by_panel(*be, r.panels);
    EXPECT_LT(test::orthogonality(static_cast<int>(s.n), q), 10.0);
    // Q^T A Q equals the band DBBR left (so it is banded with bandwidth b: zero outside).
    Mat c = congruence(s.n, a, q);
    for (long i = 0; i < s.n * s.n; ++i) c[i] -= r.band[i];
    EXPECT_LT(frobenius(c) / (frobenius(a) * s.n * DBL_EPSILON), 10.0);
    const Reduced again = run_dbbr(*be, a, L, s);
    EXPECT_TRUE(bitwise_equal(again.ab_host, r.ab_host)) << "band";
    EXPECT_TRUE(bitwise_equal(panel_by_panel(*be, again.panels), q)) << "Q_s";
    if (is_oracle()) continue;
    HostBackend host;
    host.bind(MPI_COMM_WORLD);
    const Reduced h = run_dbbr(host, a, L, s);
    Mat diff = r.ab_host;
    for (size_t i = 0; i < diff.size(); ++i) diff[i] -= h.ab_host[i];
    const double tol = 100 * s.n * DBL_EPSILON;
    EXPECT_LT(frobenius(diff) / frobenius(a), tol) << "band against the host's";
    EXPECT_LT(max_abs_diff(q, panel_by_panel(host, h.panels)), tol) << "Q_s against the host's";
  }
}

TEST_P(EngineStages, SbrBackWithMergedBlocksEqualsPanelByPanel) {
  const std::unique_ptr<EngineBackend> be = bound_backend();
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const long n = s.n;
    Reduced r = run_dbbr(*be, random_matrix(n, 11), layout(s), s);
    const Mat q = panel_by_panel(*be, r.panels);
    const double tol = std::max(1e-13, 1e-15 * n);
    for (long merge : {r.b, 3 * r.b, s.k, n}) {
      const auto blocks = merge_reflector_panels(*be, r.panels, merge);
      for (auto [r0, r1] :
           {std::pair<long, long>{0, n}, {n / 3, std::min(n, n / 3 + 5)}, {n - 1, n}}) {
        const long h = r1 - r0;
        const Mat x = sbr_back_rows(*be, blocks, n, r0, h);
        double diff = 0;
        for (long j = 0; j < n; ++j)
          for (long i = 0; i < h; ++i)
            diff = std::max(diff, std::fabs(x[i + j * h] - q[r0 + i + j * n]));
        EXPECT_LT(diff, tol) << "merge width " << merge << " rows " << r0 << ".." << r1;
      }
      if (merge == s.k)
        EXPECT_TRUE(
            bitwise_equal(sbr_back_rows(*be, blocks, n, 0, n), sbr_back_rows(*be, blocks, n, 0, n)))
            << "Q_s run twice";
    }
  }
}

TEST_P(EngineStages, BackTransformationsReconstructTheTridiagonal) {
  const std::unique_ptr<EngineBackend> be = bound_backend();
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const Mat a = random_matrix(s.n, 13);
    const EngineLayout L = layout(s);
    Reduced r = run_dbbr(*be, a, L, s);
    const long n = s.n;
    Mat d(n), e(n);
    ReflectorStore u;
    be->bulge_chase(n, r.b, r.ab.get(), r.b + 1, d.data(), e.data(), u);
    {  // T has the band matrix's eigenvalues
      Mat dt(d), et(e);
      ASSERT_EQ(tridiagonal_eigenvalues(n, dt.data(), et.data()), 0);
      dt.resize(n);
      EXPECT_LT(
          test::eigenvalue_difference(dt, test::lapack_eigenvalues(static_cast<int>(n), r.band)),
          std::max(1e-13, 1e-15 * n));
    }
    // This rank's rows of Q_sb = I Q_s Q_b, then the whole Q_sb on every rank.
    const int me = world_rank();
    const long h = L.height(me), ldx = std::max(1L, h);
    DeviceBuffer x = identity_rows(*be, n, L.row_begin[me], h);
    apply_sbr_back(*be, merge_reflector_panels(*be, r.panels, s.k), h, x.get(), ldx);
    const Mat qs_rows = to_host(*be, x.get(), ldx * n);
    if (h > 0) be->bc_back(u, h, x.get(), ldx);
    const Mat rows = to_host(*be, x.get(), ldx * n);
    if (!is_oracle() && h > 0) {  // BC-back as the host's with the same reflectors
      Mat want = qs_rows;
      HostBackend().bc_back(u, h, want.data(), ldx);
      EXPECT_LT(max_abs_diff(rows, want), 8e-15 * n) << "BC-back against the host's";
    }
    const Mat q = gather_rows(L, rows);
    EXPECT_LT(test::orthogonality(static_cast<int>(n), q), 20.0);
    Mat c = congruence(n, a, q);
    for (long i = 0; i < n; ++i) {
      c[i + i * n] -= d[i];
      if (i + 1 < n) c[i + 1 + i * n] -= e[i], c[i + (i + 1) * n] -= e[i];
    }
    EXPECT_LT(frobenius(c) / (frobenius(a) * n * DBL_EPSILON), 20.0);
  }
}

TEST_P(EngineStages, WholeEngineMatchesLapack) {
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const Mat a = random_matrix(s.n, 17);
    const EngineLayout L = layout(s);
    const EngineOptions opt = reduction_options(s.b, s.k);
    const EngineResult first = engine(a, L, opt), again = engine(a, L, opt);
    expect_eigendecomposition(a, s.n, first);
    EXPECT_TRUE(bitwise_equal(again.w, first.w) && bitwise_equal(again.z, first.z)) << "run twice";
    // The D&C in the caller's thread, SBR-back next to bulge chasing, the D&C before SBR-back.
    for (auto [threaded, overlap, dc_early] :
         {std::tuple{true, true, false}, std::tuple{false, false, false},
          std::tuple{false, true, false}, std::tuple{true, false, true}}) {
      SCOPED_TRACE("dc_in_thread=" + std::to_string(threaded) + " overlap_sbr_back=" +
                   std::to_string(overlap) + " dc_at_sbr_back=" + std::to_string(dc_early));
      EngineOptions v = opt;
      v.dc_in_thread = threaded;
      v.overlap_sbr_back = overlap;
      v.dc_at_sbr_back = dc_early;
      const EngineResult r = engine(a, L, v);
      expect_eigendecomposition(a, s.n, r);
      expect_same_arithmetic(r, first);
    }
    {  // SBR-back from the right on every rank: the same T, and Q_s to rounding where a rank
       // holds every row (there auto forms it from the left), bitwise where none does
      SCOPED_TRACE("SBR-back's right order forced");
      EngineOptions right = opt;
      right.sbr_back_order = SbrBackOrder::Right;
      const EngineResult r = engine(a, L, right);
      expect_same_arithmetic(r, first);
      if (!holds_every_row(L)) EXPECT_TRUE(bitwise_equal(r.z, first.z)) << "Z on part of the rows";
    }
    {  // DBBR's outer blocks dealt out cyclically, not the layout's columns: other sums, the same
       // spectrum
      SCOPED_TRACE("DBBR's columns cyclic");
      EngineOptions cyclic = opt;
      cyclic.dbbr_cyclic_blocks = true;
      const EngineResult r = engine(a, L, cyclic);
      expect_eigendecomposition(a, s.n, r);
      EXPECT_LT(test::eigenvalue_difference(r.w, first.w), 1e-12) << "against blockwise";
    }
    EngineOptions values_only = opt;
    values_only.want_vectors = false;
    const EngineResult values = engine(a, L, values_only);
    EXPECT_EQ(values.info, 0);
    EXPECT_LT(
        test::eigenvalue_difference(values.w, test::lapack_eigenvalues(static_cast<int>(s.n), a)),
        1e-12);
    EXPECT_TRUE(bitwise_equal(engine(a, L, values_only).w, values.w)) << "JOBZ=N run twice";
    if (is_oracle()) continue;
    HostBackend host;
    const EngineResult h = run_whole_engine(host, a, L, opt);
    ASSERT_EQ(h.info, 0);
    EXPECT_LT(test::eigenvalue_difference(first.w, h.w), 1e-12) << "against the host engine";
    EXPECT_LT(test::eigenvalue_difference(values.w, h.w), 1e-12) << "JOBZ=N against the host";
  }
}

TEST_P(EngineStages, SmallAndSpecialMatrices) {
  for (long n : {1L, 2L, 3L, 4L, 5L, 33L}) {
    for (int kind = 0; kind < 3; ++kind) {  // random, zero, identity
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      const Mat a = special_matrix(n, kind, 19);
      EngineOptions opt = reduction_options(2, 4);
      const EngineLayout L = layout(Shape{n, opt.b, opt.k});
      expect_eigendecomposition(a, n, engine(a, L, opt));
      opt.want_vectors = false;
      const EngineResult values = engine(a, L, opt);
      EXPECT_EQ(values.info, 0);
      EXPECT_LT(
          test::eigenvalue_difference(values.w, test::lapack_eigenvalues(static_cast<int>(n), a)),
          1e-12)
          << "JOBZ=N";
    }
  }
}

TEST_P(EngineStages, SpectraOfTheTableAndDegenerateEigenvalues) {
  const long n = 90;
  const EngineOptions opt = reduction_options(8, 32);
  for (const NamedSpectrum& sp : table_and_degenerate_spectra(n)) {
    SCOPED_TRACE(sp.name);
    const Mat a = test::matrix_with_eigenvalues(sp.lambda, 5);
    expect_eigendecomposition(a, n, engine(a, layout(Shape{n, opt.b, opt.k}), opt));
  }
}

// Stage 3 by tridiagonal_dc (leaves and panels small enough that every n runs merges), in the
// thread and not, started after SBR-back or before it, and on the table's spectra.
TEST_P(EngineStages, WholeEngineWithDcMatchesLapack) {
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const Mat a = random_matrix(s.n, 23);
    const EngineLayout L = layout(s);
    EngineOptions opt = dc_options(s);
    EngineResult first;
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE("variant " + std::to_string(variant));
      opt.dc_in_thread = variant != 1;
      opt.dc_at_sbr_back = variant == 2;
      const EngineResult r = engine(a, L, opt);
      expect_eigendecomposition(a, s.n, r);
      if (variant == 0)
        first = r;
      else
        expect_same_arithmetic(r, first);
    }
    if (is_oracle()) continue;
    EngineOptions ref = opt;
    ref.tridiagonal = TridiagonalSolver::Dstedc;
    HostBackend host;
    const EngineResult h = run_whole_engine(host, a, L, ref);
    ASSERT_EQ(h.info, 0);
    EXPECT_LT(test::eigenvalue_difference(first.w, h.w), 1e-12) << "against the host's dstedc";
  }
  for (test::Spectrum sp : test::kAllSpectra) {
    SCOPED_TRACE(test::to_string(sp));
    const long n = 90;
    EngineOptions opt = reduction_options(8, 32);
    opt.tridiagonal = TridiagonalSolver::Dc;
    opt.dc.leaf = 12;
    const Mat a = test::matrix_with_eigenvalues(test::eigenvalues_of(sp, n, 3), 5);
    expect_eigendecomposition(a, n, engine(a, layout(Shape{n, opt.b, opt.k}), opt));
  }
}

// Stage 3 by dc with its top merge folded into stage 5 (rank 0 broadcasts Q_pre's blocks and M;
// every rank forms Z = (X Q_pre) M) against the same engine unfolded: the eigenvalues bitwise (the
// same secular problems), Z to rounding, residual and orthogonality; every rank's timeline shows
// the folded product's parts exactly where rank 0 said it folded. Where T reaches no merge (small
// n, the zero matrix, the identity) nothing folds and every rank takes the whole product; the
// table's spectra and degenerate eigenvalues split T into several blocks.
TEST_P(EngineStages, WholeEngineWithFoldedDcEqualsUnfolded) {
  const auto fold_against_whole = [&](const Mat& a, const EngineLayout& L, EngineOptions opt) {
    opt.tridiagonal = TridiagonalSolver::Dc;
    const EngineResult whole = engine(a, L, opt);
    opt.dc_fold = true;
    Timeline timeline;
    timeline.start(MPI_COMM_WORLD);
    opt.timeline = &timeline;
    EngineStats st;
    const EngineResult folded = engine(a, L, opt, &st);
    expect_eigendecomposition(a, L.n, folded);
    expect_same_arithmetic(folded, whole);
    std::vector<std::string> parts;
    for (const TimelineInterval& i : timeline.intervals()) parts.push_back(i.stage);
    const auto has = [&](const char* p) {
      return std::find(parts.begin(), parts.end(), p) != parts.end();
    };
    EXPECT_EQ(has("qpre_broadcast") && has("pre_gemm") && has("m_broadcast"), st.dc_folded);
    EXPECT_EQ(has("qd_broadcast"), !st.dc_folded);
    EXPECT_TRUE(has("gemm"));
    return st.dc_folded;
  };
  for (const Shape& s : shapes()) {
    SCOPED_TRACE(name(s));
    const EngineOptions opt = dc_options(s);
    EXPECT_EQ(fold_against_whole(random_matrix(s.n, 29), layout(s), opt), s.n > opt.dc.leaf)
        << "folds exactly where T reaches a merge";
  }
  for (long n : {1L, 2L, 5L, 33L})
    for (int kind = 0; kind < 3; ++kind) {  // random, zero, identity
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      EngineOptions opt = reduction_options(2, 4);
      opt.dc.leaf = 8;
      const bool folded =
          fold_against_whole(special_matrix(n, kind, 31), layout(Shape{n, opt.b, opt.k}), opt);
      EXPECT_EQ(folded, kind == 0 && n > 8);
    }
  const long n = 90;
  for (const NamedSpectrum& sp : table_and_degenerate_spectra(n)) {
    SCOPED_TRACE(sp.name);
    EngineOptions opt = reduction_options(8, 32);
    opt.dc.leaf = 12;
    fold_against_whole(test::matrix_with_eigenvalues(sp.lambda, 5), layout(Shape{n, opt.b, opt.k}),
                       opt);
  }
}

std::string layout_name(const testing::TestParamInfo<std::tuple<Backend, Layout>>& info) {
  return std::get<1>(info.param) == Layout::Planned ? "planned" : "skewed";
}

// ctest runs Host/ on every rank count (engine_stages.np*) and Gpu/ on one rank
// (gpu_engine_stages.np1, label gpu), where a skewed layout would be the planned one.
INSTANTIATE_TEST_SUITE_P(Host, EngineStages,
                         testing::Combine(testing::Values(Backend::Host),
                                          testing::Values(Layout::Planned, Layout::Skewed)),
                         layout_name);
INSTANTIATE_TEST_SUITE_P(Gpu, EngineStages,
                         testing::Combine(testing::Values(Backend::Gpu),
                                          testing::Values(Layout::Planned)),
                         layout_name);

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
