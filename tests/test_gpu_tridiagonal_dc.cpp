// core/tridiagonal_dc on the GPU backend (merge GEMMs by cuBLAS on a companion stream) against
// LAPACK's dstedc: eigenvalues, residual and orthogonality at n = 1000 and 4099 (deep trees,
// panels narrower than the merges, splits and heavy deflation), repeated runs bitwise identical;
// and run_engine on one GPU with stage 3 by dc against the host engine with dstedc.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "gpu/gpu_backend.hpp"
#include "host/host_backend.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/tridiagonal_dc_check.hpp"

namespace pipevd {
namespace {

// MPI for run_engine (one rank); set up after the GPU main found a device.
class MpiEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    int done = 0;
    MPI_Initialized(&done);
    if (!done) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    }
  }
  void TearDown() override {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
};
testing::Environment* const mpi_env = testing::AddGlobalTestEnvironment(new MpiEnvironment);

using test::TKind;

TEST(GpuTridiagonalDc, AgainstDstedc) {
  gpu::GpuBackend main_be;
  const auto be = main_be.companion();  // as the engine runs it
  for (long n : {1000L, 4099L})
    for (TKind k : {TKind::Toeplitz121, TKind::Random, TKind::GluedWilkinson, TKind::Identity,
                    TKind::Splits, TKind::Tiny}) {
      DcOptions opt;
      if (n > 2000) {  // levels of small merges, then merges in 512-column panels
        opt.leaf = 64;
        opt.panel = 512;
      }
      test::check_dc(*be, test::make_tridiagonal(k, n, 31), opt,
                     std::string(test::to_string(k)) + " n=" + std::to_string(n));
    }
  for (test::Spectrum s : test::kAllSpectra)
    test::check_dc(*be, test::make_tridiagonal(TKind::Spectrum, 1000, 4, s), DcOptions{},
                   std::string(test::to_string(s)) + " n=1000");
}

TEST(GpuTridiagonalDc, RepeatedRunsAreBitwiseIdentical) {
  gpu::GpuBackend be;
  const long n = 3001;
  const test::Tridiagonal t = test::make_tridiagonal(TKind::Toeplitz121, n, 1);
  DcOptions opt;
  opt.panel = 700;
  std::vector<std::vector<double>> q(2, std::vector<double>(n * n)), d(2, t.d);
  for (int r = 0; r < 2; ++r) {
    DeviceBuffer qd(be, n * n);
    ASSERT_EQ(tridiagonal_dc(be, n, d[r].data(), t.e.data(), qd.get(), n, opt), 0);
    be.copy_to_host(qd.get(), q[r].data(), n * n);
  }
  EXPECT_EQ(0, std::memcmp(d[0].data(), d[1].data(), sizeof(double) * n));
  EXPECT_EQ(0, std::memcmp(q[0].data(), q[1].data(), sizeof(double) * n * n));
}

std::vector<double> random_symmetric(long n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(n * n);
  for (long j = 0; j < n; ++j)
    for (long i = 0; i <= j; ++i) a[i + j * n] = a[j + i * n] = u(g);
  return a;
}

TEST(GpuTridiagonalDc, EngineWithDcEqualsHostEngineWithDstedc) {
  for (long n : {100L, 513L, 2000L}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<double> a = random_symmetric(n, 7 + static_cast<unsigned>(n));
    const EngineLayout L = plan_engine_layout(n, 1, 32, 128);
    EngineOptions opt;
    opt.b = 32;
    opt.k = 128;
    opt.tridiagonal = TridiagonalSolver::Dc;
    opt.dc.leaf = 48;
    opt.dc.panel = 300;
    std::vector<double> wg(n), zg(n * n), wh(n), zh(n * n);
    gpu::GpuBackend gbe;
    ASSERT_EQ(run_engine(gbe, MPI_COMM_SELF, L, a.data(), wg.data(), zg.data(), opt, nullptr), 0);
    HostBackend hbe;
    EngineOptions ref = opt;
    ref.tridiagonal = TridiagonalSolver::Dstedc;
    ASSERT_EQ(run_engine(hbe, MPI_COMM_SELF, L, a.data(), wh.data(), zh.data(), ref, nullptr), 0);
    EXPECT_LT(test::eigenvalue_difference(wg, wh), 1e-12);
    const int ni = static_cast<int>(n);
    EXPECT_LT(test::residual(ni, a, zg, wg), test::kScalapackThreshold);
    EXPECT_LT(test::orthogonality(ni, zg), test::kScalapackThreshold);
  }
}

}  // namespace
}  // namespace pipevd
