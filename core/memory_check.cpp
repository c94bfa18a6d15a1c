#include "core/memory_check.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include "core/host_memory_room.hpp"

namespace pipevd {

long usable_engine_bytes(long free_bytes, long limit) {
  if (limit > 0) return free_bytes < 0 ? limit : std::min(free_bytes, limit);
  return free_bytes;
}

long engine_memory_margin(long predicted_bytes) { return predicted_bytes / 32 + (512L << 20); }

bool engine_memory_fits(long predicted_bytes, long usable_bytes) {
  return usable_bytes < 0 ||
         predicted_bytes + engine_memory_margin(predicted_bytes) <= usable_bytes;
}

namespace {

// Collective over `caller`: false where no rank falls short (shortfall <= 0 everywhere); else true,
// with the (required, usable) of the rank short by most in said[0..1] on every rank.
bool worst_shortfall(MPI_Comm caller, long shortfall, long required, long usable, long said[2]) {
  struct {
    long value;
    int rank;
  } local{shortfall, 0}, worst{0, 0};
  MPI_Comm_rank(caller, &local.rank);
  MPI_Allreduce(&local, &worst, 1, MPI_LONG_INT, MPI_MAXLOC, caller);
  if (worst.value <= 0) return false;
  said[0] = required;
  said[1] = usable;
  MPI_Bcast(said, 2, MPI_LONG, worst.rank, caller);
  return true;
}

}  // namespace

void check_engine_memory(MPI_Comm caller, const EngineLayout& layout, int engine_rank, long b,
                         long k, bool want_vectors, bool on_gpu, long free_bytes, long limit,
                         bool symmetric_product, bool dc_fold, long words, bool dbbr_cyclic) {
  const long need =
      engine_rank < 0
          ? -1
          : static_cast<long>(plan_engine_memory(layout, engine_rank, b, k, want_vectors, on_gpu,
                                                 false, false, symmetric_product, dc_fold, words,
                                                 dbbr_cyclic)
                                  .peak_bytes());
  agree_engine_memory(caller, layout.n, want_vectors, on_gpu, need, free_bytes, limit);
}

void agree_engine_memory(MPI_Comm caller, long n, bool want_vectors, bool on_gpu, long need,
                         long free_bytes, long limit) {
  // (shortfall, required, usable) of this rank; the worst rank's reach everyone.
  long mine[3] = {0, 0, -1};
  if (need >= 0) {
    const long usable = usable_engine_bytes(free_bytes, limit);
    mine[1] = need;
    mine[2] = usable;
    if (!engine_memory_fits(need, usable)) mine[0] = need + engine_memory_margin(need) - usable;
  }
  if (!worst_shortfall(caller, mine[0], mine[1], mine[2], mine + 1)) return;
  char msg[400];
  std::snprintf(msg, sizeof msg,
                "n = %ld %s needs %.3f GiB of %s memory per engine rank (%ld bytes, plus a margin "
                "of %ld), but %.3f GiB (%ld bytes) are usable%s",
                n, want_vectors ? "with eigenvectors" : "eigenvalues only", mine[1] / 1073741824.0,
                on_gpu ? "GPU" : "engine", mine[1], engine_memory_margin(mine[1]),
                mine[2] / 1073741824.0, mine[2], limit > 0 ? " (PIPEVD_GPU_MEMORY_LIMIT)" : "");
  throw EngineMemoryShortage(msg);
}

void agree_host_memory(MPI_Comm caller, MPI_Comm node, long n, long need, long limit) {
  long node_need = need;
  MPI_Allreduce(MPI_IN_PLACE, &node_need, 1, MPI_LONG, MPI_SUM, node);
  long room = limit > 0 ? limit : cgroup_memory_room();
  MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_LONG, MPI_MIN, node);
  const long shortfall = room >= 0 && node_need > room ? node_need - room : 0;
  long said[2];
  if (!worst_shortfall(caller, shortfall, node_need, room, said)) return;
  char msg[300];
  std::snprintf(msg, sizeof msg,
                "n = %ld needs %.3f GiB more host memory on a node (%ld bytes), but %.3f GiB "
                "(%ld bytes) are left to it%s",
                n, said[0] / 1073741824.0, said[0], said[1] / 1073741824.0, said[1],
                limit > 0 ? " (PIPEVD_HOST_MEMORY_LIMIT)" : " (the memory cgroup's limit)");
  throw EngineMemoryShortage(msg);
}

}  // namespace pipevd
