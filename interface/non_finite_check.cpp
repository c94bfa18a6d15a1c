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
// entry by its larger part, which is finite exactly where the entry is (its modulus may overflow).
double max_abs(double m, double v) {
  const double a = std::fabs(v);
  return std::isnan(a) || a > m ? a : m;
}
double max_abs(double m, std::complex<double> v) { return max_abs(max_abs(m, v.real()), v.imag()); }

// The running maxima of one column: the NaN-propagating one above, and the modulus one of the
// norm (the same for a real entry).
struct ColumnMax {
  double part = 0, modulus = 0;
  void add(double v) { part = modulus = max_abs(part, v); }
  void add(std::complex<double> v) {
    part = max_abs(part, v);
    modulus = std::max(modulus, std::abs(v));
  }
  // A diagonal entry: PZLANHE takes its real part only (a Hermitian diagonal is real; PZHEEVD
  // ignores the imaginary parts there, though a NaN in them is still refused).
  void add_diagonal(double v) { add(v); }
  void add_diagonal(std::complex<double> v) {
    part = max_abs(part, v);
    modulus = std::max(modulus, std::fabs(v.real()));
  }
};

template <class Scalar>
EntryScan scan(const EigenCall<Scalar>& c, MPI_Comm grid, int threads) {
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
  std::vector<ColumnMax> col_max(static_cast<std::size_t>(std::max(0, cols)));
  parallel_for(cols, threads, [&](long lj) {
    const long j = global_index(lj, d[NB_], mycol, d[CSRC_], npcol) - j0;
    if (j < 0 || j >= n) return;
    ColumnMax m;
    const Scalar* a = c.a + lj * lld;
    for (long li = 0; li < rows; ++li) {
      const long i = row[li];
      if (i == j)
        m.add_diagonal(a[li]);
      else if (i >= 0 && (lower ? i > j : i < j))
        m.add(a[li]);
    }
    col_max[lj] = m;
  });
  double part = 0, modulus = 0;
  for (const ColumnMax& m : col_max) {
    part = max_abs(part, m.part);
    modulus = std::max(modulus, m.modulus);
  }
  double agreed[2] = {std::isfinite(part) ? 0.0 : 1.0, modulus};  // one reduction for both
  MPI_Allreduce(MPI_IN_PLACE, agreed, 2, MPI_DOUBLE, MPI_MAX, grid);
  return {agreed[0] != 0, agreed[1]};
}

}  // namespace

EntryScan agreed_entry_scan(const PdsyevdCall& c, MPI_Comm grid, int threads) {
  return scan(c, grid, threads);
}

EntryScan agreed_entry_scan(const PzheevdCall& c, MPI_Comm grid, int threads) {
  return scan(c, grid, threads);
}

}  // namespace pipevd
