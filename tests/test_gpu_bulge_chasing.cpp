// GPU bulge chasing against the host's (host/bulge_chasing.hpp) on the same band matrices, for
// b in {2, 4, 8, 16, 32, 64} and n in {3, 33, 1000, 4099, 20000}: the same T (d, e up to the signs
// of e, T's eigenvalues) and the same reflectors to rounding; repeated runs bitwise identical (a
// moving result would be a race between sweeps); tunables that change only the schedule give
// bitwise the same results.
//
// What "to rounding" means here. Both sides apply dlarfg's normalisation, so there is no sign
// freedom except one: a column that is already zero. Bulges of long sweeps decay geometrically and
// reach underflow; where one side's bulge column is exactly 0 (H = I, tau = 0) and the other's a
// subnormal (H = I - 2 e1 e1^T, tau = 2, v ~ 0), the two T differ by a similarity with a diagonal
// of +-1: d and |e| and |v| agree, the signs of e and v may not. So e and v are compared in
// absolute value, and tau where the reflector is not such a trivial one. And T is a sensitive
// function of B where a bulge column is near the rounding level (the reflector that annihilates it
// is then set by rounding): a reflector's error is about the error of its column over |beta| (the
// norm of that column), so v and tau differences are weighted by |beta|, which the oracle keeps.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/reflector_store.hpp"
#include "gpu/bulge_chasing.cuh"
#include "host/bulge_chasing.hpp"

extern "C" void dsterf_(const int* n, double* d, double* e, int* info);

namespace pipevd {
namespace {

struct Band {
  long n, b, ldab;
  std::vector<double> ab;
};

Band random_band(long n, long b, unsigned seed) {
  Band band{n, b, std::max(1L, b + 1), {}};
  band.ab.assign(static_cast<size_t>(std::max(1L, n * band.ldab)), 0.0);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (long j = 0; j < n; ++j)
    for (long i = j; i <= std::min(n - 1, j + b); ++i) band.ab[(i - j) + j * band.ldab] = u(gen);
  return band;
}

struct Result {
  std::vector<double> d, e;
  ReflectorStore U;
  std::vector<double> beta;  // the oracle's: beta of each reflector (dlarfg's new alpha)
};

// The host oracle with sweeps pipelined over all cores (the prerequisite rule of
// ReflectorLayout, under which host::chase_step gives bitwise host::bulge_chase's results; the
// host tests check that), so that n = 20000 stays affordable.
Result host_oracle(const Band& band) {
  const long n = band.n, bw = std::max(0L, std::min(band.b, n - 1));
  const ReflectorLayout L{n, bw};
  Result r{std::vector<double>(std::max(1L, n)),
           std::vector<double>(std::max(1L, n)),
           ReflectorStore(n, bw),
           {}};
  r.beta.assign(static_cast<size_t>(L.count()), 0.0);
  if (n == 0) return r;
  host::BulgeBand a(L, band.ab.data(), band.ldab);
  const long sweeps = L.sweeps();
  std::unique_ptr<std::atomic<long>[]> progress(new std::atomic<long>[std::max(1L, sweeps)]);
  for (long s = 0; s < sweeps; ++s) progress[s].store(0);
  const long threads =
      std::max(1L, std::min<long>(sweeps, std::max(1u, std::thread::hardware_concurrency())));
  auto worker = [&](long k) {
    for (long s = k; s < sweeps; s += threads)
      for (long t = 0; t < L.steps(s); ++t) {
        if (s > 0)
          while (progress[s - 1].load(std::memory_order_acquire) < L.prerequisite(s, t) + 1)
            std::this_thread::yield();
        host::chase_step(a, L, s, t, r.U.vector(s, t), r.U.tau_of(s, t));
        // A(first, c) holds beta until sweep s+1 (which waits for the store below) updates it.
        const long first = L.first_row(s, t);
        r.beta[L.index(s, t)] = a(first, t == 0 ? s : first - bw);
        progress[s].store(t + 1, std::memory_order_release);
      }
  };
  std::vector<std::thread> pool;
  for (long k = 0; k < threads; ++k) pool.emplace_back(worker, k);
  for (auto& th : pool) th.join();
  for (long i = 0; i < n; ++i) r.d[i] = a(i, i);
  for (long i = 0; i + 1 < n; ++i) r.e[i] = bw >= 1 ? a(i + 1, i) : 0.0;
  return r;
}

Result gpu_run(const Band& band, const gpu::BulgeChasingTunables& tun, bool with_u = true) {
  Result r{std::vector<double>(std::max(1L, band.n)),
           std::vector<double>(std::max(1L, band.n)),
           ReflectorStore(),
           {}};
  gpu::bulge_chase_from_host(band.n, band.b, band.ab.data(), band.ldab, r.d.data(), r.e.data(),
                             with_u ? &r.U : nullptr, tun);
  return r;
}

gpu::BulgeChasingTunables defaults(long b) {
  int device = 0;
  cudaGetDevice(&device);
  return gpu::default_bulge_chasing_tunables(device, b);
}

bool bitwise_equal(const Result& x, const Result& y) {  // d, e, v, tau
  auto same = [](const std::vector<double>& p, const std::vector<double>& q) {
    return p.size() == q.size() && std::memcmp(p.data(), q.data(), sizeof(double) * p.size()) == 0;
  };
  return same(x.d, y.d) && same(x.e, y.e) && same(x.U.v, y.U.v) && same(x.U.tau, y.U.tau);
}

std::vector<double> eigenvalues(std::vector<double> d, std::vector<double> e, long n) {
  int info = 0;
  const int in = static_cast<int>(n);
  if (n > 0) dsterf_(&in, d.data(), e.data(), &info);
  EXPECT_EQ(info, 0);
  d.resize(static_cast<size_t>(n));
  return d;
}

// GPU == host to rounding (see the top of the file). ||B||_inf <= 2b + 1 for entries in [-1, 1].
void expect_matches_host(const Band& band, const Result& g, const Result& h) {
  const long n = band.n;
  const double norm = 2.0 * band.b + 1.0;
  const double tol_t = 1e-7 * norm;                                     // d, |e|, |beta| |dv|
  const double tol_eig = 100.0 * DBL_EPSILON * std::max(1L, n) * norm;  // T's eigenvalues
  ASSERT_EQ(g.U.layout.n, h.U.layout.n);
  ASSERT_EQ(g.U.layout.b, h.U.layout.b);
  ASSERT_EQ(g.U.v.size(), h.U.v.size());
  ASSERT_EQ(g.U.tau.size(), h.U.tau.size());
  double dd = 0.0, de = 0.0, dv = 0.0, dvw = 0.0, dt = 0.0, dtw = 0.0, deig = 0.0;
  long sign_flips = 0, trivial = 0;
  for (long i = 0; i < n; ++i) dd = std::max(dd, std::fabs(g.d[i] - h.d[i]));
  for (long i = 0; i + 1 < n; ++i) {
    de = std::max(de, std::fabs(std::fabs(g.e[i]) - std::fabs(h.e[i])));
    sign_flips += (g.e[i] < 0) != (h.e[i] < 0);
  }
  const ReflectorLayout& L = h.U.layout;
  const long b = L.b;
  for (long k = 0; k < L.count(); ++k) {
    const double beta = std::fabs(h.beta[k]);
    double rest = 0.0, dk = 0.0;
    for (long i = 0; i < b; ++i) {
      const double x = g.U.v[k * b + i], y = h.U.v[k * b + i];
      if (i > 0) rest = std::max(rest, std::max(std::fabs(x), std::fabs(y)));
      dk = std::max(dk, std::fabs(std::fabs(x) - std::fabs(y)));
    }
    dv = std::max(dv, dk);
    dvw = std::max(dvw, dk * beta);
    if (rest < 1e-150) {  // x = 0 up to underflow: tau = 0 and tau = 2 are both right
      ++trivial;
      continue;
    }
    const double dtk = std::fabs(g.U.tau[k] - h.U.tau[k]);
    dt = std::max(dt, dtk);
    dtw = std::max(dtw, dtk * beta);
  }
  if (n <= 5000) {
    const auto lg = eigenvalues(g.d, g.e, n), lh = eigenvalues(h.d, h.e, n);
    for (long i = 0; i < n; ++i) deig = std::max(deig, std::fabs(lg[i] - lh[i]));
  }
  std::printf(
      "  n = %ld, b = %ld: |d-d_h| %.1e, ||e|-|e_h|| %.1e (tol %.0e), eig %.1e (tol %.0e), "
      "||v|-|v_h|| %.1e (x|beta| %.1e), |tau-tau_h| %.1e (x|beta| %.1e); %ld sign flips "
      "of e, %ld trivial reflectors\n",
      n, band.b, dd, de, tol_t, deig, tol_eig, dv, dvw, dt, dtw, sign_flips, trivial);
  EXPECT_LE(dd, tol_t);
  EXPECT_LE(de, tol_t);
  EXPECT_LE(deig, tol_eig);
  EXPECT_LE(dvw, tol_t);
  EXPECT_LE(dtw, tol_t);
}

class GpuBulgeChasing : public ::testing::TestWithParam<std::tuple<long, long>> {};

TEST_P(GpuBulgeChasing, MatchesHostAndRepeatsBitwise) {
  const auto [n, b] = GetParam();
  const Band band = random_band(n, b, static_cast<unsigned>(1000 * n + b));
  const Result h = host_oracle(band);
  const auto tun = defaults(b);
  const Result g = gpu_run(band, tun);
  expect_matches_host(band, g, h);
  const int repeats = n >= 20000 ? 2 : 4;
  for (int k = 1; k < repeats; ++k)
    EXPECT_TRUE(bitwise_equal(gpu_run(band, tun), g)) << "run " << k << " differs from run 0";
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuBulgeChasing,
                         ::testing::Combine(::testing::Values(3L, 33L, 1000L, 4099L, 20000L),
                                            ::testing::Values(2L, 4L, 8L, 16L, 32L, 64L)),
                         [](const ::testing::TestParamInfo<std::tuple<long, long>>& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_b" +
                                  std::to_string(std::get<1>(info.param));
                         });

// The oracle itself: pipelined host sweeps == host::bulge_chase, bitwise.
TEST(GpuBulgeChasingOracle, PipelinedHostEqualsSequentialHost) {
  const Band band = random_band(700, 12, 7);
  const Result p = host_oracle(band);
  Result s{std::vector<double>(700), std::vector<double>(700), ReflectorStore(), {}};
  host::bulge_chase(band.n, band.b, band.ab.data(), band.ldab, s.d.data(), s.e.data(), s.U);
  EXPECT_TRUE(bitwise_equal(p, s));
}

// The schedule (groups per block, blocks per SM, so how sweeps map to groups and how many run at
// once) does not change a bit; the threads per sweep change only rounding.
TEST(GpuBulgeChasingTunables, ScheduleDoesNotChangeResults) {
  const Band band = random_band(1500, 16, 11);
  const Result h = host_oracle(band);
  for (int tps : {8, 16, 32}) {
    const Result ref = gpu_run(band, gpu::BulgeChasingTunables{tps, 4, 0});
    expect_matches_host(band, ref, h);
    for (int per_block : {1, 3, 8})
      for (int per_sm : {1, 2, 0}) {
        const Result r = gpu_run(band, gpu::BulgeChasingTunables{tps, per_block, per_sm});
        EXPECT_TRUE(bitwise_equal(r, ref)) << "threads_per_sweep " << tps << ", sweeps_per_block "
                                           << per_block << ", blocks_per_sm " << per_sm;
      }
  }
}

// d and e without the reflectors: bitwise those with them.
TEST(GpuBulgeChasingValues, WithoutReflectorsSameTridiagonal) {
  const Band band = random_band(2000, 32, 5);
  const auto tun = defaults(32);
  const Result with = gpu_run(band, tun, true), without = gpu_run(band, tun, false);
  EXPECT_EQ(std::memcmp(with.d.data(), without.d.data(), sizeof(double) * 2000), 0);
  EXPECT_EQ(std::memcmp(with.e.data(), without.e.data(), sizeof(double) * 1999), 0);
}

// Orders and bandwidths with no sweeps or a clamped bandwidth: what the host gives.
TEST(GpuBulgeChasingSpecial, SmallOrdersAndBandwidths) {
  for (long n : {0L, 1L, 2L, 3L, 5L})
    for (long b : {0L, 1L, 2L, 3L, 7L}) {
      const Band band = random_band(n, b, static_cast<unsigned>(10 * n + b));
      const Result h = host_oracle(band);
      const Result g = gpu_run(band, defaults(b));
      SCOPED_TRACE("n = " + std::to_string(n) + ", b = " + std::to_string(b));
      EXPECT_EQ(g.U.layout.b, h.U.layout.b);
      expect_matches_host(band, g, h);
    }
}

TEST(GpuBulgeChasingSpecial, BadArgumentsThrow) {
  std::vector<double> ab(64, 0.0), d(8), e(8);
  const gpu::BulgeChasingTunables tun{};
  EXPECT_THROW(gpu::bulge_chase_from_host(-1, 2, ab.data(), 3, d.data(), e.data(), nullptr, tun),
               std::invalid_argument);
  EXPECT_THROW(gpu::bulge_chase_from_host(8, 4, ab.data(), 4, d.data(), e.data(), nullptr, tun),
               std::invalid_argument);
  EXPECT_THROW(gpu::bulge_chase_from_host(8, 2, ab.data(), 3, d.data(), e.data(), nullptr,
                                          gpu::BulgeChasingTunables{12, 4, 0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipevd
