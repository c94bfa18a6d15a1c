#include "core/tridiagonal_solver.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <vector>

#include "base/page_array.hpp"
#include "core/lapack_prototypes.hpp"

namespace pipevd {

int tridiagonal_eigenpairs(long n, double* d, double* e, double* qd) {
  if (n <= 0) return 0;
  if (n > 46340) throw std::length_error("pipevd: n too large for dstedc's 32-bit workspace");
  const int in = static_cast<int>(n);
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  double query = 0;
  dstedc_("I", &in, d, e, qd, &in, &query, &lwork, &iquery, &liwork, &info, 1);
  lwork = std::max(1, static_cast<int>(query));
  liwork = std::max(1, iquery);
  // n^2 doubles, in rank 0's D&C thread: pages of its own (base/page_array.hpp).
  PageArray<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(liwork);
  dstedc_("I", &in, d, e, qd, &in, work.data(), &lwork, iwork.data(), &liwork, &info, 1);
  return info;
}

int tridiagonal_eigenvalues(long n, double* d, double* e) {
  if (n <= 0) return 0;
  if (n > INT_MAX) throw std::length_error("pipevd: n exceeds int");
  const int in = static_cast<int>(n);
  int info = 0;
  dsterf_(&in, d, e, &info);
  return info;
}

int tridiagonal_eigenvalues_copy(long n, const double* d, const double* e, double* w) {
  if (n <= 0) return 0;
  std::copy(d, d + n, w);
  std::vector<double> ec(e, e + std::max(0L, n - 1));
  ec.push_back(0.0);
  return tridiagonal_eigenvalues(n, w, ec.data());
}

}  // namespace pipevd
