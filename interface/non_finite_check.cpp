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

// The maxima over a[0, count), entries off the diagonal: two running maxima side by side, so the
// loop is not one chain of dependent compares.
void add_range(ColumnMax& m, const double* a, long count) {
  double m0 = m.part, m1 = 0;
  long k = 0;
  for (; k + 2 <= count; k += 2) {
    m0 = max_abs(m0, a[k]);
    m1 = max_abs(m1, a[k + 1]);
  }
  if (k < count) m0 = max_abs(m0, a[k]);
  m.part = m.modulus = max_abs(m0, m1);
}
void add_range(ColumnMax& m, const std::complex<double>* a, long count) {
  for (long k = 0; k < count; ++k) m.add(a[k]);
}

// Entries of the local array per worker at most: each worker is a thread started for this scan,
// and for small arrays starting threads costs more than the scan.
constexpr long kScanEntriesPerThread = 1L << 20;

template <class Scalar>
EntryScan scan(const EigenCall<Scalar>& c, MPI_Comm grid, int threads) {
  const int* d = c.desca;
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&d[CTXT_], &nprow, &npcol, &myrow, &mycol);
  const int rows = numroc_(&d[M_], &d[MB_], &myrow, &d[RSRC_], &nprow);
  const int cols = numroc_(&d[N_], &d[NB_], &mycol, &d[CSRC_], &npcol);
  const long n = *c.n, i0 = *c.ia - 1, j0 = *c.ja - 1, lld = d[LLD_];
  const bool lower = std::toupper(static_cast<unsigned char>(c.uplo)) == 'L';
  // Row of sub(A) of each local row: increasing with the local row, so the local rows of one
  // column's triangle are one range, found by bisection.
  std::vector<long> row(static_cast<std::size_t>(std::max(0, rows)));
  for (long l = 0; l < rows; ++l) row[l] = global_index(l, d[MB_], myrow, d[RSRC_], nprow) - i0;
  const auto first_at_least = [&](long i) {
    return std::lower_bound(row.begin(), row.end(), i) - row.begin();
  };
  std::vector<ColumnMax> col_max(static_cast<std::size_t>(std::max(0, cols)));
  const long entries = static_cast<long>(std::max(0, rows)) * std::max(0, cols);
  const int workers = static_cast<int>(
      std::clamp(entries / kScanEntriesPerThread, 1L, static_cast<long>(std::max(1, threads))));
  parallel_for(cols, workers, [&](long lj) {
    const long j = global_index(lj, d[NB_], mycol, d[CSRC_], npcol) - j0;
    if (j < 0 || j >= n) return;
    // Local rows [lo, hi) of the triangle's column j, the diagonal included.
    long lo = first_at_least(lower ? j : 0), hi = first_at_least(lower ? n : j + 1);
    ColumnMax m;
    const Scalar* a = c.a + lj * lld;
    if (lo < hi && row[lower ? lo : hi - 1] == j) m.add_diagonal(a[lower ? lo++ : --hi]);
    add_range(m, a + lo, hi - lo);
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
