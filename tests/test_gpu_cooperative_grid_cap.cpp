// The cooperative kernels where the runtime refuses their grid (fewer SMs are the process's than
// the occupancy query saw: MPS, PIPEVD_GPU_SHARING, other programs on the GPU), made to happen on
// any GPU by a test's cap on the grid (gpu/cooperative_launch.hpp, builds with
// PIPEVD_FAULT_INJECTION). Bulge chasing, real and complex, retries on fewer blocks: the grid
// changes only which block chases which sweeps, so d, e and the reflectors (and the complex
// chase's phase) equal the uncapped run's bitwise. The fused panel QR retries on fewer blocks
// (taller slabs): its reductions' partials then cover other rows, so R, W and Y equal the uncapped
// run's to rounding; where no slab fits, the cuSOLVER path, also to rounding.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/reflector_store.hpp"
#include "gpu/bulge_chasing.cuh"
#include "gpu/cooperative_launch.hpp"
#include "gpu/gpu_backend.hpp"
#include "tests/support/device_vector.hpp"
#include "tests/support/gpu_mpi_environment.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::bitwise_equal;
using test::max_abs_diff;

// The cap for one scope; none after it.
class GridCap {
 public:
  GridCap(const char* name, int max_blocks) { gpu::set_cooperative_grid_cap({name, max_blocks}); }
  ~GridCap() { gpu::set_cooperative_grid_cap({}); }
  GridCap(const GridCap&) = delete;
  GridCap& operator=(const GridCap&) = delete;
};

struct Chase {
  Mat d, e;
  ReflectorStore u;
};

// A random band of order n and bandwidth b in lower band storage, chased on the GPU with the
// defaults for this device.
Chase chase(long n, long b) {
  const long ldab = b + 1;
  Mat ab = test::random_vector(n * ldab, static_cast<unsigned>(n + b));
  for (long j = 0; j < n; ++j)  // nothing stored below the matrix
    for (long r = std::max(1L, n - j); r <= b; ++r) ab[r + j * ldab] = 0.0;
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  Chase c{Mat(n), Mat(n), ReflectorStore()};
  gpu::bulge_chase_from_host(n, b, ab.data(), ldab, c.d.data(), c.e.data(), &c.u,
                             gpu::default_bulge_chasing_tunables(device, n, b));
  return c;
}

// The last cooperative launch: refused above `cap`, then let through on at most `cap` blocks.
void expect_retried_within(int cap) {
  const gpu::CooperativeLaunchRecord rec = gpu::cooperative_launch_record();
  EXPECT_GE(rec.refused, 1) << "the uncapped grid was not above the cap";
  EXPECT_GE(rec.launched_blocks, 1);
  EXPECT_LE(rec.launched_blocks, cap);
}

// b = 32: the register step; b = 64: the loops over a staged window. Caps of a few blocks and of
// one.
TEST(CooperativeGridCap, BulgeChasingRetriesOnFewerBlocksBitwise) {
  for (long b : {32L, 64L}) {
    const long n = 1500;
    const Chase ref = chase(n, b);
    for (int cap : {5, 1}) {
      SCOPED_TRACE("b = " + std::to_string(b) + ", at most " + std::to_string(cap) + " blocks");
      GridCap capped("bulge_chasing", cap);
      const Chase c = chase(n, b);
      expect_retried_within(cap);
      EXPECT_TRUE(bitwise_equal(c.d, ref.d)) << "d";
      EXPECT_TRUE(bitwise_equal(c.e, ref.e)) << "e";
      EXPECT_TRUE(bitwise_equal(c.u.v, ref.u.v)) << "v";
      EXPECT_TRUE(bitwise_equal(c.u.tau, ref.u.tau)) << "tau";
    }
  }
}

struct ComplexChase {
  Mat d, e;
  ComplexReflectorStore u;
};

// A random Hermitian band of order n and bandwidth b in lower band storage (nothing stored below
// the matrix), chased by the GPU backend's complex kernel.
ComplexChase complex_chase(long n, long b) {
  const long ldab = b + 1;
  const Mat parts = test::random_vector(2 * n * ldab, static_cast<unsigned>(3 * n + b));
  std::vector<Complex> ab(static_cast<size_t>(n * ldab), Complex(0));
  for (long j = 0; j < n; ++j)
    for (long r = 0; r <= b && j + r < n; ++r) {
      const long k = r + j * ldab;
      ab[k] = Complex(parts[2 * k], parts[2 * k + 1]);
    }
  gpu::GpuBackend gpu;
  gpu.bind(MPI_COMM_SELF);
  EngineBackend& be = gpu;  // the complex copies are the interface's overloads
  BasicDeviceBuffer<Complex> dab(be, n * ldab);
  be.copy_to_device(ab.data(), dab.get(), n * ldab);
  ComplexChase c{Mat(n), Mat(n), ComplexReflectorStore()};
  be.bulge_chase(n, b, dab.get(), ldab, c.d.data(), c.e.data(), c.u);
  return c;
}

TEST(CooperativeGridCap, ComplexBulgeChasingRetriesOnFewerBlocksBitwise) {
  const long n = 1500, b = 32;
  const ComplexChase ref = complex_chase(n, b);
  for (int cap : {5, 1}) {
    SCOPED_TRACE("at most " + std::to_string(cap) + " blocks");
    GridCap capped("bulge_chasing_complex", cap);
    const ComplexChase c = complex_chase(n, b);
    expect_retried_within(cap);
    EXPECT_TRUE(bitwise_equal(c.d, ref.d)) << "d";
    EXPECT_TRUE(bitwise_equal(c.e, ref.e)) << "e";
    EXPECT_TRUE(bitwise_equal(c.u.v, ref.u.v)) << "v";
    EXPECT_TRUE(bitwise_equal(c.u.tau, ref.u.tau)) << "tau";
    EXPECT_TRUE(bitwise_equal(c.u.phase, ref.u.phase)) << "phase";
  }
}

struct PanelQr {
  Mat r, w, y;
  bool fused_after = false;  // the backend's plan for the shape still the fused kernel
};

// The panel's QR on a fresh backend (its fused plan made for this call) with the fused kernel
// forced wherever it fits.
PanelQr panel_qr(long m, long nb, const Mat& a) {
  gpu::GpuBackend gpu;
  gpu.bind(MPI_COMM_SELF);
  gpu.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Fused);
  EXPECT_TRUE(gpu.panel_qr_fused(m, nb));
  test::Dev p(gpu, a), w(gpu, Mat(m * nb, 7.0)), y(gpu, Mat(m * nb, 7.0));
  gpu.panel_qr(m, nb, p.get(), m, w.get(), m, y.get(), m);
  return {p.to_host(m * nb), w.to_host(m * nb), y.to_host(m * nb), gpu.panel_qr_fused(m, nb)};
}

// m = 4099 gives the uncapped plan 33 blocks of 125 rows (256 threads). A cap of 8 is met by a
// plan of 8 blocks, whose 513-row slabs fit; a cap of 2 by none (a 2050-row slab does not), so the
// call takes the cuSOLVER path. Tolerances: twice what each path may deviate from LAPACK
// (tests/test_gpu_panel_qr.cpp).
TEST(CooperativeGridCap, FusedPanelQrRetriesOnFewerBlocks) {
  const long m = 4099, nb = 32;
  const Mat a = test::random_vector(m * nb, 4099u);
  double sum = 0;
  for (double v : a) sum += v * v;
  const double eps = DBL_EPSILON * (m + nb), anorm = std::sqrt(sum);
  const PanelQr ref = panel_qr(m, nb, a);
  for (int cap : {8, 2}) {
    SCOPED_TRACE("at most " + std::to_string(cap) + " blocks");
    GridCap capped("fused_panel_qr", cap);
    const PanelQr q = panel_qr(m, nb, a);
    const gpu::CooperativeLaunchRecord rec = gpu::cooperative_launch_record();
    EXPECT_GE(rec.refused, 1) << "the uncapped grid was not above the cap";
    if (cap == 8) {
      EXPECT_GE(rec.launched_blocks, 1);
      EXPECT_LE(rec.launched_blocks, cap);
      EXPECT_TRUE(q.fused_after) << "the plan that ran is kept";
    } else {
      EXPECT_EQ(rec.launched_blocks, 0) << "no fused grid fits the cap";
      EXPECT_FALSE(q.fused_after) << "cuSOLVER from now on for this shape";
    }
    EXPECT_LE(max_abs_diff(q.r, ref.r), 20 * eps * anorm) << "R";
    EXPECT_LE(max_abs_diff(q.w, ref.w), 80 * eps) << "W";
    EXPECT_LE(max_abs_diff(q.y, ref.y), 80 * eps) << "Y";
  }
}

}  // namespace
}  // namespace pipevd
