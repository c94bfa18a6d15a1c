#include "interface/non_finite_check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <vector>

#include "redistribute/parallel_pieces.hpp"

namespace pipevd {
namespace {

using namespace scalapack;

// Global 0-based index of local index l (0-based) on process p: blocks of nb dealt from `src`.
long global_index(long l, int nb, int p, int src, int nprocs) {
  const int shift = (p - src + nprocs) % nprocs;
  return (l / nb * nprocs + shift) * nb + l % nb;
}

// Max |a| with NaN propagating (std::max drops a NaN depending on the operands' order); a complex
// entry by its larger part, which is finite exactly where the entry is.
double max_abs(double m, double v) {
  const double a = std::fabs(v);
  return std::isnan(a) || a > m ? a : m;
}
double max_abs(double m, std::complex<double> v) { return max_abs(max_abs(m, v.real()), v.imag()); }

template <class Scalar>
bool non_finite(const EigenCall<Scalar>& c, MPI_Comm grid, int threads) {
  const int* d = c.desca;
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&d[CTXT_], &nprow, &npcol, &myrow, &mycol);
  const int rows = numroc_(&d[M_], &d[MB_], &myrow, &d[RSRC_], &nprow);
  const int cols = numroc_(&d[N_], &d[NB_], &mycol, &d[CSRC_], &npcol);
  const long n = *c.n, i0 = *c.ia - 1, j0 = *c.ja - 1, lld = d[LLD_];
  const bool lower = std::toupper(static_cast<unsigned char>(c.uplo)) == 'L';
  // Row of sub(A) of each local row (-1 outside it).
  std::vector<long> row(static_cast<std::size_t>(std::max(0, rows)));
  for (long l = 0; l < rows; ++l) {
    const long i = global_index(l, d[MB_], myrow, d[RSRC_], nprow) - i0;
    row[l] = i >= 0 && i < n ? i : -1;
  }
  std::vector<double> col_max(static_cast<std::size_t>(std::max(0, cols)), 0.0);
  parallel_for(cols, threads, [&](long lj) {
    const long j = global_index(lj, d[NB_], mycol, d[CSRC_], npcol) - j0;
    if (j < 0 || j >= n) return;
    double m = 0;
    const Scalar* a = c.a + lj * lld;
    for (long li = 0; li < rows; ++li) {
      const long i = row[li];
      if (i >= 0 && (lower ? i >= j : i <= j)) m = max_abs(m, a[li]);
    }
    col_max[lj] = m;
  });
  double m = 0;
  for (double v : col_max) m = max_abs(m, v);
  int bad = !std::isfinite(m);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, grid);
  return bad != 0;
}

}  // namespace

bool agreed_non_finite(const PdsyevdCall& c, MPI_Comm grid, int threads) {
  return non_finite(c, grid, threads);
}

bool agreed_non_finite(const PzheevdCall& c, MPI_Comm grid, int threads) {
  return non_finite(c, grid, threads);
}

}  // namespace pipevd
