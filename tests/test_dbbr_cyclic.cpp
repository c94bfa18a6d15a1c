// DBBR on cyclic outer blocks (DbbrOptions::cyclic_blocks: outer block t on rank t mod E) on the
// host backend over this run's ranks, real and complex, both Z schemes, at odd n with b = 8 and
// outer blocks of 4 panels (many blocks, n a multiple of neither): the band and the reflectors
// equal the blockwise run's to rounding, the band's eigenvalues are A's (LAPACK's band solver on
// the band against the spectrum A was made with), Q_s^H A Q_s = B with Q_s unitary at the
// smallest n, and the run repeated gives the same bits. The columns' move from the layout's
// contiguous columns into the cyclic ones (core/column_exchange) delivers each rank's cyclic
// columns exactly, and back; the profiler sees every cyclic outer block; a panel's backend calls
// do not grow with the runs of rows a rank holds (its rows packed); the buffers DBBR allocates
// unfilled are written before they are read (NaN in them changes no bit).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "core/column_exchange.hpp"
#include "core/dbbr.hpp"
#include "core/engine_plan.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/band_checks.hpp"
#include "tests/support/band_readback.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/counting_backend.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/reduction_shape.hpp"
#include "tests/support/spectra.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using test::band_residual;
using test::max_abs;
using test::max_abs_diff;
using test::q_of;
using test::world_rank;
using test::world_size;

using Shape = test::ReductionShape;
using test::name;

std::vector<double> spectrum(long n) { return test::eigenvalues_of(test::Spectrum::Uniform, n, 3); }

std::vector<double> matrix(long n, double*) {
  return test::matrix_with_eigenvalues(spectrum(n), 41);
}
std::vector<Complex> matrix(long n, Complex*) {
  return test::hermitian_with_eigenvalues(spectrum(n), 41);
}

// Rank `rank`'s columns of the full matrix a in the distribution c, as DBBR takes them.
template <class T>
std::vector<T> columns_of(const std::vector<T>& a, const DbbrColumns& c, int rank) {
  const long n = c.n();
  std::vector<T> mine(n * c.width(rank));
  for (const ColumnSegment& s : c.segments(rank))
    std::copy(a.begin() + s.begin * n, a.begin() + s.end * n, mine.begin() + s.local * n);
  return mine;
}

template <class T>
test::BandReadback<T> reduce(EngineBackend& be, const std::vector<T>& a, const EngineLayout& L,
                             const DbbrOptions& opt) {
  std::vector<T> mine = columns_of(a, dbbr_columns(L, opt), world_rank());
  return test::reduce_and_read_back(be, L, world_rank(), mine.data(), opt);
}

double orthogonality(int n, const std::vector<double>& q) { return test::orthogonality(n, q); }
double orthogonality(int n, const std::vector<Complex>& q) {
  return test::unitary_orthogonality(n, q);
}

template <class T>
class DbbrCyclic : public testing::Test {};

using Scalars = testing::Types<double, Complex>;
TYPED_TEST_SUITE(DbbrCyclic, Scalars);

// The complex runs stop at 1000 (four times the real flops on the same ranks).
std::vector<Shape> shapes(bool complex) {
  std::vector<Shape> v{{301, 8, 32}, {1000, 8, 32}};
  if (!complex) v.push_back({1537, 8, 32});
  return v;
}

TYPED_TEST(DbbrCyclic, EqualsBlockwiseToRounding) {
  using T = TypeParam;
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  for (const Shape& s : shapes(Scalar<T>::words == 2))
    for (bool every_rank : {true, false}) {
      SCOPED_TRACE(name(s) + (every_rank ? " z on every rank" : " z on the owner"));
      const std::vector<T> a = matrix(s.n, static_cast<T*>(nullptr));
      const EngineLayout L = plan_engine_layout(s.n, world_size(), s.b);
      DbbrOptions opt{s.b, s.k, true};
      opt.z_on_every_rank = every_rank;
      const test::BandReadback<T> blockwise = reduce(be, a, L, opt);
      opt.cyclic_blocks = true;
      const test::BandReadback<T> cyclic = reduce(be, a, L, opt);
      const double tol = 100.0 * s.n * DBL_EPSILON;
      EXPECT_LT(max_abs_diff(cyclic.band, blockwise.band) / max_abs(blockwise.band), tol);
      if (world_size() > 1)  // the cyclic walk ran: its sums and updates group the rows otherwise
        EXPECT_GT(max_abs_diff(cyclic.band, blockwise.band), 0.0) << "band bitwise blockwise";
      ASSERT_EQ(cyclic.w.size(), blockwise.w.size());
      EXPECT_EQ(cyclic.w.size(), static_cast<std::size_t>((s.n - 2) / s.b));
      for (std::size_t p = 0; p < cyclic.w.size(); ++p) {
        EXPECT_EQ(cyclic.row0[p], blockwise.row0[p]);
        EXPECT_LT(max_abs_diff(cyclic.w[p], blockwise.w[p]) / max_abs(blockwise.w[p]), tol)
            << "W " << p;
        EXPECT_LT(max_abs_diff(cyclic.y[p], blockwise.y[p]) / max_abs(blockwise.y[p]), tol)
            << "Y " << p;
      }
      std::vector<double> lambda = spectrum(s.n);
      std::sort(lambda.begin(), lambda.end());
      EXPECT_LT(test::eigenvalue_difference(
                    test::band_eigenvalues(s.n, cyclic.b, cyclic.b + 1, cyclic.band), lambda),
                1e-12);
      if (s.n < 500) {
        const std::vector<T> q = q_of(be, s.n, cyclic);
        EXPECT_LT(orthogonality(static_cast<int>(s.n), q), 10.0);
        EXPECT_LT(band_residual(be, s.n, a, cyclic, q), 10.0);
      }
      if (every_rank) {
        const test::BandReadback<T> again = reduce(be, a, L, opt);
        EXPECT_TRUE(test::bitwise_equal(again.band, cyclic.band)) << "band run twice";
        for (std::size_t p = 0; p < cyclic.w.size(); ++p)
          EXPECT_TRUE(test::bitwise_equal(again.w[p], cyclic.w[p])) << "W run twice " << p;
      }
    }
}

// The buffers DBBR allocates unfilled (each panel's W, Y, the Z, the owner's saved block columns
// and, its rows packed, Ybp, Zbp, Wp) are written before they are read on every path: the panel's
// owner and the others, ranks without rows below a panel (n = 97 on 4 ranks), the block's first
// panels (tb = 0; k = b: every panel), the last panels, both Z schemes, cyclic and blockwise, real
// and complex. Filled with NaN (test::CountingBackend's poison) they give the zero-filled run's
// bits.
TYPED_TEST(DbbrCyclic, UnfilledBuffersAreWrittenBeforeTheyAreRead) {
  using T = TypeParam;
  HostBackend zeroed;
  zeroed.bind(MPI_COMM_WORLD);
  test::CountingBackend poisoned(true);
  poisoned.bind(MPI_COMM_WORLD);
  for (const Shape& s : {Shape{301, 8, 32}, Shape{97, 8, 8}, Shape{130, 4, 36}})
    for (bool cyclic : {true, false})
      for (bool every_rank : {true, false}) {
        SCOPED_TRACE(name(s) + (cyclic ? " cyclic" : " blockwise") +
                     (every_rank ? " z on every rank" : " z on the owner"));
        const std::vector<T> a = matrix(s.n, static_cast<T*>(nullptr));
        const EngineLayout L = plan_engine_layout(s.n, world_size(), s.b);
        DbbrOptions opt{s.b, s.k, true};
        opt.z_on_every_rank = every_rank;
        opt.cyclic_blocks = cyclic;
        const test::BandReadback<T> want = reduce(zeroed, a, L, opt);
        const test::BandReadback<T> got = reduce(poisoned, a, L, opt);
        EXPECT_TRUE(test::bitwise_equal(got.band, want.band)) << "band";
        ASSERT_EQ(got.w.size(), want.w.size());
        for (std::size_t p = 0; p < got.w.size(); ++p) {
          EXPECT_TRUE(test::bitwise_equal(got.w[p], want.w[p])) << "W " << p;
          EXPECT_TRUE(test::bitwise_equal(got.y[p], want.y[p])) << "Y " << p;
        }
      }
}

// From the layout's contiguous columns into the cyclic ones and back: the exact columns, timed as
// one Copies part.
struct PartRecorder : DbbrProfiler {
  std::vector<DbbrPart> begun;
  void begin(DbbrPart part) noexcept override { begun.push_back(part); }
  void end(DbbrPart) noexcept override {}
};

TYPED_TEST(DbbrCyclic, ColumnExchangeMovesEveryColumn) {
  using T = TypeParam;
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  const int me = world_rank();
  for (long n : {1L, 37L, 301L}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<T> a = matrix(n, static_cast<T*>(nullptr));
    const EngineLayout L = plan_engine_layout(n, world_size(), 8);
    const DbbrColumns blockwise = DbbrColumns::blockwise(L),
                      cyclic = DbbrColumns::cyclic(n, world_size(), 32);
    const std::vector<T> mine = columns_of(a, blockwise, me);
    std::vector<T> moved(n * cyclic.width(me), T(-7.0)), back(mine.size(), T(-7.0));
    PartRecorder rec;
    exchange_columns(be, blockwise, cyclic, me, mine.data(), moved.data(), &rec);
    EXPECT_TRUE(test::bitwise_equal(moved, columns_of(a, cyclic, me)));
    ASSERT_EQ(rec.begun.size(), 1u);
    EXPECT_EQ(rec.begun[0], DbbrPart::Copies);
    exchange_columns(be, cyclic, blockwise, me, moved.data(), back.data());
    EXPECT_TRUE(test::bitwise_equal(back, mine));
  }
}

// The profiler's outer-block boundaries follow the cyclic blocks: 0, 1, ..., their count.
struct BoundaryRecorder : DbbrProfiler {
  std::vector<long> boundaries;
  void begin(DbbrPart) noexcept override {}
  void end(DbbrPart) noexcept override {}
  void block_boundary(long index) noexcept override { boundaries.push_back(index); }
};

TEST(DbbrCyclicBlocks, ProfilerSeesEachCyclicOuterBlock) {
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  const Shape s{301, 8, 32};
  const EngineLayout L = plan_engine_layout(s.n, world_size(), s.b);
  DbbrOptions opt{s.b, s.k, true};
  opt.cyclic_blocks = true;
  const std::vector<OuterBlock> blocks = outer_blocks(L, opt);
  ASSERT_EQ(blocks.size(), static_cast<std::size_t>((s.n - 2 - s.b) / s.k + 1));
  for (std::size_t t = 0; t < blocks.size(); ++t) {
    EXPECT_EQ(blocks[t].owner, static_cast<int>(t % world_size()));
    EXPECT_EQ(blocks[t].begin, static_cast<long>(t) * s.k);
  }
  BoundaryRecorder rec;
  opt.profiler = &rec;
  reduce(be, matrix(s.n, static_cast<double*>(nullptr)), L, opt);
  ASSERT_EQ(rec.boundaries.size(), blocks.size() + 1);
  for (std::size_t t = 0; t < rec.boundaries.size(); ++t)
    EXPECT_EQ(rec.boundaries[t], static_cast<long>(t));
}

// The calls a device pays per launch (gemm, copy_matrix, copy_row_runs) from one panel's A W to
// the next one's within an outer block, outside the owner's panel QR and panel update (which do
// not depend on the rank's rows): the most over the panels whose Z every rank forms (three
// collectives in between: the sums, Z's gather, the next W and Y), on the panels' owner and on the
// other ranks.
class PanelCalls : public DbbrProfiler {
 public:
  explicit PanelCalls(const test::CountingBackend& be) : be_(be) {}
  long owner = 0, others = 0;

  void begin(DbbrPart part) noexcept override {
    if (part == DbbrPart::AW) {
      close();
      open_ = true;
      start_ = calls();
      skipped_ = 0;
      owns_ = false;
      collectives_ = 0;
    }
    if (skipped(part)) mark_ = calls();
    if (part == DbbrPart::PanelQr) owns_ = true;
    if (part == DbbrPart::Broadcast) ++collectives_;
  }
  void end(DbbrPart part) noexcept override {
    if (skipped(part)) skipped_ += calls() - mark_;
  }
  void block_boundary(long) noexcept override { open_ = false; }

 private:
  static bool skipped(DbbrPart p) {
    return p == DbbrPart::PanelQr || p == DbbrPart::PanelUpdate || p == DbbrPart::TrailingUpdate;
  }
  long calls() const { return be_.counts().total(); }
  void close() {
    if (!open_ || collectives_ != 3) return;
    long& most = owns_ ? owner : others;
    most = std::max(most, calls() - start_ - skipped_);
  }

  const test::CountingBackend& be_;
  bool open_ = false, owns_ = false;
  long start_ = 0, skipped_ = 0, mark_ = 0, collectives_ = 0;
};

// Cyclic outer blocks of k columns at n = `blocks` k: each rank holds blocks / E of them, that many
// runs of rows below the early panels. The most calls a panel on its owner and on the others, the
// most over the ranks.
template <class T>
std::pair<long, long> calls_per_panel(long blocks) {
  const long b = 8, k = 32, n = blocks * k;
  test::CountingBackend be;
  be.bind(MPI_COMM_WORLD);
  const EngineLayout L = plan_engine_layout(n, world_size(), b);
  DbbrOptions opt{b, k, true};
  opt.cyclic_blocks = true;
  PanelCalls rec(be);
  opt.profiler = &rec;
  std::vector<T> mine =
      columns_of(matrix(n, static_cast<T*>(nullptr)), dbbr_columns(L, opt), world_rank());
  reduce_to_band(be, L, world_rank(), mine.data(), opt);
  long most[2] = {rec.owner, rec.others};
  MPI_Allreduce(MPI_IN_PLACE, most, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return {most[0], most[1]};
}

// Packed rows: one GEMM a product and one copy a pack however many runs, so a panel's calls at 16
// outer blocks (4 runs a rank on 4 ranks) equal those at 4 (one run). The owner's A W is one GEMM
// more where it holds columns right of its block (on 4 ranks from 8 blocks on), whatever their
// runs: its calls are compared at 8 and 16.
TYPED_TEST(DbbrCyclic, BackendCallsPerPanelDoNotGrowWithSegments) {
  using T = TypeParam;
  if (world_size() < 2) GTEST_SKIP() << "one rank forms all of Z";
  const auto [owner4, others4] = calls_per_panel<T>(4);
  const auto [owner8, others8] = calls_per_panel<T>(8);
  const auto [owner16, others16] = calls_per_panel<T>(16);
  EXPECT_GT(others4, 0);
  EXPECT_GT(owner8, 0);
  const std::string seen = "owner " + std::to_string(owner4) + " " + std::to_string(owner8) + " " +
                           std::to_string(owner16) + ", others " + std::to_string(others4) + " " +
                           std::to_string(others8) + " " + std::to_string(others16);
  this->RecordProperty("calls_per_panel", seen);
  EXPECT_EQ(others16, others4) << seen;
  EXPECT_EQ(others8, others4) << seen;
  EXPECT_EQ(owner16, owner8) << seen;
}

}  // namespace
}  // namespace pipevd
