#include "tests/support/hermitian.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>

extern "C" {
void zgeqrf_(const int*, const int*, void*, const int*, void*, void*, const int*, int*);
void zungqr_(const int*, const int*, const int*, void*, const int*, const void*, void*, const int*,
             int*);
void zheevd_(const char*, const char*, const int*, void*, const int*, double*, void*, const int*,
             double*, const int*, int*, const int*, int*, size_t, size_t);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
            const int*, const void*, const int*, const void*, void*, const int*, size_t, size_t);
}

namespace pipevd::test {
namespace {

double frobenius(const std::vector<Complex>& x) {
  double s = 0;
  for (const Complex& v : x) s += std::norm(v);
  return std::sqrt(s);
}

// The real layout of an m x m complex matrix: twice the rows, in blocks of twice the rows.
BlockCyclicLayout as_doubles(int m, int nb, int rsrc, int csrc, int lld_extra) {
  return BlockCyclicLayout{2 * m, m, 2 * nb, nb, rsrc, csrc, 2 * lld_extra};
}

}  // namespace

std::vector<Complex> hermitian_with_eigenvalues(const std::vector<double>& lambda, unsigned seed) {
  const int n = static_cast<int>(lambda.size());
  std::vector<Complex> a(static_cast<std::size_t>(n) * n, 0.0);
  if (n == 0) return a;
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + 7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<Complex> q(a.size()), tau(n);
  for (Complex& v : q) v = Complex(normal(gen), normal(gen));
  int info = 0, lwork = -1;
  Complex query = 0;
  zgeqrf_(&n, &n, q.data(), &n, tau.data(), &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(query.real()));
  std::vector<Complex> work(lwork);
  zgeqrf_(&n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  lwork = -1;
  zungqr_(&n, &n, &n, q.data(), &n, tau.data(), &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(query.real()));
  work.assign(lwork, 0.0);
  zungqr_(&n, &n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  std::vector<Complex> ql(q);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) ql[i + static_cast<std::size_t>(j) * n] *= lambda[j];
  const Complex one = 1, zero = 0;
  zgemm_("N", "C", &n, &n, &n, &one, ql.data(), &n, q.data(), &n, &zero, a.data(), &n, 1, 1);
  for (int j = 0; j < n; ++j) {
    a[j + static_cast<std::size_t>(j) * n] = a[j + static_cast<std::size_t>(j) * n].real();
    for (int i = j + 1; i < n; ++i) {
      Complex& lo = a[i + static_cast<std::size_t>(j) * n];
      Complex& up = a[j + static_cast<std::size_t>(i) * n];
      lo = 0.5 * (lo + std::conj(up));
      up = std::conj(lo);
    }
  }
  return a;
}

ComplexDistributedMatrix::ComplexDistributedMatrix(const BlacsGrid& grid, int m, int nb, int rsrc,
                                                   int csrc, int lld_extra)
    : real(grid, as_doubles(m, nb, rsrc, csrc, lld_extra)) {
  std::copy(real.desc, real.desc + 9, desc);
  desc[2] = m;                              // M_
  desc[4] = nb;                             // MB_
  desc[8] = std::max(1, real.desc[8] / 2);  // LLD_
}

void ComplexDistributedMatrix::fill(const std::function<Complex(long, long)>& f, int threads) {
  // Local complex row il is the real view's rows 2 il (real part) and 2 il + 1 (imaginary part),
  // global complex row global_index(il, nb, ...): each element computed once for both.
  const DistributedMatrix& r = real;
  const int rows_here = r.local_rows / 2, nb = desc[4], lld = r.desc[8];
  std::vector<long> rows(rows_here);
  for (int il = 0; il < rows_here; ++il)
    rows[il] = global_index(il, nb, r.myrow, r.layout.rsrc, r.nprow);
  for_column_parts(r.local_cols, threads, [&](long first, long last) {
    for (long jl = first; jl < last; ++jl) {
      const long j =
          global_index(static_cast<int>(jl), r.layout.nb, r.mycol, r.layout.csrc, r.npcol);
      double* column = real.local.data() + static_cast<size_t>(jl) * lld;
      for (int il = 0; il < rows_here; ++il) {
        const Complex v = f(rows[il], j);
        column[2 * il] = v.real();
        column[2 * il + 1] = v.imag();
      }
    }
  });
}

std::vector<Complex> ComplexDistributedMatrix::gather(const BlacsGrid& grid) const {
  const std::vector<double> d = real.gather(grid);
  std::vector<Complex> c(d.size() / 2);
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = Complex(d[2 * k], d[2 * k + 1]);
  return c;
}

double hermitian_residual(int n, const std::vector<Complex>& a, const std::vector<Complex>& z,
                          const std::vector<double>& w) {
  if (n == 0) return 0;
  std::vector<Complex> r(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) r[i + std::size_t(j) * n] = z[i + std::size_t(j) * n] * w[j];
  const Complex one = 1, minus_one = -1;
  zgemm_("N", "N", &n, &n, &n, &one, a.data(), &n, z.data(), &n, &minus_one, r.data(), &n, 1, 1);
  return frobenius(r) / (std::max(frobenius(a), DBL_MIN) * n * DBL_EPSILON);
}

double unitary_orthogonality(int n, const std::vector<Complex>& z) {
  if (n == 0) return 0;
  std::vector<Complex> r(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) r[i + std::size_t(i) * n] = -1;
  const Complex one = 1;
  zgemm_("C", "N", &n, &n, &n, &one, z.data(), &n, z.data(), &n, &one, r.data(), &n, 1, 1);
  return frobenius(r) / (n * DBL_EPSILON);
}

std::vector<double> lapack_hermitian_eigenvalues(int n, std::vector<Complex> a) {
  std::vector<double> w(n);
  if (n == 0) return w;
  int lwork = -1, lrwork = -1, liwork = -1, info = 0, iwq = 0;
  Complex wq = 0;
  double rwq = 0;
  zheevd_("N", "L", &n, a.data(), &n, w.data(), &wq, &lwork, &rwq, &lrwork, &iwq, &liwork, &info, 1,
          1);
  lwork = std::max(1, static_cast<int>(wq.real()));
  lrwork = std::max(1, static_cast<int>(rwq));
  liwork = std::max(1, iwq);
  std::vector<Complex> work(lwork);
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(liwork);
  zheevd_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &lrwork,
          iwork.data(), &liwork, &info, 1, 1);
  return w;
}

}  // namespace pipevd::test
