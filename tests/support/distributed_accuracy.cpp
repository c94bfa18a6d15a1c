#include "tests/support/distributed_accuracy.hpp"

#include <algorithm>
#include <cfloat>
#include <complex>

#include "base/scalapack_api.hpp"
#include "tests/support/distributed_matrix.hpp"

extern "C" {
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
             const double*, const int*, const int*, const int*, const double*, const int*,
             const int*, const int*, const double*, double*, const int*, const int*, const int*,
             size_t, size_t);
double pdlange_(const char*, const int*, const int*, const double*, const int*, const int*,
                const int*, double*, size_t);
void pzgemm_(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
             const int*, const int*, const int*, const void*, const int*, const int*, const int*,
             const void*, void*, const int*, const int*, const int*, size_t, size_t);
double pzlange_(const char*, const int*, const int*, const void*, const int*, const int*,
                const int*, double*, size_t);
}

namespace pipevd::test {
namespace {

using namespace pipevd::scalapack;

struct LocalShape {
  int myrow = -1, mycol = -1, nprow = 1, npcol = 1, rows = 0, cols = 0;
  bool in_grid() const { return myrow >= 0 && myrow < nprow && mycol >= 0 && mycol < npcol; }
};

LocalShape local_shape(const int* desc) {
  LocalShape s;
  Cblacs_gridinfo(desc[CTXT_], &s.nprow, &s.npcol, &s.myrow, &s.mycol);
  if (!s.in_grid()) return s;
  s.rows = numroc_(&desc[M_], &desc[MB_], &s.myrow, &desc[RSRC_], &s.nprow);
  s.cols = numroc_(&desc[N_], &desc[NB_], &s.mycol, &desc[CSRC_], &s.npcol);
  return s;
}

using Complex = std::complex<double>;

double frobenius(int n, const double* x, const int* desc) {
  const int one = 1;
  double work = 0;  // not referenced for 'F'
  return pdlange_("F", &n, &n, x, &one, &one, desc, &work, 1);
}
double frobenius(int n, const Complex* x, const int* desc) {
  const int one = 1;
  double work = 0;
  return pzlange_("F", &n, &n, x, &one, &one, desc, &work, 1);
}

// C = alpha op(A) B + beta C on n x n matrices of one descriptor; 'T' is the conjugate transpose
// for complex elements (what orthogonality means for them).
void gemm(char transa, int n, double alpha, const double* a, const double* b, double beta,
          double* c, const int* desc) {
  const int one = 1;
  pdgemm_(&transa, "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, c,
          &one, &one, desc, 1, 1);
}
void gemm(char transa, int n, double alpha, const Complex* a, const Complex* b, double beta,
          Complex* c, const int* desc) {
  const int one = 1;
  const char op = transa == 'T' ? 'C' : transa;
  const Complex za = alpha, zb = beta;
  pzgemm_(&op, "N", &n, &n, &n, &za, a, &one, &one, desc, b, &one, &one, desc, &zb, c, &one, &one,
          desc, 1, 1);
}

// This process's part of a matrix of desc's layout (local leading dimension LLD_, zeros in the
// padding rows): entry(k, i, j) for its local element k = il + jl LLD_ at global (i, j).
template <class T, class Entry>
std::vector<T> local_part(const int* desc, const LocalShape& s, Entry&& entry) {
  const int lld = desc[LLD_];
  std::vector<T> r(static_cast<size_t>(lld) * std::max(1, s.cols), T(0));
  for (int jl = 0; jl < s.cols; ++jl) {
    const long j = global_index(jl, desc[NB_], s.mycol, desc[CSRC_], s.npcol);
    for (int il = 0; il < s.rows; ++il) {
      const long i = global_index(il, desc[MB_], s.myrow, desc[RSRC_], s.nprow);
      const size_t k = il + static_cast<size_t>(jl) * lld;
      r[k] = entry(k, i, j);
    }
  }
  return r;
}

template <class T>
double residual_any(int n, const T* a, const T* z, const int* desc, const std::vector<double>& w) {
  const LocalShape s = local_shape(desc);
  if (n == 0 || !s.in_grid()) return 0;
  // R = Z diag(w) (local columns scaled by their global eigenvalue), then R = A Z - R.
  std::vector<T> r = local_part<T>(desc, s, [&](size_t k, long, long j) { return z[k] * w[j]; });
  gemm('N', n, 1, a, z, -1, r.data(), desc);
  const double anorm = std::max(frobenius(n, a, desc), DBL_MIN);
  return frobenius(n, r.data(), desc) / (anorm * n * DBL_EPSILON);
}

template <class T>
double orthogonality_any(int n, const T* z, const int* desc) {
  const LocalShape s = local_shape(desc);
  if (n == 0 || !s.in_grid()) return 0;
  // R = -I, then R = Z^T Z + R (Z^H Z for complex Z).
  std::vector<T> r =
      local_part<T>(desc, s, [](size_t, long i, long j) { return i == j ? T(-1) : T(0); });
  gemm('T', n, 1, z, z, 1, r.data(), desc);
  return frobenius(n, r.data(), desc) / (n * DBL_EPSILON);
}

}  // namespace

double distributed_residual(int n, const double* a, const double* z, const int* desc,
                            const std::vector<double>& w) {
  return residual_any(n, a, z, desc, w);
}
double distributed_orthogonality(int n, const double* z, const int* desc) {
  return orthogonality_any(n, z, desc);
}
double distributed_residual(int n, const Complex* a, const Complex* z, const int* desc,
                            const std::vector<double>& w) {
  return residual_any(n, a, z, desc, w);
}
double distributed_orthogonality(int n, const Complex* z, const int* desc) {
  return orthogonality_any(n, z, desc);
}

}  // namespace pipevd::test
