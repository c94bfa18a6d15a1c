#include "interface/non_finite_check.hpp"

#include <algorithm>
#include <cctype>
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
  const long entries = static_cast<long>(std::max(0, rows)) * std::max(0, cols);
  const int workers = static_cast<int>(
      std::clamp(entries / kScanEntriesPerThread, 1L, static_cast<long>(std::max(1, threads))));
  // Ranges of columns, a few per worker (the triangle's columns differ in length); each range
  // carries its running maximum from column to column.
  const long grain = std::max(1L, cols / (4L * workers));
  std::vector<EntryScanMax> range_max(
      static_cast<std::size_t>((std::max(0, cols) + grain - 1) / grain));
  parallel_for_ranges(cols, workers, grain, [&](long begin, long end) {
    EntryScanMax m;
    for (long lj = begin; lj < end; ++lj) {
      const long j = global_index(lj, d[NB_], mycol, d[CSRC_], npcol) - j0;
      if (j < 0 || j >= n) continue;
      // Local rows [lo, hi) of the triangle's column j, the diagonal included: its first local
      // row (L) or its last (U), where this rank holds it.
      const long lo = first_at_least(lower ? j : 0), hi = first_at_least(lower ? n : j + 1);
      const long diagonal =
          lo < hi && row[lower ? lo : hi - 1] == j ? (lower ? 0 : hi - 1 - lo) : -1;
      m.add_column_part(c.a + lj * lld + lo, hi - lo, diagonal);
    }
    range_max[begin / grain] = m;
  });
  EntryScanMax all;
  for (const EntryScanMax& m : range_max) all.add(m);
  const EntryScan found = all.result();
  double agreed[2] = {found.non_finite ? 1.0 : 0.0, found.max_abs};  // one reduction for both
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
