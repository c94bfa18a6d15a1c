// Host bulge chasing (band -> tridiagonal) and BC-back against LAPACK: T's eigenvalues equal B's,
// B = Q_b T Q_b^T with Q_b orthogonal, row blocks and application orders as documented in
// core/reflector_store.hpp, results that depend only on the inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/band_storage.hpp"
#include "core/reflector_store.hpp"
#include "host/bc_back.hpp"
#include "host/bulge_chasing.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/band_checks.hpp"

extern "C" {
void dsterf_(const int*, double*, double*, int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, size_t, size_t);
}

namespace pipevd {
namespace {

using test::bitwise_equal;

constexpr double kEps = DBL_EPSILON;

// A symmetric band matrix in lower band storage, entries uniform in [-1, 1].
struct Band {
  long n, b, ldab;
  std::vector<double> ab;
  BandView view() { return BandView{n, b, ab.data(), ldab}; }
};

Band random_band(long n, long b, unsigned seed, long pad = 0) {
  Band band{n, b, b + 1 + pad, {}};
  band.ab.assign(static_cast<size_t>(std::max(1L, n * band.ldab)), 0.0);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (long j = 0; j < n; ++j)
    for (long i = j; i <= std::min(n - 1, j + b); ++i) band.view().at(i, j) = u(gen);
  return band;
}

std::vector<double> dense(Band& band) {
  const long n = band.n;
  std::vector<double> a(static_cast<size_t>(n * n));
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) a[i + j * n] = band.view().get(i, j);
  return a;
}

std::vector<double> identity(long n) {
  std::vector<double> q(static_cast<size_t>(n * n), 0.0);
  for (long i = 0; i < n; ++i) q[i + i * n] = 1.0;
  return q;
}

double frobenius(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

// C = op(A) op(B) for column-major A, B.
std::vector<double> gemm(char ta, char tb, long m, long n, long k, const std::vector<double>& a,
                         long lda, const std::vector<double>& b, long ldb) {
  std::vector<double> c(static_cast<size_t>(std::max(1L, m * n)), 0.0);
  if (m == 0 || n == 0) return c;
  const int im = m, in = n, ik = k, ilda = lda, ildb = ldb, ildc = m;
  const double one = 1.0, zero = 0.0;
  dgemm_(&ta, &tb, &im, &in, &ik, &one, a.data(), &ilda, b.data(), &ildb, &zero, c.data(), &ildc, 1,
         1);
  return c;
}

// Eigenvalues of B by LAPACK dsbev (ascending).
std::vector<double> band_eigenvalues(const Band& band) {
  return test::band_eigenvalues(band.n, band.b, band.ldab, band.ab);
}

// Eigenvalues of T by LAPACK dsterf (ascending).
std::vector<double> tridiagonal_eigenvalues(std::vector<double> d, std::vector<double> e) {
  const int n = d.size();
  int info = 0;
  e.resize(d.size());
  dsterf_(&n, d.data(), e.data(), &info);
  EXPECT_EQ(info, 0);
  return d;
}

struct Chased {
  std::vector<double> d, e;
  ReflectorStore U;
};

Chased chase(const Band& band) {
  Chased c;
  c.d.assign(static_cast<size_t>(band.n), 0.0);
  c.e.assign(static_cast<size_t>(std::max(1L, band.n - 1)), 0.0);
  host::bulge_chase(band.n, band.b, band.ab.data(), band.ldab, c.d.data(), c.e.data(), c.U);
  return c;
}

// Q_b formed by BC-back on the identity.
std::vector<double> form_q(const ReflectorStore& U, long n) {
  std::vector<double> q = identity(n);
  host::apply_bc_back(U, n, q.data(), std::max(1L, n));
  return q;
}

std::string sci(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3e", x);
  return s;
}

// ---------------------------------------------------------------- band storage

TEST(BandStorage, PackingColumnRangesGivesTheBand) {
  const long n = 23, b = 5, ldab = b + 2;
  Band band = random_band(n, b, 11);
  std::vector<double> a = dense(band);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < j; ++i) a[i + j * n] = 1e300;  // the upper triangle is not read
  std::vector<double> ab(static_cast<size_t>(n * ldab), -7.0);
  const long bounds[] = {0, 4, 9, 17, n};  // the column ranges of four engine ranks
  for (int r = 0; r < 4; ++r)
    pack_lower_band(n, b, bounds[r], bounds[r + 1], a.data() + bounds[r] * n, n, ab.data(), ldab);
  const BandView packed{n, b, ab.data(), ldab};
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) EXPECT_EQ(packed.get(i, j), band.view().get(i, j));
  for (long j = 0; j < n; ++j) EXPECT_EQ(ab[(b + 1) + j * ldab], -7.0);  // padding untouched
}

// ---------------------------------------------------------------- reflector layout

TEST(ReflectorLayout, IndicesAreConsecutiveAndStepsTileEachSweep) {
  for (long n : {0L, 1L, 2L, 3L, 4L, 5L, 17L, 33L, 64L, 100L, 257L})
    for (long b : {1L, 2L, 3L, 4L, 7L, 8L, 32L}) {
      const ReflectorLayout L{n, std::min(b, std::max(0L, n - 1))};
      long next = 0;
      for (long s = 0; s < L.sweeps(); ++s) {
        EXPECT_EQ(L.sweep_offset(s), next) << "n=" << n << " b=" << b << " s=" << s;
        long row = s + 1;
        for (long t = 0; t < L.steps(s); ++t) {
          EXPECT_EQ(L.index(s, t), next++);
          EXPECT_EQ(L.first_row(s, t), row);  // steps are adjacent, never overlapping
          EXPECT_GE(L.length(s, t), 2);
          EXPECT_LE(L.length(s, t), L.b);
          row += L.length(s, t);
        }
        // The steps cover rows s+1 .. n-1, except a last row that would make a 1-long reflector.
        EXPECT_TRUE(row == n || row == n - 1) << "n=" << n << " b=" << L.b << " s=" << s;
      }
      EXPECT_EQ(L.count(), next);
      EXPECT_EQ(L.vector_array_size(), next * L.b);
      EXPECT_EQ(L.sweeps(), n >= 3 && L.b >= 2 ? n - 2 : 0);
    }
}

// Reflectors overlap exactly where the layout's dependency rule says.
TEST(ReflectorLayout, OverlapsAreTheDocumentedDependencies) {
  for (long n : {5L, 33L, 100L})
    for (long b : {2L, 3L, 8L}) {
      const ReflectorLayout L{n, b};
      auto overlap = [&](long s, long t, long s2, long t2) {
        const long a0 = L.first_row(s, t), a1 = a0 + L.length(s, t);
        const long b0 = L.first_row(s2, t2), b1 = b0 + L.length(s2, t2);
        return a0 < b1 && b0 < a1;
      };
      for (long s = 0; s + 1 < L.sweeps(); ++s)
        for (long t = 0; t < L.steps(s + 1); ++t)
          for (long t2 = 0; t2 < L.steps(s); ++t2)
            EXPECT_EQ(overlap(s + 1, t, s, t2), t2 == t || t2 == t + 1)
                << "n=" << n << " b=" << b << " s=" << s << " t=" << t << " t2=" << t2;
    }
}

TEST(ReflectorLayout, BcBackOrderVisitsEachOnceAfterItsDependencies) {
  for (long n : {3L, 5L, 33L, 100L})
    for (long b : {2L, 4L, 8L})
      for (long group : {1L, 2L, 3L, b, n}) {
        const ReflectorLayout L{n, std::min(b, n - 1)};
        std::set<std::pair<long, long>> done;
        bool ordered = true;
        for_each_in_bc_back_order(L, group, [&](long s, long t) {
          // Every earlier reflector it overlaps: H(s-1, t) and H(s-1, t+1).
          for (long t2 : {t, t + 1})
            if (s > 0 && t2 < L.steps(s - 1) && !done.count({s - 1, t2})) ordered = false;
          EXPECT_TRUE(done.insert({s, t}).second);
        });
        EXPECT_TRUE(ordered) << "n=" << n << " b=" << b << " group=" << group;
        EXPECT_EQ(static_cast<long>(done.size()), L.count());
      }
}

// ---------------------------------------------------------------- bulge chasing and BC-back

class BulgeChasing : public testing::TestWithParam<std::tuple<long, long>> {};

TEST_P(BulgeChasing, EigenvaluesOfTAreThoseOfB) {
  const auto [n, b] = GetParam();
  Band band = random_band(n, b, 1000 * n + b);
  const Chased c = chase(band);
  const std::vector<double> wt = tridiagonal_eigenvalues(c.d, c.e);
  const std::vector<double> wb = band_eigenvalues(band);
  // Scaled by max |lambda| = ||B||_2.
  const double difference = test::eigenvalue_difference(wt, wb);
  RecordProperty("eigenvalue_difference", sci(difference));
  EXPECT_LE(difference, 1e-13) << "n=" << n << " b=" << b;
}

TEST_P(BulgeChasing, ReconstructsBWithOrthogonalQ) {
  const auto [n, b] = GetParam();
  Band band = random_band(n, b, 2000 * n + b);
  const Chased c = chase(band);
  const std::vector<double> q = form_q(c.U, n);

  // Q T Q^T - B, T formed densely from d, e.
  std::vector<double> t(static_cast<size_t>(n * n), 0.0);
  for (long i = 0; i < n; ++i) {
    t[i + i * n] = c.d[i];
    if (i + 1 < n) t[(i + 1) + i * n] = t[i + (i + 1) * n] = c.e[i];
  }
  const std::vector<double> qt = gemm('N', 'N', n, n, n, q, n, t, n);
  std::vector<double> r = gemm('N', 'T', n, n, n, qt, n, q, n);
  const std::vector<double> a = dense(band);
  for (size_t i = 0; i < a.size(); ++i) r[i] -= a[i];
  const double reconstruction = frobenius(r) / (frobenius(a) * n * kEps);
  const double orthogonality = test::orthogonality(n, q);
  RecordProperty("reconstruction", sci(reconstruction));
  RecordProperty("orthogonality", sci(orthogonality));
  EXPECT_LT(reconstruction, 10.0) << "n=" << n << " b=" << b;
  EXPECT_LT(orthogonality, 10.0) << "n=" << n << " b=" << b;

  // Q_b * I by the left-side application is the same Q_b (other arithmetic: to rounding).
  std::vector<double> ql = identity(n);
  host::apply_bc_back_left(c.U, n, ql.data(), std::max(1L, n));
  for (size_t i = 0; i < q.size(); ++i) r[i] = ql[i] - q[i];
  EXPECT_LT(frobenius(r) / (std::sqrt(double(std::max(1L, n))) * n * kEps), 10.0);
}

TEST_P(BulgeChasing, ReflectorsFollowDlarfgNormalisation) {
  const auto [n, b] = GetParam();
  Band band = random_band(n, b, 3000 * n + b);
  const Chased c = chase(band);
  const ReflectorLayout& L = c.U.layout;
  EXPECT_EQ(L.n, n);
  EXPECT_EQ(L.b, std::max(0L, std::min(b, n - 1)));
  ASSERT_EQ(static_cast<long>(c.U.v.size()), L.vector_array_size());
  ASSERT_EQ(static_cast<long>(c.U.tau.size()), L.count());
  for (long s = 0; s < L.sweeps(); ++s)
    for (long t = 0; t < L.steps(s); ++t) {
      const double* v = c.U.vector(s, t);
      const double tau = c.U.tau_of(s, t);
      EXPECT_EQ(v[0], 1.0);
      for (long i = L.length(s, t); i < L.b; ++i) EXPECT_EQ(v[i], 0.0);
      EXPECT_TRUE(tau == 0.0 || (tau >= 1.0 && tau <= 2.0)) << tau;
      // H = I - tau v v^T is orthogonal: tau (v^T v) = 2 (or tau = 0).
      double vv = 0;
      for (long i = 0; i < L.length(s, t); ++i) vv += v[i] * v[i];
      if (tau != 0.0) {
        EXPECT_NEAR(tau * vv, 2.0, 1e-14);
      }
    }
}

// A row block gives the rows of X * Q_b: bitwise those of the whole X, and equal to rounding to
// X(rows, :) * Q_b with the formed Q_b; every group width (every valid order) gives the same bits.
TEST_P(BulgeChasing, RowBlocksAndOrders) {
  const auto [n, b] = GetParam();
  Band band = random_band(n, b, 4000 * n + b);
  const Chased c = chase(band);
  const std::vector<double> q = form_q(c.U, n);

  const long m = 2 * n + 3;
  std::vector<double> x(static_cast<size_t>(m * n));
  std::mt19937_64 gen(n + 7 * b);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double& v : x) v = u(gen);
  std::vector<double> xq = x;
  host::apply_bc_back(c.U, m, xq.data(), m);

  const long r0 = m / 3, rows = std::min(m - r0, n + 1);
  std::vector<double> block(static_cast<size_t>(rows * n));
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < rows; ++i) block[i + j * rows] = x[(r0 + i) + j * m];
  const std::vector<double> expected = gemm('N', 'N', rows, n, n, block, rows, q, n);
  host::apply_bc_back(c.U, rows, block.data(), rows);
  double diff = 0, scale = 0;
  bool same_bits = true;
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < rows; ++i) {
      diff = std::max(diff, std::fabs(block[i + j * rows] - expected[i + j * rows]));
      scale = std::max(scale, std::fabs(expected[i + j * rows]));
      same_bits = same_bits &&
                  std::memcmp(&block[i + j * rows], &xq[(r0 + i) + j * m], sizeof(double)) == 0;
    }
  EXPECT_TRUE(same_bits) << "n=" << n << " b=" << b;
  EXPECT_LE(diff, 10 * n * kEps * std::max(scale, 1.0)) << "n=" << n << " b=" << b;

  for (long group : {1L, 2L, 3L, std::max(1L, n)}) {
    std::vector<double> y = x;
    host::apply_bc_back(c.U, m, y.data(), m, group);
    EXPECT_TRUE(bitwise_equal(y, xq)) << "n=" << n << " b=" << b << " group=" << group;
  }
}

TEST_P(BulgeChasing, ResultsDependOnlyOnInputs) {
  const auto [n, b] = GetParam();
  Band band = random_band(n, b, 5000 * n + b);
  const Chased c1 = chase(band);
  // Garbage in the unreferenced padding rows of a wider ab must not matter either.
  Band wide = random_band(n, b, 5000 * n + b, 3);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < wide.ldab; ++i)
      wide.ab[i + j * wide.ldab] = (i <= b && j + i < n) ? band.ab[i + j * band.ldab] : 1e300;
  const Chased c2 = chase(band);
  const Chased c3 = chase(wide);
  for (const Chased* c : {&c2, &c3}) {
    EXPECT_TRUE(bitwise_equal(c1.d, c->d));
    EXPECT_TRUE(bitwise_equal(c1.e, c->e));
    EXPECT_TRUE(bitwise_equal(c1.U.v, c->U.v));
    EXPECT_TRUE(bitwise_equal(c1.U.tau, c->U.tau));
  }
  EXPECT_TRUE(bitwise_equal(form_q(c1.U, n), form_q(c2.U, n)));
  // Without the reflectors: the same T.
  std::vector<double> d(c1.d.size(), -1.0), e(c1.e.size(), -1.0);
  if (n <= 1) e.assign(c1.e.begin(), c1.e.end());  // not written
  host::bulge_chase_values(n, b, band.ab.data(), band.ldab, d.data(), e.data());
  EXPECT_TRUE(bitwise_equal(c1.d, d));
  EXPECT_TRUE(bitwise_equal(c1.e, e));
}

INSTANTIATE_TEST_SUITE_P(Sizes, BulgeChasing,
                         testing::Combine(testing::Values(1L, 2L, 3L, 5L, 33L, 100L, 257L),
                                          testing::Values(1L, 2L, 4L, 8L, 32L)),
                         [](const testing::TestParamInfo<std::tuple<long, long>>& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_b" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Sweeps run pipelined (as on the GPU): a step starts as soon as the previous sweep has done the
// step ReflectorLayout::prerequisite names. Bitwise the same as sweep after sweep; with one step
// less of lead (lead = 0 instead of 1) the results differ, so the rule is tight.
Chased chase_pipelined(const Band& band, long lead, bool random_pick) {
  Chased c;
  const long n = band.n;
  c.U = ReflectorStore(n, std::max(0L, std::min(band.b, n - 1)));
  const ReflectorLayout& L = c.U.layout;
  host::BulgeBand a(L, band.ab.data(), band.ldab);
  std::vector<long> done(static_cast<size_t>(L.sweeps()), 0);  // completed steps per sweep
  std::mt19937_64 gen(n);
  auto ready = [&](long s) {
    const long t = done[s];
    if (t >= L.steps(s)) return false;
    return s == 0 || done[s - 1] >= std::min(L.prerequisite(s, t) + lead, L.steps(s - 1));
  };
  for (;;) {
    std::vector<long> candidates;
    for (long s = 0; s < L.sweeps(); ++s)
      if (ready(s)) candidates.push_back(s);
    if (candidates.empty()) break;
    // The sweep furthest behind that may move (most overlap with the one ahead), or any.
    const long s = random_pick ? candidates[gen() % candidates.size()] : candidates.back();
    const long t = done[s]++;
    host::chase_step(a, L, s, t, c.U.vector(s, t), c.U.tau_of(s, t));
  }
  for (long s = 0; s < L.sweeps(); ++s) EXPECT_EQ(done[s], L.steps(s));
  c.d.resize(static_cast<size_t>(n));
  c.e.assign(static_cast<size_t>(std::max(1L, n - 1)), 0.0);
  for (long i = 0; i < n; ++i) c.d[i] = a(i, i);
  for (long i = 0; i + 1 < n; ++i) c.e[i] = L.b >= 1 ? a(i + 1, i) : 0.0;
  return c;
}

TEST(BulgeChasingPipelined, PrerequisiteRuleGivesSequentialResultsAndIsTight) {
  long loose_differs = 0, cases = 0;
  for (long n : {5L, 33L, 100L})
    for (long b : {2L, 3L, 4L, 8L}) {
      Band band = random_band(n, b, 6000 * n + b);
      const Chased sequential = chase(band);
      for (bool random_pick : {false, true}) {
        const Chased p = chase_pipelined(band, 1, random_pick);
        EXPECT_TRUE(bitwise_equal(sequential.d, p.d)) << "n=" << n << " b=" << b;
        EXPECT_TRUE(bitwise_equal(sequential.e, p.e)) << "n=" << n << " b=" << b;
        EXPECT_TRUE(bitwise_equal(sequential.U.v, p.U.v)) << "n=" << n << " b=" << b;
        EXPECT_TRUE(bitwise_equal(sequential.U.tau, p.U.tau)) << "n=" << n << " b=" << b;
      }
      const Chased loose = chase_pipelined(band, 0, false);
      ++cases;
      if (!bitwise_equal(sequential.U.v, loose.U.v)) ++loose_differs;
    }
  // One step less of lead lets a step read data the previous sweep has not finished.
  EXPECT_EQ(loose_differs, cases);
  RecordProperty("loose_differs", std::to_string(loose_differs) + "/" + std::to_string(cases));
}

// A band matrix that is already tridiagonal comes back unchanged, every tau zero (dlarfg's x = 0).
TEST(BulgeChasingSpecial, TridiagonalInWiderBandIsUnchanged) {
  const long n = 40, b = 6;
  Band band = random_band(n, b, 77);
  for (long j = 0; j < n; ++j)
    for (long i = 2; i <= b; ++i) band.ab[i + j * band.ldab] = 0.0;
  const Chased c = chase(band);
  for (long i = 0; i < n; ++i) EXPECT_EQ(c.d[i], band.ab[i * band.ldab]);
  for (long i = 0; i + 1 < n; ++i) EXPECT_EQ(c.e[i], band.ab[1 + i * band.ldab]);
  for (double tau : c.U.tau) EXPECT_EQ(tau, 0.0);
  EXPECT_TRUE(bitwise_equal(form_q(c.U, n), identity(n)));
}

// Columns already reduced in the middle of the band (tau = 0 for their first step) and a diagonal
// matrix (b = 0) still give B = Q T Q^T.
TEST(BulgeChasingSpecial, PartlyReducedAndDiagonal) {
  for (long b : {0L, 5L}) {
    const long n = 50;
    Band band = random_band(n, b, 91);
    for (long j = 10; j < 20; ++j)
      for (long i = 2; i <= b; ++i) band.ab[i + j * band.ldab] = 0.0;
    const Chased c = chase(band);
    EXPECT_LE(
        test::eigenvalue_difference(tridiagonal_eigenvalues(c.d, c.e), band_eigenvalues(band)),
        1e-13);
    const std::vector<double> q = form_q(c.U, n);
    EXPECT_LT(test::orthogonality(n, q), 10.0);
  }
}

TEST(BulgeChasingSpecial, BadArgumentsThrow) {
  std::vector<double> ab(64, 0.0), d(8), e(8), x(64, 0.0);
  ReflectorStore U;
  EXPECT_THROW(host::bulge_chase(-1, 2, ab.data(), 3, d.data(), e.data(), U),
               std::invalid_argument);
  EXPECT_THROW(host::bulge_chase(8, -1, ab.data(), 3, d.data(), e.data(), U),
               std::invalid_argument);
  EXPECT_THROW(host::bulge_chase(8, 3, ab.data(), 3, d.data(), e.data(), U), std::invalid_argument);
  EXPECT_NO_THROW(host::bulge_chase(3, 7, ab.data(), 3, d.data(), e.data(), U));  // b clamped to 2
  EXPECT_EQ(U.layout.b, 2);
  host::bulge_chase(8, 3, ab.data(), 4, d.data(), e.data(), U);
  EXPECT_THROW(host::apply_bc_back(U, 5, x.data(), 4), std::invalid_argument);
  EXPECT_THROW(host::apply_bc_back_left(U, 5, x.data(), 7), std::invalid_argument);
}

}  // namespace
}  // namespace pipevd
