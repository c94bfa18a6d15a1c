// DBBR on the GPU against the host backend (the oracle), issue 5: the backend's syr2k_full (the
// lower triangle by gpu/syr2k, mirrored) equals the host's dsyr2k + mirror to rounding and leaves C
// exactly symmetric; DBBR's band and reflectors on one GPU equal the host's to rounding with the
// trailing update through syr2k_full, with and without syr2k in the recursive panel updates, for
// sizes where the syr2k recursion has several levels and the panel count is not a power of two.
// Every GPU result is computed twice and must be bitwise identical; the part profiler sees each
// part it is given opened and closed in pairs, without changing the result.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "core/dbbr.hpp"
#include "core/engine_plan.hpp"
#include "gpu/dbbr_event_clock.hpp"
#include "gpu/gpu_backend.hpp"
#include "host/host_backend.hpp"
#include "tests/support/gpu_host_fixture.hpp"
#include "tests/support/gpu_mpi_environment.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::bitwise_equal;
using test::max_abs;
using test::max_abs_diff;
using test::random_symmetric;
using test::random_vector;

double frobenius_diff(const Mat& x, const Mat& y) {
  double s = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) s += (x[i] - y[i]) * (x[i] - y[i]);
  return std::sqrt(s);
}

Mat on_backend(EngineBackend& be, const Mat& a, const Mat& b, const Mat& c0, long n, long k,
               long ld, double alpha) {
  DeviceBuffer da(be, ld * k), db(be, ld * k), dc(be, ld * n);
  be.copy_to_device(a.data(), da.get(), ld * k);
  be.copy_to_device(b.data(), db.get(), ld * k);
  be.copy_to_device(c0.data(), dc.get(), ld * n);
  be.syr2k_full(n, k, alpha, da.get(), ld, db.get(), ld, dc.get(), ld);
  Mat c(ld * n);
  be.copy_to_host(dc.get(), c.data(), ld * n);
  return c;
}

class GpuDbbrTest : public test::GpuAgainstHostTest {};

TEST_F(GpuDbbrTest, Syr2kFullEqualsHostAndStaysSymmetric) {
  for (auto [n, k] : {std::array<long, 2>{1, 3},
                      {7, 1},
                      {33, 32},
                      {100, 300},
                      {513, 64},
                      {1100, 96},
                      {2085, 1100}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
    const long ld = n + 5;
    const Mat a = random_vector(ld * k, 1), b = random_vector(ld * k, 2);
    const Mat c0 = random_symmetric(n, ld, 3);
    const Mat h = on_backend(host_, a, b, c0, n, k, ld, -1.0);
    const Mat g1 = on_backend(gpu_, a, b, c0, n, k, ld, -1.0);
    const Mat g2 = on_backend(gpu_, a, b, c0, n, k, ld, -1.0);
    EXPECT_TRUE(bitwise_equal(g1, g2));
    EXPECT_LT(max_abs_diff(g1, h), 1e-14 * k * std::max(1.0, max_abs(h)));
    bool symmetric = true, rows_past_n_kept = true;
    for (long j = 0; j < n; ++j) {
      for (long i = 0; i < j; ++i) symmetric &= g1[i + j * ld] == g1[j + i * ld];
      for (long i = n; i < ld; ++i) rows_past_n_kept &= g1[i + j * ld] == c0[i + j * ld];
    }
    EXPECT_TRUE(symmetric);
    EXPECT_TRUE(rows_past_n_kept);
  }
}

// Counts opened and closed parts; a part opened while another is open is an error.
struct CountingProfiler : DbbrProfiler {
  std::array<long, static_cast<int>(DbbrPart::Count)> opened{}, closed{};
  int open = -1;
  bool nested = false;
  void begin(DbbrPart p) noexcept override {
    nested |= open >= 0;
    open = static_cast<int>(p);
    ++opened[open];
  }
  void end(DbbrPart p) noexcept override {
    nested |= open != static_cast<int>(p);
    ++closed[static_cast<int>(p)];
    open = -1;
  }
};

struct Reduced {
  Mat a;           // the whole matrix after the reduction
  Mat band;        // its lower band, (b+1) x n
  Mat reflectors;  // every panel's W then Y
};

Reduced reduce(EngineBackend& be, const Mat& a, long n, long b, long k, bool panel_syr2k,
               DbbrProfiler* prof = nullptr) {
  const EngineLayout L = plan_engine_layout(n, 1, b);
  DeviceBuffer da(be, n * n);
  be.copy_to_device(a.data(), da.get(), n * n);
  DbbrOptions opt{b, k, true};
  opt.panel_syr2k = panel_syr2k;
  opt.profiler = prof;
  ReflectorPanels p = reduce_to_band(be, L, 0, da.get(), opt);
  const long bw = effective_bandwidth(n, b);
  DeviceBuffer ab = gather_band(be, L, 0, da.get(), opt);
  Reduced r;
  r.a.resize(n * n);
  be.copy_to_host(da.get(), r.a.data(), n * n);
  r.band.resize(n * (bw + 1));
  be.copy_to_host(ab.get(), r.band.data(), n * (bw + 1));
  for (const auto& pan : p.panels) {
    Mat w(pan.m * pan.width), y(pan.m * pan.width);
    be.copy_to_host(pan.w.get(), w.data(), pan.m * pan.width);
    be.copy_to_host(pan.y.get(), y.data(), pan.m * pan.width);
    r.reflectors.insert(r.reflectors.end(), w.begin(), w.end());
    r.reflectors.insert(r.reflectors.end(), y.begin(), y.end());
  }
  return r;
}

// Two GPU runs bitwise equal; band and reflectors equal the host's to rounding (as
// test_gpu_backend's DBBR check: rounding grows with n).
void expect_repeatable_and_equal_to_host(const Reduced& g1, const Reduced& g2, const Reduced& h,
                                         const Mat& a, long n) {
  EXPECT_TRUE(bitwise_equal(g1.band, g2.band));
  EXPECT_TRUE(bitwise_equal(g1.reflectors, g2.reflectors));
  EXPECT_LT(frobenius_diff(g1.band, h.band) / frobenius_diff(a, Mat(a.size(), 0.0)),
            100 * n * DBL_EPSILON)
      << "band";
  EXPECT_LT(max_abs_diff(g1.reflectors, h.reflectors), 100 * n * DBL_EPSILON) << "W, Y";
}

TEST_F(GpuDbbrTest, BandAndReflectorsEqualHost) {
  gpu_.set_poison_unfilled(true);  // buffers taken without a zero fill read as NaN if never written
  // n - k above the syr2k diagonal block (512): several recursion levels in the trailing update;
  // k / b = 3 and 12: uneven recursive panel updates; odd n: a short last block.
  for (auto [n, b, k] :
       {std::array<long, 3>{1601, 32, 384}, {1333, 16, 48}, {2111, 32, 1024}, {700, 8, 64}}) {
    const Mat a = random_symmetric(n, n, static_cast<unsigned>(n));
    const Reduced h = reduce(host_, a, n, b, k, false);
    for (bool panel_syr2k : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b) +
                   " k=" + std::to_string(k) + " panel_syr2k=" + std::to_string(panel_syr2k));
      expect_repeatable_and_equal_to_host(reduce(gpu_, a, n, b, k, panel_syr2k),
                                          reduce(gpu_, a, n, b, k, panel_syr2k), h, a, n);
    }
  }
}

// A W through the one-triangle kernel (the default from m = 8192 on) at every panel: S in two
// pieces (the block's saved columns, then A's), odd n (8-byte copies) and even n (16-byte ones),
// short last panels, b = 16 and 32. DBBR's buffers taken without a zero fill come NaN-filled, so a
// read of an element never written shows.
TEST_F(GpuDbbrTest, SymmetricProductInsideDbbrEqualsHost) {
  if (!gpu::symmetric_product_available(gpu_.device()))
    GTEST_SKIP() << "gpu/symmetric_product is not used on this device";
  gpu_.set_poison_unfilled(true);
  gpu_.set_symmetric_product(true);
  gpu_.set_symmetric_product_min_rows(1);
  for (auto [n, b, k] : {std::array<long, 3>{1601, 32, 384},
                         {1600, 32, 384},
                         {1333, 16, 48},
                         {2048, 16, 256},
                         {2111, 32, 1024}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b) + " k=" + std::to_string(k));
    const Mat a = random_symmetric(n, n, static_cast<unsigned>(n + 7));
    ASSERT_TRUE(gpu_.symmetric_product_used(n - b, b));
    expect_repeatable_and_equal_to_host(reduce(gpu_, a, n, b, k, false),
                                        reduce(gpu_, a, n, b, k, false),
                                        reduce(host_, a, n, b, k, false), a, n);
  }
}

TEST_F(GpuDbbrTest, ProfilerSeesEveryPartWithoutChangingTheResult) {
  const long n = 777, b = 16, k = 64;
  const Mat a = random_symmetric(n, n, 5);
  CountingProfiler prof;
  const Reduced with = reduce(gpu_, a, n, b, k, false, &prof);
  const Reduced without = reduce(gpu_, a, n, b, k, false);
  EXPECT_TRUE(bitwise_equal(with.band, without.band));
  EXPECT_FALSE(prof.nested);
  const long panels = (n - 2) / b;
  EXPECT_EQ(prof.opened[static_cast<int>(DbbrPart::PanelQr)], panels);
  EXPECT_EQ(prof.opened[static_cast<int>(DbbrPart::FormZ)], panels);
  for (int p = 0; p < static_cast<int>(DbbrPart::Count); ++p) {
    EXPECT_EQ(prof.opened[p], prof.closed[p]) << p;
    if (p != static_cast<int>(DbbrPart::Broadcast)) EXPECT_GT(prof.opened[p], 0) << p;
  }
}

// The event clock times each outer block (boundary to boundary) beside the parts: one positive
// time per block, together within the stage's time as the parts are.
TEST_F(GpuDbbrTest, EventClockTimesEachOuterBlock) {
  const long n = 777, b = 16, k = 64;
  const Mat a = random_symmetric(n, n, 6);
  gpu::DbbrEventClock clock(gpu_.device(), gpu_.stream());
  reduce(gpu_, a, n, b, k, false, &clock);
  const DbbrPartSeconds parts = clock.collect();
  const std::vector<double> blocks = clock.collected_blocks();
  ASSERT_EQ(blocks.size(), outer_blocks(plan_engine_layout(n, 1, b), DbbrOptions{b, k}).size());
  double in_blocks = 0, in_parts = 0;
  for (double s : blocks) {
    EXPECT_GT(s, 0.0);
    in_blocks += s;
  }
  for (double s : parts) in_parts += s;
  EXPECT_GE(in_blocks, 0.5 * in_parts);  // the parts lie inside the blocks, but for rounding
  // A second reduction's blocks replace the first's.
  reduce(gpu_, a, n, b, k, false, &clock);
  clock.collect();
  EXPECT_EQ(clock.collected_blocks().size(), blocks.size());
}

// A part's end runs in DBBR's destructors, also while a failure unwinds: the clock's failure to
// record (here: no such device) waits for collect() instead of leaving end() as an exception.
TEST(DbbrEventClock, AFailureToRecordIsThrownByCollectNotByEnd) {
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  gpu::DbbrEventClock clock(devices + 7, nullptr);
  EXPECT_NO_THROW(clock.begin(DbbrPart::Copies));
  EXPECT_NO_THROW(clock.end(DbbrPart::Copies));
  EXPECT_THROW(clock.collect(), DeviceError);
}

}  // namespace
}  // namespace pipevd
