// The GPU backend's complex Hermitian operations (PZHEEVD's two-stage engine, issue 28) against
// the host backend (the oracle, LAPACK's z routines), on fresh random inputs at several sizes
// including odd ones: fills and mirrors (exact), ZGEMM with every op, the rank-2k update kept
// Hermitian, DBBR's A W, the reflector blocks' merge, the panel's QR (the same R, W, Y to
// rounding, A = (I - W Y^H) R, I - W Y^H unitary), bulge chasing (the host's real tridiagonal to
// rounding, and (Q_b D)^H B (Q_b D) = T with the GPU's own reflectors and phase; the staged
// kernel bitwise the same as the one in place, under every schedule), the reflectors
// kept on the device between the chase and BC-back, and BC-back (X Q_b D as host::apply_bc_back).
// Results computed twice must be bitwise identical (a moving result is a race).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/reflector_store.hpp"
#include "core/tridiagonal_solver.hpp"
#include "gpu/bulge_chasing_complex.cuh"
#include "host/bc_back.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/cuda_array.hpp"
#include "tests/support/gpu_host_fixture.hpp"
#include "tests/support/gpu_mpi_environment.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using ZMat = std::vector<Complex>;

using test::random_complex_vector;

// n x n Hermitian in an ld x n array (real diagonal), rows past n random.
ZMat random_hermitian(long n, long ld, unsigned seed) {
  ZMat a = random_complex_vector(ld * n, seed);
  for (long j = 0; j < n; ++j) {
    a[j + j * ld] = a[j + j * ld].real();
    for (long i = 0; i < j; ++i) a[i + j * ld] = std::conj(a[j + i * ld]);
  }
  return a;
}

double norm(const ZMat& x) {
  double s = 0;
  for (const Complex& v : x) s += std::norm(v);
  return std::sqrt(s);
}

double max_abs_diff(const ZMat& x, const ZMat& y) {
  EXPECT_EQ(x.size(), y.size());
  double d = 0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) d = std::max(d, std::abs(x[i] - y[i]));
  return d;
}

bool bitwise_equal(const ZMat& x, const ZMat& y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(Complex)) == 0);
}

// Host data <-> a complex buffer of an engine backend.
struct ZDev {
  EngineBackend& be;
  BasicDeviceBuffer<Complex> buf;
  ZDev(EngineBackend& b, const ZMat& host) : be(b), buf(b, std::max<long>(1, host.size())) {
    be.copy_to_device(host.data(), buf.get(), static_cast<long>(host.size()));
  }
  ZDev(EngineBackend& b, long count) : be(b), buf(b, std::max(1L, count)) {}
  Complex* get() const { return buf.get(); }
  ZMat to_host(long count) const {
    ZMat h(static_cast<size_t>(count));
    be.copy_to_host(buf.get(), h.data(), count);
    return h;
  }
};

class GpuComplexBackendTest : public test::GpuAgainstHostTest {};

TEST_F(GpuComplexBackendTest, FillMatrixIsExact) {
  for (auto [m, n, ld] : {std::array<long, 3>{1, 1, 1}, {7, 5, 9}, {33, 1, 40}, {130, 17, 257}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    const ZMat a0 = random_complex_vector(ld * n, 3);
    const Complex alpha(-2.5, 0.25), beta(7.0, -1.5);
    ZMat want = a0;
    host_.fill_matrix(m, n, alpha, beta, want.data(), ld);
    ZDev d(gpu_, a0);
    gpu_.fill_matrix(m, n, alpha, beta, d.get(), ld);
    EXPECT_TRUE(bitwise_equal(d.to_host(ld * n), want));
  }
}

// The triangle uplo mirrored (conjugated) into the other, which held NaN, the diagonal's imaginary
// parts (nonzero on entry) dropped: bitwise the host's, padding rows kept, exactly Hermitian.
TEST_F(GpuComplexBackendTest, MirrorTriangleEqualsHost) {
  for (long n : {1L, 2L, 33L, 100L, 257L})
    for (char uplo : {'L', 'U'}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " uplo=" + uplo);
      const long lda = n + 3;
      ZMat a = random_complex_vector(lda * n, static_cast<unsigned>(n));
      for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i)
          if (uplo == 'L' ? i < j : i > j) a[i + j * lda] = Complex(std::nan(""), std::nan(""));
      ZMat want = a;
      host_.mirror_triangle(uplo, n, want.data(), lda);
      ZDev d(gpu_, a);
      gpu_.mirror_triangle(uplo, n, d.get(), lda);
      const ZMat got = d.to_host(lda * n);
      EXPECT_TRUE(bitwise_equal(got, want));
      for (long j = 0; j < n; ++j) {
        ASSERT_EQ(got[j + j * lda].imag(), 0.0);
        for (long i = 0; i < n; ++i) ASSERT_EQ(got[i + j * lda], std::conj(got[j + i * lda]));
      }
    }
}

TEST_F(GpuComplexBackendTest, GemmEqualsHost) {
  const Complex alpha(-1.5, 0.75), beta(0.5, -0.25);
  for (char ta : {'N', 'T', 'C'})
    for (char tb : {'N', 'T', 'C'})
      for (auto [m, n, k] :
           {std::array<long, 3>{1, 1, 1}, {33, 7, 65}, {257, 129, 31}, {5, 3, 0}}) {
        SCOPED_TRACE(std::string(1, ta) + tb + " m=" + std::to_string(m) +
                     " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const long lda = (ta == 'N' ? m : k) + 3, ldb = (tb == 'N' ? k : n) + 1, ldc = m + 2;
        const ZMat a = random_complex_vector(lda * (ta == 'N' ? k : m), 5),
                   b = random_complex_vector(ldb * (tb == 'N' ? n : k), 6),
                   c0 = random_complex_vector(ldc * n, 7);
        ZMat want = c0;
        host_.gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, want.data(), ldc);
        ZDev da(gpu_, a), db(gpu_, b), dc(gpu_, c0);
        gpu_.gemm(ta, tb, m, n, k, alpha, da.get(), lda, db.get(), ldb, beta, dc.get(), ldc);
        const ZMat got = dc.to_host(ldc * n);
        EXPECT_LT(max_abs_diff(got, want), 1e-14 * (k + 2) * 8);
        for (long j = 0; j < n; ++j)  // padding rows untouched
          for (long i = m; i < ldc; ++i) ASSERT_EQ(got[i + j * ldc], c0[i + j * ldc]);
      }
}

// C + alpha A B^H + conj(alpha) B A^H on the Hermitian C kept full: the host's to rounding, and
// exactly Hermitian (the upper triangle the conjugate of the lower, the diagonal real).
TEST_F(GpuComplexBackendTest, Syr2kFullEqualsHost) {
  const Complex alpha(-0.75, 0.5);
  for (long n : {1L, 2L, 33L, 130L, 257L})
    for (long k : {1L, 7L, 32L}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
      const long ld = n + 2;
      const ZMat a = random_complex_vector(ld * k, 11), b = random_complex_vector(ld * k, 12),
                 c0 = random_hermitian(n, ld, 13);
      ZMat want = c0;
      host_.syr2k_full(n, k, alpha, a.data(), ld, b.data(), ld, want.data(), ld);
      ZMat runs[2];
      for (ZMat& run : runs) {
        ZDev da(gpu_, a), db(gpu_, b), dc(gpu_, c0);
        gpu_.syr2k_full(n, k, alpha, da.get(), ld, db.get(), ld, dc.get(), ld);
        run = dc.to_host(ld * n);
      }
      EXPECT_TRUE(bitwise_equal(runs[0], runs[1]));
      const ZMat& got = runs[0];
      EXPECT_LT(max_abs_diff(got, want), 1e-14 * (k + 2) * 8);
      for (long j = 0; j < n; ++j) {
        ASSERT_EQ(got[j + j * ld].imag(), 0.0);
        for (long i = 0; i < n; ++i) ASSERT_EQ(got[i + j * ld], std::conj(got[j + i * ld]));
        for (long i = n; i < ld; ++i) ASSERT_EQ(got[i + j * ld], c0[i + j * ld]);
      }
    }
}

// DBBR's Z = S W for the Hermitian S given by its columns in two pieces (split).
TEST_F(GpuComplexBackendTest, SymmetricProductEqualsHost) {
  for (long m : {1L, 37L, 301L})
    for (long k : {1L, 8L, 33L})
      for (long split : {0L, m / 3, m}) {
        SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) +
                     " split=" + std::to_string(split));
        const long ld = m + 4;
        const ZMat s = random_hermitian(m, ld, 17), w = random_complex_vector(ld * k, 18),
                   z0 = random_complex_vector(ld * k, 19);
        const long ld2 = ld;  // S's columns from `split` on, in a second array
        ZMat s2(static_cast<size_t>(ld2 * std::max(1L, m - split)));
        for (long j = split; j < m; ++j)
          for (long i = 0; i < m; ++i) s2[i + (j - split) * ld2] = s[i + j * ld];
        ZMat want = z0;
        host_.symmetric_product(m, k, split, s.data(), ld, s2.data(), ld2, w.data(), ld,
                                want.data(), ld);
        ZDev ds(gpu_, s), ds2(gpu_, s2), dw(gpu_, w), dz(gpu_, z0);
        gpu_.symmetric_product(m, k, split, ds.get(), ld, ds2.get(), ld2, dw.get(), ld, dz.get(),
                               ld);
        EXPECT_LT(max_abs_diff(dz.to_host(ld * k), want), 1e-14 * (m + 2) * 8);
      }
}

TEST_F(GpuComplexBackendTest, MergeReflectorBlocksEqualsHost) {
  for (auto [m, k1, k2] : {std::array<long, 3>{1, 1, 1}, {37, 8, 8}, {301, 64, 32}, {513, 33, 7}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " k1=" + std::to_string(k1) +
                 " k2=" + std::to_string(k2));
    const long ld = m + 1;
    const ZMat w0 = random_complex_vector(ld * (k1 + k2), 21),
               y = random_complex_vector(ld * (k1 + k2), 22);
    ZMat want = w0;
    host_.merge_reflector_blocks(m, k1, k2, want.data(), ld, y.data(), ld);
    ZDev dw(gpu_, w0), dy(gpu_, y);
    gpu_.merge_reflector_blocks(m, k1, k2, dw.get(), ld, dy.get(), ld);
    EXPECT_LT(max_abs_diff(dw.to_host(ld * (k1 + k2)), want), 1e-14 * m * 8);
  }
}

// Q = I - W Y^H (m x m) formed on the host.
ZMat form_q(long m, long nb, const ZMat& w, const ZMat& y, HostBackend& be) {
  ZMat q(static_cast<size_t>(m * m), Complex(0));
  for (long i = 0; i < m; ++i) q[i + i * m] = 1.0;
  be.gemm('N', 'C', m, m, nb, Complex(-1), w.data(), m, y.data(), m, Complex(1), q.data(), m);
  return q;
}

// ||Q R - A|| / ||A|| with Q = I - W Y^H and R the upper trapezoid left in the panel.
double qr_reconstruction_error(long m, long nb, const ZMat& a, const ZMat& r, const ZMat& w,
                               const ZMat& y, HostBackend& be) {
  ZMat qr = r;  // m x nb, ld m
  ZMat s(static_cast<size_t>(nb * nb));
  be.gemm('C', 'N', nb, nb, m, Complex(1), y.data(), m, r.data(), m, Complex(0), s.data(), nb);
  be.gemm('N', 'N', m, nb, nb, Complex(-1), w.data(), m, s.data(), nb, Complex(1), qr.data(), m);
  for (size_t i = 0; i < qr.size(); ++i) qr[i] -= a[i];
  return norm(qr) / std::max(norm(a), DBL_MIN);
}

// ||Q^H Q - I||_F / m.
double unitarity_error(long m, const ZMat& q, HostBackend& be) {
  ZMat g(static_cast<size_t>(m * m), Complex(0));
  for (long i = 0; i < m; ++i) g[i + i * m] = -1.0;
  be.gemm('C', 'N', m, m, m, Complex(1), q.data(), m, q.data(), m, Complex(1), g.data(), m);
  return norm(g) / static_cast<double>(m);
}

ZMat columns(long m, long nb, const ZMat& a, long lda) {
  ZMat c(static_cast<size_t>(m * nb));
  for (long j = 0; j < nb; ++j)
    for (long i = 0; i < m; ++i) c[i + j * m] = a[i + j * lda];
  return c;
}

TEST_F(GpuComplexBackendTest, PanelQrEqualsHost) {
  for (auto [m, nb] : {std::array<long, 2>{1, 1},
                       {2, 1},
                       {5, 3},
                       {3, 5},
                       {33, 32},
                       {100, 32},
                       {257, 8},
                       {1000, 32},
                       {999, 2},
                       {301, 64}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " nb=" + std::to_string(nb));
    const long ldp = m + 5;
    const ZMat a = random_complex_vector(ldp * nb, static_cast<unsigned>(m * 31 + nb));
    ZMat hp = a, hw(m * nb), hy(m * nb);
    host_.panel_qr(m, nb, hp.data(), ldp, hw.data(), m, hy.data(), m);
    ZMat runs[2][3];
    for (auto& run : runs) {
      ZDev p(gpu_, a), w(gpu_, m * nb), y(gpu_, m * nb);
      gpu_.panel_qr(m, nb, p.get(), ldp, w.get(), m, y.get(), m);
      run[0] = p.to_host(ldp * nb);
      run[1] = w.to_host(m * nb);
      run[2] = y.to_host(m * nb);
    }
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(bitwise_equal(runs[0][i], runs[1][i])) << i;
    const ZMat &r = runs[0][0], &w = runs[0][1], &y = runs[0][2];
    const double scale = norm(a) * DBL_EPSILON * (m + nb);
    EXPECT_LT(max_abs_diff(r, hp), 10 * scale) << "R";
    EXPECT_LT(max_abs_diff(w, hw), 10 * DBL_EPSILON * (m + nb) * 8) << "W";
    EXPECT_LT(max_abs_diff(y, hy), 10 * DBL_EPSILON * (m + nb) * 8) << "Y";
    // Below the diagonal of R, above the unit diagonal of Y, past min(m, nb) in W and Y: exact.
    for (long j = 0; j < nb; ++j)
      for (long i = 0; i < m; ++i) {
        if (i > j) {
          EXPECT_EQ(r[i + j * ldp], Complex(0));
        }
        if (i < j) {
          EXPECT_EQ(y[i + j * m], Complex(0));
        }
        if (i == j) {
          EXPECT_EQ(y[i + j * m], Complex(1));
        }
        if (j >= m) {
          EXPECT_EQ(w[i + j * m], Complex(0));
        }
      }
    EXPECT_LT(
        qr_reconstruction_error(m, nb, columns(m, nb, a, ldp), columns(m, nb, r, ldp), w, y, host_),
        100 * DBL_EPSILON * (m + nb));
    if (m <= 301) {
      EXPECT_LT(unitarity_error(m, form_q(m, nb, w, y, host_), host_), 100 * DBL_EPSILON);
    }
  }
}

TEST_F(GpuComplexBackendTest, PanelQrWithIdentityReflectorsIsAValidFactorization) {
  // Column 0 = 3 e_1 and column 3 = 0 have nothing to annihilate: their reflectors are the
  // identity (tau = 0 in zlarfg's convention, alpha real), and T must stay finite with Q R = A.
  const long m = 40, nb = 4;
  ZMat a = random_complex_vector(m * nb, 9);
  for (long i = 0; i < m; ++i) a[i] = i == 0 ? 3.0 : 0.0;
  for (long i = 0; i < m; ++i) a[i + 3 * m] = 0.0;
  ZDev p(gpu_, a), w(gpu_, m * nb), y(gpu_, m * nb);
  gpu_.panel_qr(m, nb, p.get(), m, w.get(), m, y.get(), m);
  const ZMat r = p.to_host(m * nb), wh = w.to_host(m * nb), yh = y.to_host(m * nb);
  for (const Complex& v : wh) ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
  EXPECT_LT(qr_reconstruction_error(m, nb, a, r, wh, yh, host_), 100 * DBL_EPSILON * m);
  EXPECT_LT(unitarity_error(m, form_q(m, nb, wh, yh, host_), host_), 100 * DBL_EPSILON);
  ZMat hp = a, hw(m * nb), hy(m * nb);
  host_.panel_qr(m, nb, hp.data(), m, hw.data(), m, hy.data(), m);
  EXPECT_LT(max_abs_diff(wh, hw), 1e-13) << "W";
}

// A random Hermitian band in lower band storage (ldab = b + 1): zeros past the matrix, and the
// diagonal with imaginary parts that the chase must ignore (a Hermitian diagonal is real).
ZMat random_band(long n, long b, unsigned seed) {
  ZMat ab = random_complex_vector(n * (b + 1), seed);
  for (long j = 0; j < n; ++j)
    for (long r = 0; r <= b; ++r)
      if (j + r >= n) ab[r + j * (b + 1)] = 0.0;
  return ab;
}

// The full n x n Hermitian B from its band.
ZMat full_from_band(long n, long b, const ZMat& ab) {
  ZMat a(static_cast<size_t>(n * n), Complex(0));
  for (long j = 0; j < n; ++j) {
    a[j + j * n] = ab[j * (b + 1)].real();
    for (long r = 1; r <= b && j + r < n; ++r) {
      a[(j + r) + j * n] = ab[r + j * (b + 1)];
      a[j + (j + r) * n] = std::conj(ab[r + j * (b + 1)]);
    }
  }
  return a;
}

// ||(Q_b D)^H B (Q_b D) - T||_F / ||B||_F and ||(Q_b D)^H (Q_b D) - I||_F / n, B's band in ab
// (ldab = b + 1), Q_b D formed by host::apply_bc_back on the identity with u's reflectors and
// phase.
std::array<double, 2> reduction_errors(long n, long b, const ZMat& ab, const double* d,
                                       const double* e, const ComplexReflectorStore& u,
                                       HostBackend& be) {
  ZMat q(static_cast<size_t>(n * n), Complex(0));
  for (long i = 0; i < n; ++i) q[i + i * n] = 1.0;
  host::apply_bc_back(u, n, q.data(), n);
  const ZMat a = full_from_band(n, b, ab);
  ZMat aq(static_cast<size_t>(n * n)), t(static_cast<size_t>(n * n), Complex(0));
  for (long i = 0; i < n; ++i) {
    t[i + i * n] = -d[i];
    if (i + 1 < n) t[(i + 1) + i * n] = t[i + (i + 1) * n] = -e[i];
  }
  be.gemm('N', 'N', n, n, n, Complex(1), a.data(), n, q.data(), n, Complex(0), aq.data(), n);
  be.gemm('C', 'N', n, n, n, Complex(1), q.data(), n, aq.data(), n, Complex(1), t.data(), n);
  return {norm(t) / std::max(norm(a), DBL_MIN), unitarity_error(n, q, be)};
}

// The GPU's chase against the host's: d and e to rounding (with T's eigenvalues at the larger n,
// where T's entries are not well-conditioned functions of B), e >= 0, the GPU's own reflectors and
// phase reducing B to its T, the eigenvalues-only chase bitwise the same d and e, and repeated runs
// bitwise identical.
TEST_F(GpuComplexBackendTest, BulgeChaseEqualsHost) {
  for (auto [n, b] : {std::array<long, 2>{1, 1},
                      {2, 1},
                      {3, 2},
                      {5, 4},
                      {6, 9},
                      {33, 8},
                      {64, 1},
                      {100, 8},
                      {129, 16},
                      {257, 32},
                      {200, 64},
                      {1001, 32}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b));
    const long bw = std::max(0L, std::min(b, n - 1)), ldab = b + 1;
    const ZMat ab = random_band(n, b, static_cast<unsigned>(n * 3 + b));
    std::vector<double> hd(n), he(n), gd[2], ge[2];
    ComplexReflectorStore hu, gu[2];
    host_.bulge_chase(n, b, ab.data(), ldab, hd.data(), he.data(), hu);
    ZDev dab(gpu_, ab);
    for (int r = 0; r < 2; ++r) {
      gd[r].assign(n, 0.0);
      ge[r].assign(n, 0.0);
      gpu_.bulge_chase(n, b, dab.get(), ldab, gd[r].data(), ge[r].data(), gu[r]);
    }
    EXPECT_EQ(std::memcmp(gd[0].data(), gd[1].data(), sizeof(double) * n), 0);
    EXPECT_EQ(std::memcmp(ge[0].data(), ge[1].data(), sizeof(double) * (n - 1)), 0);
    EXPECT_TRUE(bitwise_equal(gu[0].v, gu[1].v));
    EXPECT_TRUE(bitwise_equal(gu[0].tau, gu[1].tau));
    EXPECT_TRUE(bitwise_equal(gu[0].phase, gu[1].phase));
    ASSERT_EQ(gu[0].layout.n, n);
    ASSERT_EQ(gu[0].layout.b, bw);
    ASSERT_EQ(gu[0].phase.size(), static_cast<size_t>(n));
    EXPECT_FALSE(gu[0].held_by_backend);
    std::vector<double> vd(n), ve(n);
    gpu_.bulge_chase_values(n, b, dab.get(), ldab, vd.data(), ve.data());
    EXPECT_EQ(std::memcmp(vd.data(), gd[0].data(), sizeof(double) * n), 0);
    EXPECT_EQ(std::memcmp(ve.data(), ge[0].data(), sizeof(double) * (n - 1)), 0);
    double scale = 0;
    for (const Complex& z : ab) scale = std::max(scale, std::abs(z));
    for (long i = 0; i + 1 < n; ++i) ASSERT_GE(ge[0][i], 0.0);
    if (n <= 100) {
      for (long i = 0; i < n; ++i) EXPECT_NEAR(gd[0][i], hd[i], 1e-13 * n * scale) << "d " << i;
      for (long i = 0; i + 1 < n; ++i) EXPECT_NEAR(ge[0][i], he[i], 1e-13 * n * scale) << "e " << i;
      // The reflectors themselves: the host's to rounding.
      EXPECT_LT(max_abs_diff(gu[0].tau, hu.tau), 1e-12 * n);
      EXPECT_LT(max_abs_diff(gu[0].v, hu.v), 1e-11 * n);
    }
    std::vector<double> hev = hd, gev = gd[0], hee = he, gee = ge[0];
    ASSERT_EQ(tridiagonal_eigenvalues(n, hev.data(), hee.data()), 0);
    ASSERT_EQ(tridiagonal_eigenvalues(n, gev.data(), gee.data()), 0);
    EXPECT_LT(test::eigenvalue_difference(gev, hev), 1e-13 * std::sqrt(static_cast<double>(n)));
    if (n <= 257) {
      const auto [reduction, unitarity] =
          reduction_errors(n, b, ab, gd[0].data(), ge[0].data(), gu[0], host_);
      EXPECT_LT(reduction, 100 * DBL_EPSILON * n) << "(Q_b D)^H B (Q_b D) - T";
      EXPECT_LT(unitarity, 100 * DBL_EPSILON) << "Q_b D unitary";
    }
  }
}

// gpu::bulge_chase_complex called directly with given tunables: d, the complex subdiagonal and
// every reflector (v and tau poisoned before, so an entry left unwritten shows).
struct DirectChase {
  std::vector<double> d;
  ZMat sub, v, tau;
};

DirectChase direct_chase(long n, long b, const ZMat& ab, const gpu::BulgeChasingTunables& tun) {
  const ReflectorLayout L{n, std::max(0L, std::min(b, n - 1))};
  const test::CudaArray<Complex, cuDoubleComplex> dab(ab), dsub(n), dv(L.vector_array_size()),
      dtau(L.count());
  const test::CudaArray<double> dd(n);
  const test::CudaArray<char> work(
      static_cast<long>(gpu::bulge_chase_complex_workspace_bytes(n, b)));
  test::check_cuda(cudaMemset(dv.p, 0xff, sizeof(Complex) * std::max(1L, L.vector_array_size())));
  test::check_cuda(cudaMemset(dtau.p, 0xff, sizeof(Complex) * std::max(1L, L.count())));
  gpu::bulge_chase_complex(n, b, dab.p, b + 1, dd.p, dsub.p, dv.p, dtau.p, work.p, tun, nullptr);
  test::check_cuda(cudaDeviceSynchronize());
  return {dd.download(n), dsub.download(std::max(0L, n - 1)), dv.download(L.vector_array_size()),
          dtau.download(L.count())};
}

gpu::BulgeChasingTunables default_tunables(long n, long b) {
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  return gpu::default_bulge_chasing_tunables(device, n, b);
}

// Each step's window staged in shared memory against the step in place on the band: the same
// arithmetic in the same order, so bitwise the same d, subdiagonal, v and tau, at odd n and under
// several sweeps per block (8: more than fit at b = 32, capped) and blocks per SM.
TEST_F(GpuComplexBackendTest, StagedChaseBitwiseEqualsInPlace) {
  for (long n : {33L, 97L, 255L, 1001L, 2049L})
    for (long b : {4L, 16L, 32L}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b));
      const ZMat ab = random_band(n, b, static_cast<unsigned>(n * 7 + b));
      gpu::BulgeChasingTunables in_place = default_tunables(n, b);
      in_place.stage_window = false;
      ASSERT_FALSE(gpu::bulge_chase_complex_plan(n, b, in_place).staged);
      const DirectChase ref = direct_chase(n, b, ab, in_place);
      for (auto [per_block, per_sm] : {std::array<int, 2>{1, 1}, {2, 1}, {3, 0}, {8, 1}}) {
        SCOPED_TRACE("sweeps per block " + std::to_string(per_block) + ", blocks per SM " +
                     std::to_string(per_sm));
        gpu::BulgeChasingTunables staged = in_place;
        staged.stage_window = true;
        staged.sweeps_per_block = per_block;
        staged.blocks_per_sm = per_sm;
        const gpu::ComplexChasePlan plan = gpu::bulge_chase_complex_plan(n, b, staged);
        ASSERT_TRUE(plan.staged);
        EXPECT_GE(plan.sweeps_per_block, 1);
        EXPECT_LE(plan.sweeps_per_block, per_block);
        const DirectChase c = direct_chase(n, b, ab, staged);
        EXPECT_EQ(std::memcmp(c.d.data(), ref.d.data(), sizeof(double) * n), 0) << "d";
        EXPECT_TRUE(bitwise_equal(c.sub, ref.sub)) << "subdiagonal";
        EXPECT_TRUE(bitwise_equal(c.v, ref.v)) << "v";
        EXPECT_TRUE(bitwise_equal(c.tau, ref.tau)) << "tau";
      }
    }
}

// The default (staged for these b) against the host's chase: d, |sub| (the host's e after its
// phase) and the reflectors to rounding at small n, T's eigenvalues at all, and the staged
// reflectors with the phase made from sub reducing B to T.
TEST_F(GpuComplexBackendTest, StagedChaseEqualsHost) {
  for (auto [n, b] :
       {std::array<long, 2>{33, 4}, {97, 16}, {97, 32}, {255, 32}, {1001, 32}, {2049, 16}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b));
    const gpu::BulgeChasingTunables tun = default_tunables(n, b);
    ASSERT_TRUE(gpu::bulge_chase_complex_plan(n, b, tun).staged);
    const ZMat ab = random_band(n, b, static_cast<unsigned>(n * 5 + b));
    std::vector<double> hd(n), he(n);
    ComplexReflectorStore hu;
    host_.bulge_chase(n, b, ab.data(), b + 1, hd.data(), he.data(), hu);
    const DirectChase g = direct_chase(n, b, ab, tun);
    ComplexReflectorStore gu(n, std::min(b, n - 1));
    gu.v = g.v;
    gu.tau = g.tau;
    gu.phase.assign(static_cast<size_t>(n), Complex(1.0));
    std::vector<double> ge(n, 0.0);
    for (long i = 0; i + 1 < n; ++i) {
      ge[i] = std::abs(g.sub[i]);
      gu.phase[i + 1] = ge[i] == 0.0 ? gu.phase[i] : gu.phase[i] * (g.sub[i] / ge[i]);
    }
    double scale = 0;
    for (const Complex& z : ab) scale = std::max(scale, std::abs(z));
    if (n <= 100) {
      for (long i = 0; i < n; ++i) EXPECT_NEAR(g.d[i], hd[i], 1e-13 * n * scale) << "d " << i;
      for (long i = 0; i + 1 < n; ++i) EXPECT_NEAR(ge[i], he[i], 1e-13 * n * scale) << "e " << i;
      EXPECT_LT(max_abs_diff(g.tau, hu.tau), 1e-12 * n);
      EXPECT_LT(max_abs_diff(g.v, hu.v), 1e-11 * n);
    }
    std::vector<double> hev = hd, gev = g.d, hee = he, gee = ge;
    ASSERT_EQ(tridiagonal_eigenvalues(n, hev.data(), hee.data()), 0);
    ASSERT_EQ(tridiagonal_eigenvalues(n, gev.data(), gee.data()), 0);
    EXPECT_LT(test::eigenvalue_difference(gev, hev), 1e-13 * std::sqrt(static_cast<double>(n)));
    if (n <= 255) {
      const auto [reduction, unitarity] =
          reduction_errors(n, b, ab, g.d.data(), ge.data(), gu, host_);
      EXPECT_LT(reduction, 100 * DBL_EPSILON * n) << "(Q_b D)^H B (Q_b D) - T";
      EXPECT_LT(unitarity, 100 * DBL_EPSILON) << "Q_b D unitary";
    }
  }
}

// X Q_b D on the GPU as host::apply_bc_back (the host chase's reflectors and phase), padding rows
// untouched, repeated runs bitwise identical.
TEST_F(GpuComplexBackendTest, BcBackEqualsHost) {
  std::vector<std::array<long, 2>> cases;  // n, b: b clamped to n - 1 as the engine does
  for (long n : {3L, 33L, 257L, 1000L})
    for (long b : {2L, 8L, 32L})
      if (b == 2 || b <= n - 1) cases.push_back({n, b});
  cases.push_back({257, 64});
  cases.push_back({2, 1});
  for (auto [n, b] : cases) {
    const long bw = std::max(1L, std::min(b, n - 1));
    ComplexReflectorStore u;
    const ZMat ab = random_band(n, bw, static_cast<unsigned>(n + b));
    std::vector<double> d(n), e(n);
    host_.bulge_chase(n, bw, ab.data(), bw + 1, d.data(), e.data(), u);
    for (long m : {1L, 37L, 129L}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(bw) +
                   " m=" + std::to_string(m));
      const long ldx = m + 2;
      const ZMat x0 = random_complex_vector(ldx * n, static_cast<unsigned>(m * 7 + n));
      ZMat want = x0;
      host::apply_bc_back(u, m, want.data(), ldx);
      ZMat got[2];
      for (ZMat& g : got) {
        ZDev x(gpu_, x0);
        gpu_.bc_back(u, m, x.get(), ldx);
        g = x.to_host(ldx * n);
      }
      EXPECT_TRUE(bitwise_equal(got[0], got[1]));
      EXPECT_LT(max_abs_diff(got[0], want), 1e-15 * n * 16);
      for (long j = 0; j < n; ++j)
        for (long i = m; i < ldx; ++i) ASSERT_EQ(got[0][i + j * ldx], x0[i + j * ldx]);
    }
  }
}

// The engine's chase (host_copy false) keeps the reflectors on the device only: the same d, e and
// D bitwise as with the host copy, no host vectors, and bc_back on them bitwise the one from the
// host copy (itself host::apply_bc_back's to rounding), again on a second call. A host copy changed
// after the chase is uploaded, not taken from the device; reflectors overwritten by an upload or
// released can no longer be used.
TEST_F(GpuComplexBackendTest, ReflectorsKeptOnTheDevice) {
  for (auto [n, b] :
       {std::array<long, 2>{1, 1}, {2, 1}, {3, 2}, {33, 8}, {200, 64}, {257, 32}, {1001, 32}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b));
    const long ldab = b + 1;
    const ZMat ab = random_band(n, b, static_cast<unsigned>(n * 5 + b));
    ZDev dab(gpu_, ab);
    std::vector<double> gd(n), ge(n), kd(n), ke(n);
    ComplexReflectorStore gu, ku;
    gpu_.bulge_chase(n, b, dab.get(), ldab, gd.data(), ge.data(), gu, /*host_copy=*/true);
    const long m = 45, ldx = m + 3;
    const ZMat x0 = random_complex_vector(ldx * n, static_cast<unsigned>(n * 11 + b));
    ZMat want = x0;
    host::apply_bc_back(gu, m, want.data(), ldx);
    ZDev x(gpu_, x0);
    gpu_.bc_back(gu, m, x.get(), ldx);  // the device copy, the fingerprint finding gu unchanged
    const ZMat got = x.to_host(ldx * n);
    EXPECT_LT(max_abs_diff(got, want), 1e-15 * n * 16);

    gpu_.bulge_chase(n, b, dab.get(), ldab, kd.data(), ke.data(), ku, /*host_copy=*/false);
    EXPECT_EQ(std::memcmp(kd.data(), gd.data(), sizeof(double) * n), 0);
    EXPECT_EQ(std::memcmp(ke.data(), ge.data(), sizeof(double) * (n - 1)), 0);
    EXPECT_TRUE(bitwise_equal(ku.phase, gu.phase));
    EXPECT_TRUE(ku.v.empty() && ku.tau.empty());
    EXPECT_EQ(ku.held_by_backend, n > 0);
    ASSERT_EQ(ku.layout.n, gu.layout.n);
    ASSERT_EQ(ku.layout.b, gu.layout.b);
    for (int r = 0; r < 2; ++r) {
      ZDev kx(gpu_, x0);
      gpu_.bc_back(ku, m, kx.get(), ldx);
      EXPECT_TRUE(bitwise_equal(kx.to_host(ldx * n), got)) << "call " << r;
    }

    // gu is no longer the last chase: uploaded, the same result bitwise; ku's device copy is gone.
    ZDev ux(gpu_, x0);
    gpu_.bc_back(gu, m, ux.get(), ldx);
    EXPECT_TRUE(bitwise_equal(ux.to_host(ldx * n), got));
    const bool has_reflectors = ku.layout.count() > 0;
    if (has_reflectors) EXPECT_THROW(gpu_.bc_back(ku, m, ux.get(), ldx), std::logic_error);

    // A host copy changed after its chase: its new reflectors, not the device's.
    ComplexReflectorStore cu;
    gpu_.bulge_chase(n, b, dab.get(), ldab, kd.data(), ke.data(), cu, /*host_copy=*/true);
    if (has_reflectors) {
      cu.tau[cu.tau.size() / 2] = Complex(0);
      ZMat want_changed = x0;
      host::apply_bc_back(cu, m, want_changed.data(), ldx);
      ZDev cx(gpu_, x0);
      gpu_.bc_back(cu, m, cx.get(), ldx);
      const ZMat changed = cx.to_host(ldx * n);
      EXPECT_LT(max_abs_diff(changed, want_changed), 1e-15 * n * 16);
      EXPECT_FALSE(bitwise_equal(changed, got));
    }

    // Released: held reflectors refused (a store without reflectors needs none: D alone).
    gpu_.bulge_chase(n, b, dab.get(), ldab, kd.data(), ke.data(), ku, /*host_copy=*/false);
    gpu_.release_reflectors();
    ZDev rx(gpu_, x0);
    if (has_reflectors) {
      EXPECT_THROW(gpu_.bc_back(ku, m, rx.get(), ldx), std::logic_error);
    } else {
      gpu_.bc_back(ku, m, rx.get(), ldx);
      EXPECT_TRUE(bitwise_equal(rx.to_host(ldx * n), got));
    }
  }
}

}  // namespace
}  // namespace pipevd
