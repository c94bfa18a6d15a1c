#include "tests/support/distributed_matrix.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>

#include "base/parallel_for.hpp"
#include "base/scalapack_api.hpp"

namespace pipevd::test {

long global_index(int l, int nb, int p, int src, int nprocs) {
  const int shifted = (p - src + nprocs) % nprocs;
  return static_cast<long>(l / nb) * nprocs * nb + static_cast<long>(shifted) * nb + l % nb;
}

DistributedMatrix::DistributedMatrix(const BlacsGrid& grid, const BlockCyclicLayout& l)
    : layout(l), myrow(grid.myrow), mycol(grid.mycol), nprow(grid.nprow), npcol(grid.npcol) {
  if (!grid.in_grid()) return;
  local_rows = numroc_(&l.m, &l.mb, &myrow, &l.rsrc, &nprow);
  local_cols = numroc_(&l.n, &l.nb, &mycol, &l.csrc, &npcol);
  const int lld = std::max(1, local_rows) + l.lld_extra;
  int info = 0;
  descinit_(desc, &l.m, &l.n, &l.mb, &l.nb, &l.rsrc, &l.csrc, &grid.ictxt, &lld, &info);
  local.assign(static_cast<size_t>(lld) * std::max(1, local_cols), 0.0);
}

void for_column_parts(long count, int threads, const std::function<void(long, long)>& body) {
  const long parts = std::max(1, threads);
  parallel_for_ranges(count, threads, (count + parts - 1) / parts, body);
}

void DistributedMatrix::fill(const std::function<double(long, long)>& f, int threads) {
  const int lld = desc[8];
  // The rows' global indices once: global_index's divisions per element would cost as much as a
  // cheap f.
  std::vector<long> rows(local_rows);
  for (int il = 0; il < local_rows; ++il)
    rows[il] = global_index(il, layout.mb, myrow, layout.rsrc, nprow);
  for_column_parts(local_cols, threads, [&](long first, long last) {
    for (long jl = first; jl < last; ++jl) {
      const long j = global_index(static_cast<int>(jl), layout.nb, mycol, layout.csrc, npcol);
      double* column = local.data() + static_cast<size_t>(jl) * lld;
      for (int il = 0; il < local_rows; ++il) column[il] = f(rows[il], j);
    }
  });
}

std::vector<double> DistributedMatrix::gather(const BlacsGrid& grid) const {
  std::vector<double> full(static_cast<size_t>(layout.m) * layout.n, 0.0);
  if (grid.in_grid()) {
    const int lld = desc[8];
    for (int jl = 0; jl < local_cols; ++jl) {
      const long j = global_index(jl, layout.nb, mycol, layout.csrc, npcol);
      for (int il = 0; il < local_rows; ++il) {
        const long i = global_index(il, layout.mb, myrow, layout.rsrc, nprow);
        full[i + j * layout.m] = local[il + static_cast<size_t>(jl) * lld];
      }
    }
  }
  // Each element lives on exactly one process: a sum over all ranks assembles the matrix.
  MPI_Allreduce(MPI_IN_PLACE, full.data(), static_cast<int>(full.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  return full;
}

double random_symmetric_entry(long i, long j, unsigned seed) {
  uint64_t x = static_cast<uint64_t>(std::min(i, j)) * 0x9E3779B97F4A7C15ULL ^
               static_cast<uint64_t>(std::max(i, j)) * 0xC2B2AE3D27D4EB4FULL ^
               (uint64_t(seed) << 32);
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return static_cast<double>(x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

}  // namespace pipevd::test
