#include "redistribute/engine_to_block_cyclic.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "adapters/scalapack/scalapack_api.hpp"
#include "redistribute/message_buffer.hpp"
#include "redistribute/redistribution_plan.hpp"

namespace pipevd {

void engine_to_block_cyclic(long n, const double* z_rows, const EngineLayout& layout,
                            const EngineComm& comm, double* z, long iz, long jz, const int* descz,
                            const ExchangeOptions& options, PhaseTimes* times) {
  double t = MPI_Wtime();
  auto lap = [&](double PhaseTimes::*phase) {
    const double now = MPI_Wtime();
    if (times) times->*phase += now - t;
    t = now;
  };
  if (layout.n != n || layout.engine_ranks() != static_cast<int>(comm.engine_to_caller.size()))
    throw std::invalid_argument("engine_to_block_cyclic: layout does not match n or engine ranks");
  if (n == 0) return;
  const GridMap grid = grid_map(descz[scalapack::CTXT_]);
  const BlockCyclicView view = view_of(descz, iz, jz, n, n, grid.nprow, grid.npcol);
  const long lld = view.lld;
  int me = 0, size = 0;
  MPI_Comm_rank(comm.caller, &me);
  MPI_Comm_size(comm.caller, &size);
  if (grid.caller_rank[grid.myrow * grid.npcol + grid.mycol] != me)
    throw std::logic_error("engine_to_block_cyclic: comm is not the caller comm of this grid");

  const ExchangeCounts counts = counts_from_engine(view, grid, layout, comm);
  std::vector<long> soff(size + 1, 0), roff(size + 1, 0);
  for (int r = 0; r < size; ++r) {
    soff[r + 1] = soff[r] + counts.send[r];
    roff[r + 1] = roff[r] + counts.recv[r];
  }
  const LocalRuns mine = local_runs(view, grid.myrow, grid.mycol);

  // Engine ranks pack per destination (their own part goes straight into z).
  lap(&PhaseTimes::plan);
  MessageBuffer send(static_cast<size_t>(soff[size]));
  if (comm.engine_rank >= 0) {
    const int e = comm.engine_rank;
    const long r0 = layout.row_begin[e], r1 = layout.row_begin[e + 1];
    const long ldz = std::max(1L, r1 - r0);
    for (int dest = 0; dest < size; ++dest) {
      if (dest == me) {
        for_each_segment_from_engine(r0, r1, mine, [&](const Segment& s) {
          std::memcpy(z + s.dest_row + s.dest_col * lld, z_rows + s.src_row + s.src_col * ldz,
                      sizeof(double) * static_cast<size_t>(s.len));
        });
      } else if (counts.send[dest] > 0) {
        double* out = send.data() + soff[dest];
        for_each_segment_from_engine(r0, r1, local_runs(view, grid.prow[dest], grid.pcol[dest]),
                                     [&](const Segment& s) {
                                       std::memcpy(out, z_rows + s.src_row + s.src_col * ldz,
                                                   sizeof(double) * static_cast<size_t>(s.len));
                                       out += s.len;
                                     });
      }
    }
  }

  lap(&PhaseTimes::pack);
  MessageBuffer recv(static_cast<size_t>(roff[size]));
  exchange(send.data(), counts.send, recv.data(), counts.recv, comm.caller, options);
  send.release();
  lap(&PhaseTimes::exchange);

  for (int e = 0; e < layout.engine_ranks(); ++e) {
    const int src = comm.engine_to_caller[e];
    if (src == me || counts.recv[src] == 0) continue;
    const double* in = recv.data() + roff[src];
    for_each_segment_from_engine(layout.row_begin[e], layout.row_begin[e + 1], mine,
                                 [&](const Segment& s) {
                                   std::memcpy(z + s.dest_row + s.dest_col * lld, in,
                                               sizeof(double) * static_cast<size_t>(s.len));
                                   in += s.len;
                                 });
  }
  lap(&PhaseTimes::unpack);
}

}  // namespace pipevd
