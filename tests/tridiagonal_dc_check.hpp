// The D&C tridiagonal solver's checks, shared by the host test and the GPU test: test matrices T
// (among them T whose merges deflate to a chosen number of roots) and the comparison of
// tridiagonal_dc (on any backend) with LAPACK's dstedc on the same T.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.hpp"
#include "core/lapack_prototypes.hpp"
#include "core/tridiagonal_dc.hpp"
#include "core/tridiagonal_solver.hpp"
#include "tests/support/spectra.hpp"

extern "C" void dsytrd_(const char*, const int*, double*, const int*, double*, double*, double*,
                        double*, const int*, int*, std::size_t);

namespace pipevd::test {

enum class TKind {
  Random,
  Toeplitz121,
  Wilkinson,
  GluedWilkinson,
  Identity,
  Splits,
  Tiny,
  Spectrum
};

struct Tridiagonal {
  std::vector<double> d, e;  // e has n entries (last unused)
};

inline const char* to_string(TKind k) {
  switch (k) {
    case TKind::Random:
      return "random";
    case TKind::Toeplitz121:
      return "toeplitz121";
    case TKind::Wilkinson:
      return "wilkinson";
    case TKind::GluedWilkinson:
      return "glued_wilkinson";
    case TKind::Identity:
      return "identity_like";
    case TKind::Splits:
      return "splits";
    case TKind::Tiny:
      return "tiny";
    case TKind::Spectrum:
      return "spectrum";
  }
  return "?";
}

// T of kind `k`; for Spectrum, the tridiagonal form (dsytrd) of a matrix with spectrum `s`.
inline Tridiagonal make_tridiagonal(TKind k, long n, unsigned seed,
                                    Spectrum s = Spectrum::Cluster0) {
  Tridiagonal t{std::vector<double>(n), std::vector<double>(std::max(1L, n), 0.0)};
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  switch (k) {
    case TKind::Random:
      for (long i = 0; i < n; ++i) t.d[i] = u(g), t.e[i] = u(g);
      break;
    case TKind::Toeplitz121:
      for (long i = 0; i < n; ++i) t.d[i] = 2.0, t.e[i] = 1.0;
      break;
    case TKind::Wilkinson:  // W_m^+ with m = n: d = |(m-1)/2 - i|, e = 1
      for (long i = 0; i < n; ++i) t.d[i] = std::fabs((n - 1) / 2.0 - i), t.e[i] = 1.0;
      break;
    case TKind::GluedWilkinson:  // W21+ blocks glued by 1e-10 (tight clusters of pairs)
      for (long i = 0; i < n; ++i) {
        const long j = i % 21;
        t.d[i] = std::fabs(10.0 - j);
        t.e[i] = j == 20 ? 1e-10 : 1.0;
      }
      break;
    case TKind::Identity:  // eigenvalues 1 and 1 + O(1e-14): almost everything deflates
      for (long i = 0; i < n; ++i) t.d[i] = 1.0, t.e[i] = 1e-14 * u(g);
      break;
    case TKind::Splits:  // every 7th off-diagonal zero, a few blocks of one
      for (long i = 0; i < n; ++i) t.d[i] = u(g), t.e[i] = (i % 7 == 6 || i % 13 == 0) ? 0.0 : u(g);
      break;
    case TKind::Tiny:  // entries spread over 1e-300 .. 1e0 and tiny off-diagonals
      for (long i = 0; i < n; ++i) {
        t.d[i] = u(g) * std::pow(10.0, -static_cast<double>(i % 5) * 3);
        t.e[i] = u(g) * (i % 3 == 0 ? 1e-200 : 1e-3);
      }
      break;
    case TKind::Spectrum: {
      const std::vector<double> lam = eigenvalues_of(s, n, seed);
      std::vector<double> a = matrix_with_eigenvalues(lam, seed + 1);
      const int in = static_cast<int>(n);
      std::vector<double> tau(std::max(1L, n)), work(1);
      int lwork = -1, info = 0;
      dsytrd_("L", &in, a.data(), &in, t.d.data(), t.e.data(), tau.data(), work.data(), &lwork,
              &info, 1);
      lwork = static_cast<int>(work[0]);
      work.resize(std::max(1, lwork));
      dsytrd_("L", &in, a.data(), &in, t.d.data(), t.e.data(), tau.data(), work.data(), &lwork,
              &info, 1);
      break;
    }
  }
  if (n > 0) t.e[n - 1] = 0.0;
  return t;
}

// tridiagonal_dc on `be` against dstedc: eigenvalues within n eps ||T||, residual
// ||T Q - Q diag(d)||_1 / (n eps ||T||) and orthogonality ||Q^T Q - I||_1 / (n eps) below 10
// (LAPACK's own tests accept ratios below 30).
// *stats and *eigenvalues: the run's DcStats and eigenvalues.
inline void check_dc(EngineBackend& be, const Tridiagonal& t, const DcOptions& opt,
                     const std::string& what, DcStats* stats = nullptr,
                     std::vector<double>* eigenvalues = nullptr) {
  const long n = static_cast<long>(t.d.size());
  double tnorm = 0;
  for (long i = 0; i < n; ++i)
    tnorm = std::max(tnorm, std::fabs(t.d[i]) + (i > 0 ? std::fabs(t.e[i - 1]) : 0.0) +
                                (i + 1 < n ? std::fabs(t.e[i]) : 0.0));
  tnorm = std::max(tnorm, DBL_MIN);
  std::vector<double> dref = t.d, eref = t.e, qref(n * n);
  if (tridiagonal_eigenpairs(n, dref.data(), eref.data(), qref.data()) != 0) {
    // Reference LAPACK's dstedc fails on some glued Wilkinson matrices (seen at n = 4099: its
    // dlaed4 does not converge); the eigenvalues then come from dsterf (QR, no D&C).
    std::printf("%s: dstedc failed, eigenvalues compared with dsterf's\n", what.c_str());
    dref = t.d;
    eref = t.e;
    ASSERT_EQ(tridiagonal_eigenvalues(n, dref.data(), eref.data()), 0) << what;
  }

  std::vector<double> d = t.d;
  const long ldq = n + 3;  // a leading dimension larger than n
  DeviceBuffer qd(be, ldq * n);
  ASSERT_EQ(tridiagonal_dc(be, n, d.data(), t.e.data(), qd.get(), ldq, opt, stats), 0) << what;
  std::vector<double> q(ldq * n);
  be.copy_to_host(qd.get(), q.data(), ldq * n);

  const double ne = std::max(1L, n) * DBL_EPSILON;
  double dev = 0;
  for (long i = 0; i < n; ++i) {
    if (i > 0) EXPECT_LE(d[i - 1], d[i]) << what << " not ascending at " << i;
    dev = std::max(dev, std::fabs(d[i] - dref[i]));
  }
  EXPECT_LE(dev, ne * tnorm) << what << ": eigenvalues differ from dstedc's";
  if (eigenvalues) *eigenvalues = d;

  double res = 0, orth = 0;
  for (long j = 0; j < n; ++j) {
    const double* qj = q.data() + j * ldq;
    double col = 0;
    for (long i = 0; i < n; ++i) {
      double tq = t.d[i] * qj[i];
      if (i > 0) tq += t.e[i - 1] * qj[i - 1];
      if (i + 1 < n) tq += t.e[i] * qj[i + 1];
      col += std::fabs(tq - d[j] * qj[i]);
    }
    res = std::max(res, col);
  }
  // Q^T Q - I by dgemm (column sums of absolute values: the 1-norm).
  const int in = static_cast<int>(n), il = static_cast<int>(ldq);
  const double one = 1.0, zero = 0.0;
  std::vector<double> g(n * n);
  dgemm_("T", "N", &in, &in, &in, &one, q.data(), &il, q.data(), &il, &zero, g.data(), &in, 1, 1);
  for (long j = 0; j < n; ++j) {
    double col = 0;
    for (long i = 0; i < n; ++i) col += std::fabs(g[i + j * n] - (i == j ? 1.0 : 0.0));
    orth = std::max(orth, col);
  }
  EXPECT_LT(res / (ne * tnorm), 10.0) << what << ": residual";
  EXPECT_LT(orth / ne, 10.0) << what << ": orthogonality";
  // Rows outside the leading n of each column are not written.
  for (long j = 0; j < n; ++j)
    for (long i = n; i < ldq; ++i) ASSERT_EQ(q[i + j * ldq], 0.0) << what << " wrote past n";
}

// tridiagonal_dc_fold on `be` against tridiagonal_dc with the same options: the same eigenvalues,
// bitwise (the fold changes no secular problem), and Q_pre M equal to tridiagonal_dc's Q_d to
// rounding (the same products, with Q_pre's zeros between the blocks); nothing folded (no merge)
// leaves Q_d itself, bitwise. *folded: whether it folded.
inline void check_dc_fold(EngineBackend& be, const std::vector<double>& d0,
                          const std::vector<double>& e0, const DcOptions& opt,
                          const std::string& what, bool* folded) {
  const long n = static_cast<long>(d0.size());
  std::vector<double> dw = d0, df = d0;
  DeviceBuffer qw(be, std::max(1L, n * n));
  ASSERT_EQ(tridiagonal_dc(be, n, dw.data(), e0.data(), qw.get(), n, opt), 0) << what;
  DcFold fold;
  ASSERT_EQ(tridiagonal_dc_fold(be, n, df.data(), e0.data(), fold, opt), 0) << what;
  EXPECT_TRUE(dw == df) << what << ": eigenvalues differ from tridiagonal_dc's";
  *folded = fold.folded;
  if (n == 0) return;
  std::vector<double> want(n * n), got(n * n), m(n * n);
  be.copy_to_host(qw.get(), want.data(), n * n);
  be.copy_to_host(fold.m.get(), m.data(), n * n);
  if (!fold.folded) {
    EXPECT_TRUE(fold.orders.empty() && fold.q_pre.get() == nullptr) << what;
    EXPECT_TRUE(m == want) << what << ": Q_d unfolded differs from tridiagonal_dc's";
    return;
  }
  // Q_pre from its packed blocks, then Q_pre M on the host.
  long sum = 0, packed = 0;
  for (long o : fold.orders) sum += o, packed += o * o;
  ASSERT_EQ(sum, n) << what;
  std::vector<double> blocks(packed), q_pre(n * n, 0.0);
  be.copy_to_host(fold.q_pre.get(), blocks.data(), packed);
  long s = 0, off = 0;
  for (long o : fold.orders) {
    for (long j = 0; j < o; ++j)
      for (long i = 0; i < o; ++i) q_pre[(s + i) + (s + j) * n] = blocks[off + i + j * o];
    s += o;
    off += o * o;
  }
  const int in = static_cast<int>(n);
  const double one = 1.0, zero = 0.0;
  dgemm_("N", "N", &in, &in, &in, &one, q_pre.data(), &in, m.data(), &in, &zero, got.data(), &in, 1,
         1);
  double diff = 0;
  for (long i = 0; i < n * n; ++i) diff = std::max(diff, std::fabs(got[i] - want[i]));
  EXPECT_LE(diff, 8 * n * DBL_EPSILON) << what << ": Q_pre M differs from Q_d";
}

// The intervals [a, b) of the merges of an unreduced block of order m in tridiagonal_dc (leaves
// of at most `leaf`): halved level by level, every interval of a level at once, while one of the
// level's is larger than a leaf (core/tridiagonal_dc.cpp's solve_block), each split at
// a + (b - a) / 2.
inline std::vector<std::pair<long, long>> dc_merge_intervals(long m, long leaf) {
  leaf = std::max(2L, leaf);
  std::vector<std::pair<long, long>> merges, level{{0, m}};
  while (std::any_of(level.begin(), level.end(),
                     [&](const auto& iv) { return iv.second - iv.first > leaf; })) {
    std::vector<std::pair<long, long>> next;
    for (auto [a, b] : level) {
      merges.push_back({a, b});
      next.push_back({a, a + (b - a) / 2});
      next.push_back({a + (b - a) / 2, b});
    }
    level = std::move(next);
  }
  return merges;
}

// The orders of tridiagonal_dc's merges on T: those of its unreduced blocks (split where
// |e_i| <= eps sqrt(|d_i|) sqrt(|d_i+1|)) of order > 1 and not zero.
inline std::vector<long> dc_merge_orders(const Tridiagonal& t, long leaf) {
  const long n = static_cast<long>(t.d.size());
  std::vector<long> orders;
  for (long s = 0, i = 0; i < n; ++i) {
    if (i + 1 < n && std::fabs(t.e[i]) > DBL_EPSILON * std::sqrt(std::fabs(t.d[i])) *
                                             std::sqrt(std::fabs(t.d[i + 1])))
      continue;
    double scale = 0;
    for (long j = s; j <= i; ++j)
      scale = std::max({scale, std::fabs(t.d[j]), j < i ? std::fabs(t.e[j]) : 0.0});
    if (scale != 0)
      for (auto [a, b] : dc_merge_intervals(i + 1 - s, leaf)) orders.push_back(b - a);
    s = i + 1;
  }
  return orders;
}

// T whose D&C merges (leaves of at most `leaf` >= 8) each keep exactly `roots` (0, 1 or 2) of
// their secular problem, all else deflated. Unreduced blocks of the given orders (zeros between
// them), d = 1 and off-diagonals of 3e-16 to 4e-16 (above negligible, but every z entry they make
// is below the deflation tolerance). roots >= 1: at every merge's split p, e_{p-1} = 1/4; rows
// p - 1 and p are isolated in the two children, so both children have the pole 3/4 with z entries
// of 1/sqrt(2), which a rotation deflates to one root. roots = 2: also e_{p-2} = e_p = 1/2, so the
// children's last and first rows belong to 2 x 2 blocks with the same two poles (far from 1),
// rotated to two roots.
inline Tridiagonal make_deflating(const std::vector<long>& blocks, long leaf, int roots,
                                  unsigned seed) {
  long n = 0;
  for (long m : blocks) n += m;
  Tridiagonal t{std::vector<double>(n, 1.0), std::vector<double>(std::max(1L, n), 0.0)};
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& x : t.e) x = std::copysign(3.5e-16 + 0.5e-16 * u(g), u(g));
  long s = 0;
  for (long m : blocks) {
    if (roots > 0)
      for (auto [a, b] : dc_merge_intervals(m, leaf)) {
        const long p = s + a + (b - a) / 2;
        t.e[p - 1] = 0.25;
        if (roots > 1) t.e[p - 2] = t.e[p] = 0.5;
      }
    s += m;
    t.e[s - 1] = 0.0;  // the block ends (the last entry is unused)
  }
  return t;
}

// The backend's merge (opt.merge_on_device = 1) on a heavily deflating T: check_dc (eigenvalues,
// residual, orthogonality against dstedc), the eigenvalues within `ulps` eps ||T|| of dstedc's
// and of the host merge's (dlaed4, M built on the host), every merge of order >= device_merge_min
// on the backend's path and, where `deflated` >= 0, that many columns deflated over all merges;
// then tridiagonal_dc_fold against tridiagonal_dc. Returns whether the fold folded.
inline bool check_dc_deflated(EngineBackend& be, const Tridiagonal& t, const DcOptions& opt,
                              const std::string& what, long deflated = -1, double ulps = 4) {
  const long n = static_cast<long>(t.d.size());
  const std::vector<long> orders = dc_merge_orders(t, opt.leaf);
  const long on_backend = std::count_if(orders.begin(), orders.end(), [&](long k) {
    return k >= std::max(1L, opt.device_merge_min);
  });
  DcStats st;
  std::vector<double> dd;
  check_dc(be, t, opt, what, &st, &dd);
  EXPECT_EQ(st.merges, static_cast<long>(orders.size())) << what;
  EXPECT_EQ(st.device_merges, on_backend) << what;
  // Nothing crosses from the host where every merge is on the backend's path.
  if (on_backend == static_cast<long>(orders.size())) EXPECT_EQ(st.panels, 0) << what;
  if (deflated >= 0) EXPECT_EQ(st.deflated, deflated) << what;

  std::vector<double> dref = t.d, e = t.e, dh = t.d;
  {
    std::vector<double> q(std::max(1L, n * n));
    EXPECT_EQ(tridiagonal_eigenpairs(n, dref.data(), e.data(), q.data()), 0) << what;
  }
  DcOptions host = opt;
  host.merge_on_device = 0;
  DcStats sh;
  {
    DeviceBuffer qh(be, std::max(1L, n * n));
    EXPECT_EQ(tridiagonal_dc(be, n, dh.data(), t.e.data(), qh.get(), n, host, &sh), 0) << what;
  }
  EXPECT_EQ(sh.device_merges, 0) << what;
  double tnorm = DBL_MIN, ref = 0, hm = 0;
  for (long i = 0; i < n; ++i)
    tnorm = std::max(tnorm, std::fabs(t.d[i]) + (i > 0 ? std::fabs(t.e[i - 1]) : 0.0) +
                                (i + 1 < n ? std::fabs(t.e[i]) : 0.0));
  for (long i = 0; i < n && static_cast<long>(dd.size()) == n; ++i) {
    ref = std::max(ref, std::fabs(dd[i] - dref[i]) / (DBL_EPSILON * tnorm));
    hm = std::max(hm, std::fabs(dd[i] - dh[i]) / (DBL_EPSILON * tnorm));
  }
  EXPECT_LE(ref, ulps) << what << ": eigenvalues vs dstedc's";
  EXPECT_LE(hm, ulps) << what << ": eigenvalues vs the host merge's";
  std::printf(
      "%s: merges %ld (%ld on the backend, of %ld of order >= %ld), deflated %ld of %ld, "
      "panels %ld; |lambda - dstedc| %.2f, |lambda - host merge| %.2f eps ||T||\n",
      what.c_str(), st.merges, st.device_merges, on_backend, opt.device_merge_min, st.deflated,
      std::accumulate(orders.begin(), orders.end(), 0L), st.panels, ref, hm);
  bool folded = false;
  check_dc_fold(be, t.d, t.e, opt, what + " (fold)", &folded);
  return folded;
}

// make_deflating's T of `blocks` (`roots` roots a merge, `seed`) through check_dc_deflated with
// its exact count of deflated columns: every merge deflates all but `roots` of its order.
inline bool check_dc_deflating_blocks(EngineBackend& be, const std::vector<long>& blocks,
                                      const DcOptions& opt, int roots, unsigned seed) {
  long n = 0, deflated = 0;
  for (long m : blocks) {
    n += m;
    for (auto [a, b] : dc_merge_intervals(m, opt.leaf)) deflated += b - a - roots;
  }
  const std::string what = "roots " + std::to_string(roots) + " n=" + std::to_string(n) +
                           " blocks=" + std::to_string(blocks.size());
  return check_dc_deflated(be, make_deflating(blocks, opt.leaf, roots, seed), opt, what, deflated);
}

}  // namespace pipevd::test
