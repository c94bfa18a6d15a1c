// The secular equation's per-root solver (core/secular_root.hpp, the function the GPU merge runs
// with one warp per root) on the host against LAPACK's dlaed4: every root and every delta
// d_j - lambda_i to a few ulps (the deltas relative to themselves: the eigenvectors are made of
// them; at k = 1 and 2, where dlaed4 returns the eigenvector instead, the eigenvector) on random,
// clustered, tiny-gap, tiny-z, dominant-z and large-rho problems, k from 1 (deflation leaves one or
// two roots of a clustered spectrum's merges) up to 2000.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/lapack_prototypes.hpp"
#include "core/secular_root.hpp"

namespace pipevd {
namespace {

enum class Kind { Random, Clustered, TinyGaps, TinyZ, DominantZ, LargeRho };
const char* name(Kind k) {
  switch (k) {
    case Kind::Random:
      return "random";
    case Kind::Clustered:
      return "clustered";
    case Kind::TinyGaps:
      return "tiny-gaps";
    case Kind::TinyZ:
      return "tiny-z";
    case Kind::DominantZ:
      return "dominant-z";
    case Kind::LargeRho:
      return "large-rho";
  }
  return "?";
}

struct Problem {
  std::vector<double> d, z;
  double rho = 1;
  long k() const { return static_cast<long>(d.size()); }
  double znorm2() const {
    double s = 0;
    for (double x : z) s += x * x;
    return s;
  }
  double scale() const {  // max(|d|, rho ||z||^2): the size of D + rho z z^T
    double dmax = 0;
    for (double x : d) dmax = std::max(dmax, std::fabs(x));
    return std::max(dmax, rho * znorm2());
  }
};

// Root i by the serial evaluation (the host implementation's).
SecularRoot serial_root(const Problem& p, long i) {
  return secular_root(p.k(), p.d.data(), p.rho, p.znorm2(), i,
                      SerialSecularEval{p.k(), p.d.data(), p.z.data(), i});
}

// Every root's origin pole and shifted value, as the z-hat products take them.
struct ShiftedRoots {
  std::vector<long> origin;
  std::vector<double> tau;
};
ShiftedRoots serial_roots(const Problem& p) {
  ShiftedRoots r{std::vector<long>(p.k()), std::vector<double>(p.k())};
  for (long i = 0; i < p.k(); ++i) {
    const SecularRoot root = serial_root(p, i);
    r.origin[i] = root.origin;
    r.tau[i] = root.tau;
  }
  return r;
}

// Distinct ascending poles and a unit z without zeros, as deflation leaves them.
Problem make(Kind kind, long k, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Problem p;
  p.d.resize(k);
  p.z.resize(k);
  for (auto& x : p.d) x = u(g);
  std::sort(p.d.begin(), p.d.end());
  if (kind == Kind::Clustered) {  // groups of 8 poles 1e-9 apart
    for (long j = 0; j < k; ++j) p.d[j] = std::floor(j / 8.0) / k + 1e-9 * (j % 8);
  } else if (kind == Kind::TinyGaps) {  // every other gap a few ulps of |d|
    for (long j = 1; j < k; j += 2) p.d[j] = p.d[j - 1] + 4e-15 * (1 + std::fabs(p.d[j - 1]));
    std::sort(p.d.begin(), p.d.end());
  }
  for (long j = 1; j < k; ++j)
    if (p.d[j] <= p.d[j - 1]) p.d[j] = std::nextafter(p.d[j - 1], 2.0);
  double nrm = 0;
  for (long j = 0; j < k; ++j) {
    double v = u(g);
    if (std::fabs(v) < 1e-3) v = 1e-3;
    if (kind == Kind::TinyZ && j % 3 == 0) v *= 1e-7;  // roots within ~1e-14 of their poles
    // All but the last root at their poles, the last within rounding of d_{k-1} + rho ||z||^2.
    if (kind == Kind::DominantZ && j + 1 < k) v *= 1e-9;
    p.z[j] = v;
    nrm += v * v;
  }
  for (auto& x : p.z) x /= std::sqrt(nrm);
  p.rho = kind == Kind::LargeRho ? 1e6 : (kind == Kind::TinyZ ? 0.5 : 1.3);
  return p;
}

void check(const Problem& p, const std::string& what) {
  const long k = static_cast<long>(p.d.size());
  const int ik = static_cast<int>(k);
  const double eps = std::numeric_limits<double>::epsilon();
  const double scale = p.scale();
  std::vector<double> delta(k);
  double worst_lambda = 0, worst_delta = 0, worst_step = 0;
  int max_iterations = 0;
  for (long i = 0; i < k; ++i) {
    int ii = static_cast<int>(i + 1), info = 0;
    double lambda = 0;
    dlaed4_(&ik, &ii, p.d.data(), p.z.data(), delta.data(), &p.rho, &lambda, &info);
    ASSERT_EQ(info, 0) << what << " root " << i;
    const SecularRoot r = serial_root(p, i);
    ASSERT_TRUE(r.converged) << what << " root " << i;
    max_iterations = std::max(max_iterations, r.iterations);
    ASSERT_TRUE(r.origin == i || r.origin == i + 1) << what << " root " << i;
    const double mine = p.d[r.origin] + r.tau;
    worst_lambda = std::max(worst_lambda, std::fabs(mine - lambda) / (eps * scale));
    // The root lies strictly between its poles (in the shifted variable: d_o + tau may round to
    // the pole itself).
    ASSERT_TRUE(r.origin == i ? r.tau > 0 : r.tau < 0) << what << " root " << i;
    // Both solvers stop once |f| is below a rounding-error bound e, so each root is within about
    // e / f' (the root's condition) of the exact root of the stored problem. Ours is checked
    // against that in extended precision (the Newton step there), and the deltas against dlaed4's
    // to both solvers' bounds (dlaed4's is looser) plus a few ulps of the terms they are made of
    // ((d_j - d_o) - tau; dlaed4's origin may be the other pole).
    double abs_sum = 1.0 / p.rho, deriv = 0;
    long double f_ext = 1.0L / p.rho, df_ext = 0;
    for (long j = 0; j < k; ++j) {
      const double dm = secular_delta(p.d.data(), j, r.origin, r.tau);
      abs_sum += p.z[j] * p.z[j] / std::fabs(dm);
      deriv += (p.z[j] / dm) * (p.z[j] / dm);
      const long double de = (static_cast<long double>(p.d[j]) - p.d[r.origin]) - r.tau;
      const long double zz = static_cast<long double>(p.z[j]) * p.z[j];
      f_ext += zz / de;
      df_ext += zz / (de * de);
    }
    const double cond = eps * (8.0 * abs_sum + 3.0 * std::fabs(r.tau) * deriv) / deriv;
    const double step = static_cast<double>(std::fabs(f_ext / df_ext));
    worst_step = std::max(worst_step, step / (cond + eps * std::fabs(r.tau)));
    ASSERT_LE(step, 4.0 * cond + 4.0 * eps * std::fabs(r.tau)) << what << " root " << i;
    if (k <= 2) {
      // dlaed4 returns the unit eigenvector (z_j / (d_j - lambda))_j here, not the deltas (the
      // deltas' accuracy is the root's, checked above): ours, z ./ delta normalised, against it
      // up to sign.
      double nrm = 0, dot = 0;
      for (long j = 0; j < k; ++j) {
        const double v = p.z[j] / secular_delta(p.d.data(), j, r.origin, r.tau);
        nrm += v * v;
        dot += v * delta[j];
      }
      nrm = std::sqrt(nrm);
      for (long j = 0; j < k; ++j) {
        const double v = p.z[j] / secular_delta(p.d.data(), j, r.origin, r.tau) / nrm;
        const double diff = std::fabs((dot < 0 ? -v : v) - delta[j]);
        worst_delta = std::max(worst_delta, diff / eps);
        ASSERT_LE(diff, 8.0 * eps + 64.0 * cond / std::fabs(r.tau))
            << what << " root " << i << " j " << j;
      }
      continue;
    }
    for (long j = 0; j < k; ++j) {
      const double dm = secular_delta(p.d.data(), j, r.origin, r.tau);
      ASSERT_EQ(std::signbit(dm), std::signbit(delta[j])) << what << " root " << i << " j " << j;
      const double diff = std::fabs(dm - delta[j]);
      worst_delta = std::max(worst_delta, diff / (eps * std::fabs(delta[j])));
      const double terms =
          std::fabs(delta[j]) + std::fabs(p.d[j] - p.d[r.origin]) + std::fabs(r.tau);
      ASSERT_LE(diff, 4.0 * eps * terms + 64.0 * cond) << what << " root " << i << " j " << j;
    }
  }
  // Eigenvalues to a few ulps of ||D + rho z z^T|| (clustered poles make both solvers' error
  // bounds larger), and few evaluations per root.
  EXPECT_LE(worst_lambda, 16.0) << what;
  EXPECT_LE(max_iterations, 40) << what;
  std::printf(
      "%-18s |lambda - dlaed4| %.2f eps||T||, delta vs dlaed4 %.1f eps|delta|, "
      "step %.2f bounds, evaluations %d\n",
      what.c_str(), worst_lambda, worst_delta, worst_step, max_iterations);
}

TEST(SecularRoot, AgainstDlaed4) {
  for (Kind kind : {Kind::Random, Kind::Clustered, Kind::TinyGaps, Kind::TinyZ, Kind::DominantZ,
                    Kind::LargeRho})
    for (long k : {1L, 2L, 3L, 4L, 17L, 200L, 2000L})
      check(make(kind, k, 5 + static_cast<unsigned>(k)),
            std::string(name(kind)) + " k=" + std::to_string(k));
}

// The GPU kernel's sums: 32 lanes' strided partial sums combined by an xor butterfly (emulated
// here lane by lane). Every lane must end with the same sums (so a warp's lanes take the same
// steps), and the roots must agree with the serial sums' to a few ulps.
struct ButterflyEval {
  long k;
  const double* d;
  const double* z;
  long i;
  SecularSums operator()(long o, double tau) const {
    SecularSums lane[32];
    for (int l = 0; l < 32; ++l) lane[l] = secular_partial_sums(k, d, z, i, o, tau, l, 32);
    for (int m = 16; m >= 1; m /= 2) {
      SecularSums next[32];
      for (int l = 0; l < 32; ++l) {
        next[l].psi = lane[l].psi + lane[l ^ m].psi;
        next[l].dpsi = lane[l].dpsi + lane[l ^ m].dpsi;
        next[l].phi = lane[l].phi + lane[l ^ m].phi;
        next[l].dphi = lane[l].dphi + lane[l ^ m].dphi;
      }
      std::copy(next, next + 32, lane);
    }
    for (int l = 1; l < 32; ++l)
      EXPECT_TRUE(lane[l].psi == lane[0].psi && lane[l].dpsi == lane[0].dpsi &&
                  lane[l].phi == lane[0].phi && lane[l].dphi == lane[0].dphi);
    return lane[0];
  }
};

TEST(SecularRoot, WarpSumsAgreeWithSerialSums) {
  const double eps = std::numeric_limits<double>::epsilon();
  for (Kind kind : {Kind::Random, Kind::Clustered, Kind::TinyZ, Kind::DominantZ, Kind::LargeRho})
    for (long k : {1L, 2L, 700L}) {
      const Problem p = make(kind, k, 41);
      const double znorm2 = p.znorm2(), scale = p.scale();
      for (long i = 0; i < k; ++i) {
        const SecularRoot a = serial_root(p, i);
        const SecularRoot b = secular_root(k, p.d.data(), p.rho, znorm2, i,
                                           ButterflyEval{k, p.d.data(), p.z.data(), i});
        ASSERT_TRUE(a.converged && b.converged) << name(kind) << " k=" << k << " root " << i;
        ASSERT_LE(std::fabs((p.d[a.origin] + a.tau) - (p.d[b.origin] + b.tau)), 8 * eps * scale)
            << name(kind) << " k=" << k << " root " << i;
      }
    }
}

// z-hat as the GPU forms it (32 lanes' strided partial products, then an xor butterfly) against
// the serial product: finite, and equal to a few ulps per factor.
TEST(SecularRoot, ZhatButterflyProductMatchesSerial) {
  const double eps = std::numeric_limits<double>::epsilon();
  for (Kind kind : {Kind::Random, Kind::Clustered, Kind::TinyZ, Kind::TinyGaps})
    for (long k : {1L, 2L, 2000L}) {
      const Problem p = make(kind, k, 43);
      const auto [origin, tau] = serial_roots(p);
      double worst = 0;
      for (long j = 0; j < k; ++j) {
        double serial = -secular_delta(p.d.data(), j, origin[j], tau[j]) / p.rho;
        for (long i = 0; i < k; ++i)
          if (i != j) serial *= zhat_factor(p.d.data(), j, i, origin.data(), tau.data());
        double lane[32];
        for (int l = 0; l < 32; ++l) {
          lane[l] = 1.0;
          for (long i = l; i < k; i += 32)
            if (i != j) lane[l] *= zhat_factor(p.d.data(), j, i, origin.data(), tau.data());
        }
        for (int m = 16; m >= 1; m /= 2) {
          double next[32];
          for (int l = 0; l < 32; ++l) next[l] = lane[l] * lane[l ^ m];
          std::copy(next, next + 32, lane);
        }
        const double warp = lane[0] * (-secular_delta(p.d.data(), j, origin[j], tau[j]) / p.rho);
        ASSERT_TRUE(std::isnormal(warp) && std::isnormal(serial))
            << name(kind) << " k=" << k << " j " << j;
        worst = std::max(worst, std::fabs(warp - serial) / std::fabs(serial));
      }
      EXPECT_LE(worst, 4.0 * k * eps) << name(kind) << " k=" << k;
      std::printf("%-10s k=%-4ld z-hat^2, butterfly vs serial product: %.1f eps\n", name(kind), k,
                  worst / eps);
    }
}

TEST(SecularRoot, ZhatFactorsArePositive) {
  // Gu-Eisenstat's products from the computed roots: every factor positive (interlacing).
  for (long k : {2L, 300L}) {
    const Problem p = make(Kind::Random, k, 3);
    const auto [origin, tau] = serial_roots(p);
    for (long j = 0; j < k; ++j)
      for (long i = 0; i < k; ++i)
        if (i != j) ASSERT_GT(zhat_factor(p.d.data(), j, i, origin.data(), tau.data()), 0.0);
  }
}

}  // namespace
}  // namespace pipevd
