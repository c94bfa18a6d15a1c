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

// The largest |a_k| over the doubles a[0, count) (a complex entry's two parts are two of them) and
// whether every a_k is finite. Written so that compilers vectorise it at the project's flags (-O2,
// no -march): kGroups independent pairs of lanes (each pair one vector of two doubles), unrolled,
// so that no chain of dependent compares limits the loop, and no NaN branch: x > m ? x : m is the
// vector max, which leaves m as it was where x is a NaN, while v - v (0 for a finite v, NaN for a
// NaN or an infinity) turns the lane's sum into a NaN for good.
struct PartMax {
  double max = 0;
  bool finite = true;
};
constexpr int kLanes = 2, kGroups = 4;
PartMax part_max(const double* a, long count) {
  double m[kGroups][kLanes] = {}, bad[kGroups][kLanes] = {};
  long k = 0;
  for (; k + kGroups * kLanes <= count; k += kGroups * kLanes)
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g)
      for (int l = 0; l < kLanes; ++l) {
        const double v = a[k + g * kLanes + l], x = std::fabs(v);
        m[g][l] = x > m[g][l] ? x : m[g][l];
        bad[g][l] += v - v;
      }
  PartMax r;
  double sum = 0;
  for (; k < count; ++k) {
    const double x = std::fabs(a[k]);
    r.max = x > r.max ? x : r.max;
    sum += a[k] - a[k];
  }
  for (int g = 0; g < kGroups; ++g)
    for (int l = 0; l < kLanes; ++l) {
      r.max = m[g][l] > r.max ? m[g][l] : r.max;
      sum += bad[g][l];
    }
  r.finite = sum == 0;
  return r;
}

// What the scan has found over the columns it has read: all finite so far, and the norm's running
// maximum (a real entry's |a_ij|, a complex one's modulus, a Hermitian diagonal's |real part|).
struct ColumnsMax {
  double modulus = 0;
  bool finite = true;

  // A diagonal entry: PZLANHE takes its real part only (a Hermitian diagonal is real; PZHEEVD
  // ignores the imaginary parts there, though a NaN in them is still refused).
  void add_diagonal(double v) {
    finite = finite && std::isfinite(v);
    modulus = std::max(modulus, std::fabs(v));
  }
  void add_diagonal(std::complex<double> v) {
    finite = finite && std::isfinite(v.real()) && std::isfinite(v.imag());
    modulus = std::max(modulus, std::fabs(v.real()));
  }

  // Entries a[0, count) off the diagonal.
  void add_range(const double* a, long count) {
    const PartMax p = part_max(a, count);
    finite = finite && p.finite;
    modulus = std::max(modulus, p.max);
  }
  // The modulus is the costly part of a complex entry (a call to hypot, as PZLANHE's ABS): it is
  // taken only where it may exceed `floor`, a value the result reaches anyway. An entry's modulus
  // is at most sqrt(2) times its larger part, which kRootTwoAbove (above sqrt(2) by some ulps, for
  // the rounding of the product and of hypot) and kTinyAbove (for subnormal products) bound from
  // above. floor: the largest modulus so far, or the column's largest part where larger, which
  // the modulus of the entry that holds it reaches (hypot is never below either part).
  void add_range(const std::complex<double>* a, long count) {
    const PartMax p = part_max(reinterpret_cast<const double*>(a), 2 * count);
    finite = finite && p.finite;
    if (!finite) return;  // the norm means nothing now
    constexpr double kRootTwoAbove = 1.4142135623731, kTinyAbove = 0x1p-1060;
    double floor = std::max(modulus, p.max);
    for (long k = 0; k < count; ++k) {
      const double re = std::fabs(a[k].real()), im = std::fabs(a[k].imag());
      if (std::max(re, im) * kRootTwoAbove + kTinyAbove <= floor) continue;
      const double z = std::abs(a[k]);
      modulus = std::max(modulus, z);
      floor = std::max(floor, z);
    }
  }
};

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
  std::vector<ColumnsMax> range_max(
      static_cast<std::size_t>((std::max(0, cols) + grain - 1) / grain));
  parallel_for_ranges(cols, workers, grain, [&](long begin, long end) {
    ColumnsMax m;
    for (long lj = begin; lj < end; ++lj) {
      const long j = global_index(lj, d[NB_], mycol, d[CSRC_], npcol) - j0;
      if (j < 0 || j >= n) continue;
      // Local rows [lo, hi) of the triangle's column j, the diagonal included.
      long lo = first_at_least(lower ? j : 0), hi = first_at_least(lower ? n : j + 1);
      const Scalar* a = c.a + lj * lld;
      if (lo < hi && row[lower ? lo : hi - 1] == j) m.add_diagonal(a[lower ? lo++ : --hi]);
      m.add_range(a + lo, hi - lo);
    }
    range_max[begin / grain] = m;
  });
  ColumnsMax all;
  for (const ColumnsMax& m : range_max) {
    all.finite = all.finite && m.finite;
    all.modulus = std::max(all.modulus, m.modulus);
  }
  double agreed[2] = {all.finite ? 0.0 : 1.0, all.modulus};  // one reduction for both
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
