// DBBR's two places to form each panel's Z over several engine ranks (DbbrOptions::
// z_on_every_rank): every rank its own rows, W^H A W summed over the ranks and the rows gathered,
// or the panel's owner all of it from the rows of A W sent to it, broadcast. The same arithmetic
// summed in another order, so on the host backend, real and complex, at odd n with b = 8 and outer
// blocks of 2 and 4 panels that the ranks' columns split unevenly (equal, growing with the rank,
// and the last rank holding none, so that its left neighbour's blocks fall back to the owner,
// which then holds every row): the band and the reflectors agree to rounding, each scheme's
// reduction is unitary (Q_s^H A Q_s = B), and each run twice gives the same bits.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/dbbr.hpp"
#include "core/engine_plan.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/band_checks.hpp"
#include "tests/support/band_readback.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/reduction_shape.hpp"
#include "tests/support/spectra.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using test::band_residual;
using test::q_of;
using test::world_rank;
using test::world_size;

using Shape = test::ReductionShape;

const Shape kShapes[] = {{97, 8, 16}, {97, 8, 32}, {203, 8, 16}, {203, 8, 32}};

enum class Split { Planned, Growing, LastEmpty };

const char* to_string(Split s) {
  return s == Split::Planned ? "planned" : s == Split::Growing ? "growing" : "last_empty";
}

// Planned: equal columns. Growing: rank q's width in proportion to q + 1. LastEmpty: equal columns
// over all ranks but the last, which holds none.
EngineLayout layout(const Shape& s, Split split) {
  const int ranks = world_size();
  EngineLayout L = plan_engine_layout(s.n, ranks, s.b);
  if (split == Split::Planned) return L;
  const long units = s.n / s.b;
  if (split == Split::Growing) {
    const long weight = static_cast<long>(ranks) * (ranks + 1) / 2;
    long acc = 0;
    for (int q = 0; q < ranks; ++q) {
      L.col_begin[q] = std::min(s.n, s.b * (acc * units / weight));
      acc += q + 1;
    }
  } else {
    for (int q = 0; q < ranks; ++q)
      L.col_begin[q] = std::min(s.n, s.b * (q * units / std::max(1, ranks - 1)));
    L.col_begin[ranks - 1] = s.n;
  }
  L.col_begin[ranks] = s.n;
  return L;
}

std::vector<double> matrix(long n, double*) {
  return test::matrix_with_eigenvalues(test::eigenvalues_of(test::Spectrum::Uniform, n, 3), 41);
}
std::vector<Complex> matrix(long n, Complex*) {
  return test::hermitian_with_eigenvalues(test::eigenvalues_of(test::Spectrum::Uniform, n, 3), 41);
}

double orthogonality(int n, const std::vector<double>& q) { return test::orthogonality(n, q); }
double orthogonality(int n, const std::vector<Complex>& q) {
  return test::unitary_orthogonality(n, q);
}

using test::max_abs;
using test::max_abs_diff;

// One scheme's result on this rank: the band storage (every rank) and each panel's W and Y.
template <class T>
using Reduced = test::BandReadback<T>;

template <class T>
Reduced<T> reduce(HostBackend& be, const std::vector<T>& a, const EngineLayout& L, const Shape& s,
                  bool every_rank) {
  const int me = world_rank();
  std::vector<T> mine(a.begin() + L.col_begin[me] * L.n, a.begin() + L.col_begin[me + 1] * L.n);
  DbbrOptions opt{s.b, s.k, true};
  opt.z_on_every_rank = every_rank;
  return test::reduce_and_read_back(be, L, me, mine.data(), opt);
}

template <class T>
class DbbrZSchemes : public testing::Test {};

using Scalars = testing::Types<double, Complex>;
TYPED_TEST_SUITE(DbbrZSchemes, Scalars);

TYPED_TEST(DbbrZSchemes, EveryRankEqualsOwnerToRounding) {
  using T = TypeParam;
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  for (const Shape& s : kShapes)
    for (Split split : {Split::Planned, Split::Growing, Split::LastEmpty}) {
      SCOPED_TRACE("n=" + std::to_string(s.n) + " b=" + std::to_string(s.b) +
                   " k=" + std::to_string(s.k) + " " + to_string(split));
      const std::vector<T> a = matrix(s.n, static_cast<T*>(nullptr));
      const EngineLayout L = layout(s, split);
      const Reduced<T> every = reduce(be, a, L, s, true), owner = reduce(be, a, L, s, false);
      EXPECT_LT(max_abs_diff(every.band, owner.band) / max_abs(owner.band), 1e-12) << "band";
      if (split == Split::Planned)  // the every-rank path ran: its sums' order differs
        EXPECT_GT(max_abs_diff(every.band, owner.band), 0.0) << "band bitwise the owner's";
      ASSERT_EQ(every.w.size(), owner.w.size());
      EXPECT_EQ(every.w.size(), static_cast<std::size_t>(std::max(0L, (s.n - 2) / every.b)));
      for (std::size_t p = 0; p < every.w.size(); ++p) {
        EXPECT_LT(max_abs_diff(every.w[p], owner.w[p]) / max_abs(owner.w[p]), 1e-12) << "W " << p;
        EXPECT_LT(max_abs_diff(every.y[p], owner.y[p]) / max_abs(owner.y[p]), 1e-12) << "Y " << p;
      }
      for (const Reduced<T>* r : {&every, &owner}) {
        const std::vector<T> q = q_of(be, s.n, *r);
        EXPECT_LT(orthogonality(static_cast<int>(s.n), q), 10.0);
        EXPECT_LT(band_residual(be, s.n, a, *r, q), 10.0);
      }
      const Reduced<T> again = reduce(be, a, L, s, true);
      EXPECT_EQ(max_abs_diff(again.band, every.band), 0.0) << "band run twice";
      for (std::size_t p = 0; p < every.w.size(); ++p)
        EXPECT_EQ(max_abs_diff(again.w[p], every.w[p]), 0.0) << "W run twice " << p;
    }
}

// The profiler's outer-block boundaries (what the GPU clock times each block between): on every
// rank, 0, 1, ..., then the blocks' count once the last ends, none inside a part, and the band
// bitwise the band without a profiler.
struct BoundaryRecorder : DbbrProfiler {
  std::vector<long> boundaries;
  bool in_part = false, boundary_in_part = false;
  void begin(DbbrPart) noexcept override { in_part = true; }
  void end(DbbrPart) noexcept override { in_part = false; }
  void block_boundary(long index) noexcept override {
    boundary_in_part |= in_part;
    boundaries.push_back(index);
  }
};

TEST(DbbrProfiler, SeesEachOuterBlocksBoundaryInOrder) {
  HostBackend be;
  be.bind(MPI_COMM_WORLD);
  const int me = world_rank();
  for (const Shape& s : kShapes)
    for (Split split : {Split::Planned, Split::LastEmpty}) {
      SCOPED_TRACE("n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) + " " +
                   to_string(split));
      const std::vector<double> a = matrix(s.n, static_cast<double*>(nullptr));
      const EngineLayout L = layout(s, split);
      std::vector<double> mine(a.begin() + L.col_begin[me] * L.n,
                               a.begin() + L.col_begin[me + 1] * L.n);
      BoundaryRecorder rec;
      DbbrOptions opt{s.b, s.k, true};
      opt.profiler = &rec;
      const Reduced<double> with = test::reduce_and_read_back(be, L, me, mine.data(), opt);
      const long blocks = static_cast<long>(outer_blocks(L, opt).size());
      ASSERT_GT(blocks, 1);
      ASSERT_EQ(rec.boundaries.size(), static_cast<std::size_t>(blocks + 1));
      for (long t = 0; t <= blocks; ++t) EXPECT_EQ(rec.boundaries[t], t);
      EXPECT_FALSE(rec.boundary_in_part);
      const Reduced<double> without = reduce(be, a, L, s, true);
      EXPECT_EQ(max_abs_diff(with.band, without.band), 0.0);
    }
}

}  // namespace
}  // namespace pipevd
