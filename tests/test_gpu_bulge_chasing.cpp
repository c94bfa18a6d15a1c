// GPU bulge chasing against the host's (host/bulge_chasing.hpp) on the same band matrices, for
// b in {2, 4, 8, 16, 32, 64} and n in {3, 33, 1000, 4099, 20000}: the same T (d, e up to the signs
// of e, T's eigenvalues) and the same reflectors to rounding; repeated runs bitwise identical (a
// moving result would be a race between sweeps); tunables that change only the schedule give
// bitwise the same results.
//
// What "to rounding" means here. T and the reflectors are backward stable but not well-conditioned
// functions of B: on the host alone, B and B with one ulp added to every 7th stored entry give d
// and |e| apart by up to ~1e-7 at n = 4099..20000, reflectors apart by up to O(1) where a bulge
// column is near the rounding level, and (n = 20000, b = 2) some thousand e of opposite sign (host
// experiment, bench/RESULTS.md). So the GPU's deviation from the host is measured against that
// spread: each of max |d - d_h|, max ||e| - |e_h||, max ||v| - |v_h||, max |tau - tau_h| must be
// within 100 times the host's own spread under the one-ulp perturbation (or a floor of n eps ||B||
// size), T's eigenvalues within 100 n eps ||B|| of the host T's (n <= 5000, dsterf), and signs are
// not compared (a sign of e or of a v entry is where a reflector's beta = -sign(alpha) ||.|| meets
// an alpha at the rounding level). Runs of the GPU kernel are compared bitwise.
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
#include "tests/support/test_size_limit.hpp"
#include "tests/support/vector_compare.hpp"

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
};

// The host oracle with sweeps pipelined over all cores (the prerequisite rule of
// ReflectorLayout, under which host::chase_step gives bitwise host::bulge_chase's results; the
// host tests check that), so that n = 20000 stays affordable.
Result host_oracle(const Band& band) {
  const long n = band.n, bw = std::max(0L, std::min(band.b, n - 1));
  const ReflectorLayout L{n, bw};
  Result r{std::vector<double>(std::max(1L, n)), std::vector<double>(std::max(1L, n)),
           ReflectorStore(n, bw)};
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
  Result r{std::vector<double>(std::max(1L, band.n)), std::vector<double>(std::max(1L, band.n)),
           ReflectorStore()};
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
  return test::bitwise_equal(x.d, y.d) && test::bitwise_equal(x.e, y.e) &&
         test::bitwise_equal(x.U.v, y.U.v) && test::bitwise_equal(x.U.tau, y.U.tau);
}

std::vector<double> eigenvalues(std::vector<double> d, std::vector<double> e, long n) {
  int info = 0;
  const int in = static_cast<int>(n);
  if (n > 0) dsterf_(&in, d.data(), e.data(), &info);
  EXPECT_EQ(info, 0);
  d.resize(static_cast<size_t>(n));
  return d;
}

// B with one ulp added to every 7th stored entry.
Band perturbed(const Band& band) {
  Band p = band;
  for (size_t k = 0; k < p.ab.size(); k += 7) p.ab[k] = std::nextafter(p.ab[k], 2.0);
  return p;
}

struct Deviation {
  double d = 0, e = 0, v = 0, tau = 0, eig = 0;
  long sign_flips = 0, trivial = 0;
};

// x against y: max |d|, ||e||, ||v|| differences, |tau| differences over reflectors that are not
// trivial (x = 0 up to underflow: tau = 0 and tau = 2 both right), T's eigenvalues (n <= 5000).
Deviation deviation(const Result& x, const Result& y, long n) {
  Deviation r;
  for (long i = 0; i < n; ++i) r.d = std::max(r.d, std::fabs(x.d[i] - y.d[i]));
  for (long i = 0; i + 1 < n; ++i) {
    r.e = std::max(r.e, std::fabs(std::fabs(x.e[i]) - std::fabs(y.e[i])));
    r.sign_flips += (x.e[i] < 0) != (y.e[i] < 0);
  }
  const ReflectorLayout& L = y.U.layout;
  const long b = L.b;
  for (long k = 0; k < L.count(); ++k) {
    double rest = 0.0;
    for (long i = 0; i < b; ++i) {
      const double p = x.U.v[k * b + i], q = y.U.v[k * b + i];
      if (i > 0) rest = std::max(rest, std::max(std::fabs(p), std::fabs(q)));
      r.v = std::max(r.v, std::fabs(std::fabs(p) - std::fabs(q)));
    }
    if (rest < 1e-150) {
      ++r.trivial;
      continue;
    }
    r.tau = std::max(r.tau, std::fabs(x.U.tau[k] - y.U.tau[k]));
  }
  if (n <= 5000) {
    const auto lx = eigenvalues(x.d, x.e, n), ly = eigenvalues(y.d, y.e, n);
    for (long i = 0; i < n; ++i) r.eig = std::max(r.eig, std::fabs(lx[i] - ly[i]));
  }
  return r;
}

// GPU == host to rounding (see the top of the file). ||B||_inf <= 2b + 1 for entries in [-1, 1].
void expect_matches_host(const Band& band, const Result& g, const Result& h) {
  const long n = band.n;
  ASSERT_EQ(g.U.layout.n, h.U.layout.n);
  ASSERT_EQ(g.U.layout.b, h.U.layout.b);
  ASSERT_EQ(g.U.v.size(), h.U.v.size());
  ASSERT_EQ(g.U.tau.size(), h.U.tau.size());
  const double norm = 2.0 * band.b + 1.0, nn = static_cast<double>(std::max(1L, n));
  const Deviation dev = deviation(g, h, n);
  const Deviation spread = deviation(host_oracle(perturbed(band)), h, n);
  const double floor_t = 64.0 * DBL_EPSILON * nn * norm, floor_v = 1e3 * DBL_EPSILON * nn;
  const double tol_d = std::max(floor_t, 100.0 * spread.d);
  const double tol_e = std::max(floor_t, 100.0 * spread.e);
  const double tol_v = std::max(floor_v, 100.0 * spread.v);
  const double tol_tau = std::max(floor_v, 100.0 * spread.tau);
  const double tol_eig = 100.0 * DBL_EPSILON * nn * norm;
  std::printf(
      "  n = %ld, b = %ld, GPU vs host (host vs host of B + 1 ulp): |d| %.1e (%.1e), |e| "
      "%.1e (%.1e), eig %.1e (%.1e), |v| %.1e (%.1e), tau %.1e (%.1e), e sign flips %ld "
      "(%ld), trivial reflectors %ld\n",
      n, band.b, dev.d, spread.d, dev.e, spread.e, dev.eig, spread.eig, dev.v, spread.v, dev.tau,
      spread.tau, dev.sign_flips, spread.sign_flips, dev.trivial);
  EXPECT_LE(dev.d, tol_d);
  EXPECT_LE(dev.e, tol_e);
  EXPECT_LE(dev.eig, tol_eig);
  EXPECT_LE(dev.v, tol_v);
  EXPECT_LE(dev.tau, tol_tau);
}

class GpuBulgeChasing : public ::testing::TestWithParam<std::tuple<long, long>> {};

TEST_P(GpuBulgeChasing, MatchesHostAndRepeatsBitwise) {
  const auto [n, b] = GetParam();
  if (test::over_test_order(n)) GTEST_SKIP() << "n over PIPEVD_TEST_MAX_N";
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
  Result s{std::vector<double>(700), std::vector<double>(700), ReflectorStore()};
  host::bulge_chase(band.n, band.b, band.ab.data(), band.ldab, s.d.data(), s.e.data(), s.U);
  EXPECT_TRUE(bitwise_equal(p, s));
}

// The schedule (groups per block, blocks per SM, so how sweeps map to groups and how many run at
// once) does not change a bit; the threads per sweep change only rounding. b = 32 with 32 threads
// per sweep is the register step with its kept window halves; 12 sweeps per block is more than
// its registers allow in one block (the launch takes fewer).
TEST(GpuBulgeChasingTunables, ScheduleDoesNotChangeResults) {
  for (long b : {16L, 32L}) {
    const Band band = random_band(1500, b, 11);
    const Result h = host_oracle(band);
    for (int tps : {8, 16, 32}) {
      const Result ref = gpu_run(band, gpu::BulgeChasingTunables{tps, 4, 0});
      expect_matches_host(band, ref, h);
      for (int per_block : {1, 3, 8, 12})
        for (int per_sm : {1, 2, 0}) {
          const Result r = gpu_run(band, gpu::BulgeChasingTunables{tps, per_block, per_sm});
          EXPECT_TRUE(bitwise_equal(r, ref))
              << "b " << b << ", threads_per_sweep " << tps << ", sweeps_per_block " << per_block
              << ", blocks_per_sm " << per_sm;
        }
    }
  }
}

// Next to SBR-back the chase runs on half the SMs with twice the sweeps per block, each block
// holding its SM's shared memory (bulge_chasing_beside_other_work): the same bits as the defaults;
// so do a single block for every sweep and a capped grid of exclusive blocks.
TEST(GpuBulgeChasingTunables, BesideOtherWorkSameResults) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  for (long n : {1500L, 4099L})
    for (long b : {16L, 32L}) {
      const Band band = random_band(n, b, static_cast<unsigned>(n + b));
      const gpu::BulgeChasingTunables base = gpu::default_bulge_chasing_tunables(device, n, b);
      const gpu::BulgeChasingTunables beside =
          gpu::bulge_chasing_beside_other_work(base, device, b);
      if (!beside.exclusive_sms)  // twice the sweeps do not fit a block's shared memory here
        GTEST_SKIP() << "b = " << b << ": the rule leaves the defaults on this device";
      EXPECT_EQ(beside.sweeps_per_block, 2 * base.sweeps_per_block);
      EXPECT_GT(beside.max_blocks, 0);
      gpu::BulgeChasingTunables one_block = base, capped = beside;
      one_block.max_blocks = 1;
      capped.max_blocks = 3;
      const Result ref = gpu_run(band, base);
      for (const auto& tun : {beside, one_block, capped})
        EXPECT_TRUE(bitwise_equal(gpu_run(band, tun), ref))
            << "n = " << n << ", b = " << b << ", blocks <= " << tun.max_blocks
            << ", sweeps_per_block " << tun.sweeps_per_block;
    }
}

// Exact zeros (tau = 0, H = I: the step's early return) inside runs of full register steps: a
// block-diagonal band (blocks of 64), whose bulges vanish where they leave a block; registers
// against the in-place loops, bitwise, and against the host. The zeros are -0.0 at n = 2049: a
// step with tau = 0 still finishes the row the step before it deferred (whose update turns a -0.0
// with v_i < 0 into +0.0 in the loop form).
TEST(GpuBulgeChasingTunables, RegisterStepWithZeroColumns) {
  for (long n : {700L, 2049L}) {
    Band band = random_band(n, 32, static_cast<unsigned>(n));
    const double zero = n == 2049 ? -0.0 : 0.0;
    for (long j = 0; j < n; ++j)
      for (long r = 1; r <= 32 && j + r < n; ++r)
        if ((j + r) / 64 != j / 64) band.ab[r + j * band.ldab] = zero;
    gpu::BulgeChasingTunables in_place = defaults(32), registers = defaults(32);
    in_place.stage_window = false;
    registers.register_step = true;
    const Result r0 = gpu_run(band, in_place), r1 = gpu_run(band, registers);
    EXPECT_TRUE(bitwise_equal(r0, r1)) << "n = " << n;
    expect_matches_host(band, r1, host_oracle(band));
  }
}

// Staging each step's window in shared memory changes where the step runs, not its arithmetic:
// bitwise the in-place kernel's d, e and reflectors, for every bandwidth (b = 64 fits one sweep per
// block) and with sweeps per block capped by shared memory; so does holding the step's entries in
// registers (b <= 32; odd b and odd n give short last steps and partial right blocks).
TEST(GpuBulgeChasingTunables, StagedWindowSameAsInPlace) {
  for (long n : {33L, 1000L, 4099L})
    for (long b : {2L, 3L, 8L, 16L, 17L, 31L, 32L, 64L}) {
      if (test::over_test_order(n)) continue;
      const Band band = random_band(n, b, static_cast<unsigned>(n + 7 * b));
      gpu::BulgeChasingTunables in_place = defaults(b), staged = defaults(b);
      in_place.stage_window = false;
      staged.stage_window = true;
      staged.sweeps_per_block = 8;
      staged.register_step = false;
      gpu::BulgeChasingTunables registers = staged;
      registers.register_step = true;
      const Result r0 = gpu_run(band, in_place), r1 = gpu_run(band, staged);
      const Result r2 = gpu_run(band, registers);
      EXPECT_TRUE(bitwise_equal(r0, r1)) << "n = " << n << ", b = " << b;
      EXPECT_TRUE(bitwise_equal(r0, r2)) << "registers, n = " << n << ", b = " << b;
      if (n == 1000) expect_matches_host(band, r2, host_oracle(band));
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
