// The GPU backend's panel QR (the fused cooperative kernel of gpu/panel_qr.cuh, and the cuSOLVER
// path it falls back to) against the host backend's LAPACK dgeqrf + dlarft, issue 5: R, W and Y
// equal to rounding (relative to ||panel||) on random, zero-column, identity, tiny (1e-300), huge
// (1e300), graded (columns 2^-900, 1, 2^900), three-row (tau = 0 after nonzero reflectors) and
// tiny-below-the-diagonal (2^-700) panels, m < nb included; on panels with repeated columns (where
// the reflector of a column of rounding noise is arbitrary) the properties only: Q = I - W Y^T
// orthogonal, Q R = panel, R upper trapezoidal, Y unit lower trapezoidal. Every GPU result is
// computed twice and must be bitwise identical. The fused kernel also passes power-of-two column
// scalings through exactly, subnormal columns included.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_backend.hpp"
#include "gpu/panel_qr.cuh"
#include "host/host_backend.hpp"
#include "tests/support/device_vector.hpp"
#include "tests/support/gpu_host_fixture.hpp"
#include "tests/support/gpu_mpi_environment.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::bitwise_equal;
using test::Dev;
using test::max_abs_diff;

// Frobenius norm with scaling: no overflow at 1e300, no underflow at 1e-300.
double fro(const Mat& x) {
  double s = 0;
  for (double v : x) s = std::max(s, std::fabs(v));
  if (s == 0) return 0;
  double q = 0;
  for (double v : x) q += (v / s) * (v / s);
  return s * std::sqrt(q);
}

enum class Kind {
  Random,
  ZeroColumns,
  RepeatedColumns,
  Identity,
  Tiny,
  Huge,
  Graded,
  ThreeRows,
  TinyBelow
};
const char* name(Kind k) {
  switch (k) {
    case Kind::Random:
      return "random";
    case Kind::ZeroColumns:
      return "zero columns";
    case Kind::RepeatedColumns:
      return "repeated columns";
    case Kind::Identity:
      return "identity";
    case Kind::Tiny:
      return "tiny";
    case Kind::Huge:
      return "huge";
    case Kind::Graded:
      return "graded";
    case Kind::ThreeRows:
      return "three rows";
    case Kind::TinyBelow:
      return "tiny below the diagonal";
  }
  return "?";
}

// The m x nb panel (leading dimension ldp) of the given kind.
Mat make_panel(Kind kind, long m, long nb, long ldp, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Mat a(static_cast<size_t>(ldp * nb), 0.0);
  for (double& x : a) x = u(gen);
  for (long j = 0; j < nb; ++j)
    for (long i = 0; i < m; ++i) {
      double& x = a[i + j * ldp];
      switch (kind) {
        case Kind::ZeroColumns:
          if (j == 0 || j == 3 || j == nb - 1) x = 0.0;
          break;
        case Kind::RepeatedColumns:
          if (j % 2 == 1) x = a[i];  // a copy of column 0
          break;
        case Kind::Identity:
          x = i == j ? 1.0 : 0.0;
          break;
        case Kind::Tiny:
          x *= 1e-300;
          break;
        case Kind::Huge:
          x *= 1e300;
          break;
        case Kind::Graded:  // columns 2^-900, 1, 2^900, ...: no scale shared by the whole panel
          x = std::ldexp(x, 900 * (static_cast<int>(j % 3) - 1));
          break;
        case Kind::ThreeRows:  // rows past 2 zero: the columns' x are exactly 0 from column 2 on
          if (i > 2) x = 0.0;
          break;
        case Kind::TinyBelow:  // x^T x of every column underflows, its x does not
          if (i > j) x = std::ldexp(x, -700);
          break;
        case Kind::Random:
          break;
      }
    }
  return a;
}

// The m x n leading block of x (leading dimension ldx), packed.
Mat pack(const Mat& x, long m, long n, long ldx) {
  Mat p(static_cast<size_t>(m * n));
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < m; ++i) p[i + j * m] = x[i + j * ldx];
  return p;
}

class GpuPanelQrTest : public test::GpuAgainstHostTest {
 protected:
  // x := Q x (trans 'N') or Q^T x (trans 'T'), Q = I - W Y^T, x m x n packed.
  void apply_q(char trans, long m, long nb, const Mat& w, const Mat& y, Mat& x, long n) {
    Mat s(static_cast<size_t>(nb * n));
    const Mat& first = trans == 'N' ? y : w;
    const Mat& second = trans == 'N' ? w : y;
    host_.gemm('T', 'N', nb, n, m, 1.0, first.data(), m, x.data(), m, 0.0, s.data(), nb);
    host_.gemm('N', 'N', m, n, nb, -1.0, second.data(), m, s.data(), nb, 1.0, x.data(), m);
  }

  // The backend's panel QR on the given path: R (ldp), W and Y (m) into run.
  void backend_qr(gpu::GpuBackend::PanelQrPath path, long m, long nb, long ldp, const Mat& a,
                  Mat (&run)[3]) {
    gpu_.set_panel_qr_path(path);
    Dev p(gpu_, a), w(gpu_, Mat(m * nb, 7.0)), y(gpu_, Mat(m * nb, 7.0));
    gpu_.panel_qr(m, nb, p.get(), ldp, w.get(), m, y.get(), m);
    run[0] = p.to_host(ldp * nb);
    run[1] = w.to_host(m * nb);
    run[2] = y.to_host(m * nb);
  }

  // The fused kernel itself, also at widths the backend does not give it (nb > 32): R, Y and T
  // from the kernel, W = Y T on the host (exact enough for the checks, which allow 50 eps).
  void fused_kernel_qr(long m, long nb, long ldp, const Mat& a, Mat (&run)[3]) {
    const long kk = std::min(m, nb);
    cudaDeviceProp props{};
    ASSERT_EQ(cudaGetDeviceProperties(&props, gpu_.device()), cudaSuccess);
    ASSERT_EQ(cudaSetDevice(gpu_.device()), cudaSuccess);
    const gpu::FusedPanelQrPlan plan = gpu::plan_fused_panel_qr(props, m, nb);
    ASSERT_TRUE(plan.ok) << m << " x " << nb;
    Dev p(gpu_, a), y(gpu_, Mat(m * nb, 0.0)), tau(gpu_, kk), t(gpu_, Mat(kk * kk, 0.0)),
        scratch(gpu_, gpu::fused_panel_qr_scratch(plan, nb));
    gpu_.synchronize();  // the uploads ran on the backend's stream; the kernel runs on 0
    ASSERT_TRUE(gpu::fused_panel_qr(plan, 0, m, nb, p.get(), ldp, y.get(), m, tau.get(), t.get(),
                                    kk, scratch.get()));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    run[0] = p.to_host(ldp * nb);
    run[2] = y.to_host(m * nb);
    Mat tt = t.to_host(kk * kk);
    for (long j = 0; j < kk; ++j)
      for (long i = j + 1; i < kk; ++i) tt[i + j * kk] = 0.0;  // its lower part is not T's
    run[1].assign(static_cast<size_t>(m * nb), 0.0);
    host_.gemm('N', 'N', m, kk, kk, 1.0, run[2].data(), m, tt.data(), kk, 0.0, run[1].data(), m);
  }

  void check(Kind kind, long m, long nb, gpu::GpuBackend::PanelQrPath path,
             bool kernel_directly = false) {
    const long ldp = m + 3, kk = std::min(m, nb);
    const Mat a = make_panel(kind, m, nb, ldp, static_cast<unsigned>(m * 131 + nb));
    Mat hp = a, hw(m * nb, 7.0), hy(m * nb, 7.0);
    host_.panel_qr(m, nb, hp.data(), ldp, hw.data(), m, hy.data(), m);
    Mat runs[2][3];
    for (auto& run : runs) {
      if (kernel_directly)
        fused_kernel_qr(m, nb, ldp, a, run);
      else
        backend_qr(path, m, nb, ldp, a, run);
      if (HasFatalFailure()) return;
    }
    for (int i = 0; i < 3; ++i)
      EXPECT_TRUE(bitwise_equal(runs[0][i], runs[1][i])) << "output " << i;
    const Mat& r = runs[0][0];
    const Mat& w = runs[0][1];
    const Mat& y = runs[0][2];
    const Mat ap = pack(a, m, nb, ldp), rp = pack(r, m, nb, ldp);
    const double anorm = fro(ap), eps = DBL_EPSILON * (m + nb);
    // Rows past m of the panel's leading dimension untouched.
    for (long j = 0; j < nb; ++j)
      for (long i = m; i < ldp; ++i) ASSERT_EQ(r[i + j * ldp], a[i + j * ldp]);
    // Structure: R upper trapezoidal, Y unit lower trapezoidal, columns past kk of W and Y zero.
    long bad = 0;
    for (long j = 0; j < nb; ++j)
      for (long i = 0; i < m; ++i) {
        if (i > j && rp[i + j * m] != 0.0) ++bad;
        const double yv = y[i + j * m];
        if (j >= kk && (yv != 0.0 || w[i + j * m] != 0.0)) ++bad;
        if (j < kk && ((i < j && yv != 0.0) || (i == j && yv != 1.0))) ++bad;
      }
    EXPECT_EQ(bad, 0) << "structure";
    // Q R = panel and Q orthogonal, checked on the span of [Y W] (where Q - I lives).
    Mat qr = rp;
    apply_q('N', m, nb, w, y, qr, nb);
    Mat diff(qr.size());
    for (size_t i = 0; i < qr.size(); ++i) diff[i] = qr[i] - ap[i];
    EXPECT_LE(fro(diff), 50 * eps * anorm) << "Q R - panel";
    Mat x(y);
    x.insert(x.end(), w.begin(), w.end());
    Mat qtqx = x;
    apply_q('N', m, nb, w, y, qtqx, 2 * nb);
    apply_q('T', m, nb, w, y, qtqx, 2 * nb);
    for (size_t i = 0; i < x.size(); ++i) qtqx[i] -= x[i];
    EXPECT_LE(fro(qtqx), 50 * eps * std::max(fro(x), 1.0)) << "Q^T Q - I";
    if (kind == Kind::RepeatedColumns) return;  // reflectors of rounding noise are arbitrary
    EXPECT_LE(max_abs_diff(r, hp), 10 * eps * anorm) << "R";
    EXPECT_LE(max_abs_diff(w, hw), 40 * eps) << "W";
    EXPECT_LE(max_abs_diff(y, hy), 40 * eps) << "Y";
  }
};

const long kRows[] = {1, 2, 31, 32, 33, 100, 1000, 4099, 32769};
// nb = 64 is not taken by the fused kernel (see GpuBackend::PanelQrPath): its repeated-columns
// case lost orthogonality on the H100.
const long kCols[] = {1, 2, 7, 16, 32};

TEST_F(GpuPanelQrTest, FusedKernelAppliesToDbbrPanels) {
  // Forced: the sizes below must exercise the fused kernel, not only the fallback.
  gpu_.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Fused);
  for (long m : kRows)
    for (long nb : kCols) EXPECT_TRUE(gpu_.panel_qr_fused(m, nb)) << m << " x " << nb;
  EXPECT_FALSE(gpu_.panel_qr_fused(1000, 64));  // too wide: cuSOLVER
  // Auto: only where it is faster.
  gpu_.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Auto);
  EXPECT_TRUE(gpu_.panel_qr_fused(16384, 32));
  EXPECT_TRUE(gpu_.panel_qr_fused(8192, 32));
  EXPECT_FALSE(gpu_.panel_qr_fused(4096, 32));
  EXPECT_FALSE(gpu_.panel_qr_fused(16384, 64));
  gpu_.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Cusolver);
  EXPECT_FALSE(gpu_.panel_qr_fused(16384, 32));
}

TEST_F(GpuPanelQrTest, FusedEqualsLapack) {
  for (Kind kind : {Kind::Random, Kind::ZeroColumns, Kind::RepeatedColumns, Kind::Identity,
                    Kind::Tiny, Kind::Huge, Kind::Graded, Kind::ThreeRows, Kind::TinyBelow})
    for (long m : kRows)
      for (long nb : kCols) {
        SCOPED_TRACE(std::string(name(kind)) + " m=" + std::to_string(m) +
                     " nb=" + std::to_string(nb));
        check(kind, m, nb, gpu::GpuBackend::PanelQrPath::Fused);
        if (HasFatalFailure()) return;
      }
}

// The fused kernel scales each column by a power of two itself, so scaling a column of the panel
// by 2^s changes nothing but R's column, exactly 2^s times (one rounding where it is subnormal):
// subnormal (2^-1060, 2^-1070: a few bits left) and huge (2^1000) columns against the same panel
// with its columns scaled back (exactly) to O(1). LAPACK is no reference there: its trailing
// updates of subnormal columns round in subnormal arithmetic.
TEST_F(GpuPanelQrTest, FusedPassesColumnScalingsExactly) {
  gpu_.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Fused);
  const int shifts[] = {-1060, 1000, 0, -1000, -1070, 7};
  for (long m : {1L, 2L, 33L, 1000L, 4099L, 32769L})
    for (long nb : {1L, 7L, 32L}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " nb=" + std::to_string(nb));
      ASSERT_TRUE(gpu_.panel_qr_fused(m, nb));
      const long ldp = m + 3;
      const Mat a = make_panel(Kind::Random, m, nb, ldp, static_cast<unsigned>(m * 7 + nb));
      Mat scaled = a, back = a;
      for (long j = 0; j < nb; ++j)
        for (long i = 0; i < m; ++i) {
          const int s = shifts[j % 6];
          scaled[i + j * ldp] = std::ldexp(a[i + j * ldp], s);
          back[i + j * ldp] = std::ldexp(scaled[i + j * ldp], -s);
        }
      Mat out[2][3];
      const Mat* in[2] = {&scaled, &back};
      for (int r = 0; r < 2; ++r) {
        Dev p(gpu_, *in[r]), w(gpu_, Mat(m * nb, 7.0)), y(gpu_, Mat(m * nb, 7.0));
        gpu_.panel_qr(m, nb, p.get(), ldp, w.get(), m, y.get(), m);
        out[r][0] = p.to_host(ldp * nb);
        out[r][1] = w.to_host(m * nb);
        out[r][2] = y.to_host(m * nb);
      }
      EXPECT_TRUE(bitwise_equal(out[0][1], out[1][1])) << "W";
      EXPECT_TRUE(bitwise_equal(out[0][2], out[1][2])) << "Y";
      long bad = 0;
      for (long j = 0; j < nb; ++j)
        for (long i = 0; i < m; ++i)
          if (out[0][0][i + j * ldp] != std::ldexp(out[1][0][i + j * ldp], shifts[j % 6])) ++bad;
      EXPECT_EQ(bad, 0) << "R";
    }
}

// Every width the backend gives the fused kernel (1..32), on the panels that stress a Householder
// QR: rank-deficient (zero and repeated columns), graded, and with x^T x underflowing.
TEST_F(GpuPanelQrTest, FusedAtEveryServedWidthOnDifficultPanels) {
  for (Kind kind : {Kind::ZeroColumns, Kind::RepeatedColumns, Kind::Graded, Kind::TinyBelow})
    for (long m : {33L, 1000L, 4099L})
      for (long nb = 1; nb <= 32; ++nb) {
        SCOPED_TRACE(std::string(name(kind)) + " m=" + std::to_string(m) +
                     " nb=" + std::to_string(nb));
        gpu_.set_panel_qr_path(gpu::GpuBackend::PanelQrPath::Fused);
        ASSERT_TRUE(gpu_.panel_qr_fused(m, nb));  // the fused kernel, not the fallback
        check(kind, m, nb, gpu::GpuBackend::PanelQrPath::Fused);
        if (HasFatalFailure()) return;
      }
}

// Widths past 32 go to cuSOLVER (any band PIPEVD_BAND allows): the same difficult panels there.
TEST_F(GpuPanelQrTest, CusolverPathOnDifficultPanels) {
  for (Kind kind : {Kind::ZeroColumns, Kind::RepeatedColumns, Kind::Tiny, Kind::Huge, Kind::Graded,
                    Kind::ThreeRows, Kind::TinyBelow})
    for (long m : {33L, 1000L, 4099L})
      for (long nb : {33L, 48L, 64L, 96L}) {
        SCOPED_TRACE(std::string(name(kind)) + " m=" + std::to_string(m) +
                     " nb=" + std::to_string(nb));
        check(kind, m, nb, gpu::GpuBackend::PanelQrPath::Cusolver);
        if (HasFatalFailure()) return;
      }
}

// The fused kernel at the widths the backend keeps from it (33..64), launched directly: what
// serving them would need. Repeated columns leave noise eps times smaller per repeat, so wide
// panels reach subnormal x, where dlarfg's beta, tau and alpha - beta must be formed from 2^600 x
// to stay consistent (bench/panel_qr_model/README.md).
TEST_F(GpuPanelQrTest, FusedKernelPastTheServedWidths) {
  for (Kind kind : {Kind::RepeatedColumns, Kind::Random, Kind::ZeroColumns, Kind::Graded,
                    Kind::TinyBelow, Kind::Tiny, Kind::Huge})
    for (long m : {33L, 100L, 1000L, 4099L, 32769L})
      for (long nb : {33L, 40L, 42L, 44L, 48L, 56L, 64L}) {
        SCOPED_TRACE(std::string(name(kind)) + " m=" + std::to_string(m) +
                     " nb=" + std::to_string(nb));
        check(kind, m, nb, gpu::GpuBackend::PanelQrPath::Fused, true);
        if (HasFatalFailure()) return;
      }
}

TEST_F(GpuPanelQrTest, CusolverPathEqualsLapack) {
  for (Kind kind : {Kind::Random, Kind::ZeroColumns, Kind::Identity})
    for (long m : {1L, 33L, 1000L, 4099L})
      for (long nb : {1L, 7L, 32L, 64L}) {
        SCOPED_TRACE(std::string(name(kind)) + " m=" + std::to_string(m) +
                     " nb=" + std::to_string(nb));
        check(kind, m, nb, gpu::GpuBackend::PanelQrPath::Cusolver);
      }
}

}  // namespace
}  // namespace pipevd
