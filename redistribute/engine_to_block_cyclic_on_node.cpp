#include "redistribute/engine_to_block_cyclic_on_node.hpp"

#include <algorithm>
#include <complex>
#include <vector>

#include "redistribute/element.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/stream_copy.hpp"

namespace pipevd {

namespace {

// What one thread copies at a time: the elements of a slice of this process's column runs that
// engine rank `engine` holds.
struct Piece {
  int engine;
  LocalRuns runs;
};

}  // namespace

template <class T>
bool engine_to_block_cyclic_on_node(bool streaming, long n, const T* z_rows,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* z, int threads, PhaseClock& clock,
                                    PhaseTimes* times) {
  const Copier out{streaming};
  const int e = comm.engine_rank;
  // Engine rank d's segment: its rows as z_rows, leading dimension max(1, height(d)).
  auto ld_of = [&](int d) { return std::max(1L, layout.height(d)); };
  const long mine_elements = e >= 0 && layout.height(e) > 0 ? ld_of(e) * n : 0;
  // The window holds doubles: T's elements take Element<T>::doubles each.
  const NodeWindow* shared = node_window(
      comm.caller,
      std::max(mine_elements, engine_segment_elements(layout, e)) * Element<T>::doubles, threads);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  const LocalRuns mine = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  const int slices = threads > 1 ? 4 * threads : 1;
  std::vector<Piece> pieces;
  for (int d = 0; d < layout.engine_ranks(); ++d)
    if (layout.height(d) > 0)
      for (const auto& [k0, k1] : split_runs(mine.cols.size(), slices))
        pieces.push_back(Piece{d, with_cols(mine, k0, k1)});
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window.win);
  clock.lap(&PhaseTimes::plan);

  // Engine ranks: their rows into their segment, one contiguous copy in 2 MiB pieces.
  copy_on_threads(out, window.base[setup.me], doubles_of(z_rows),
                  mine_elements * Element<T>::doubles, threads);
  clock.lap(&PhaseTimes::pack);
  node_window_barrier(window, comm.caller);
  clock.lap(&PhaseTimes::exchange);

  // Every process: its local Z's runs from the engine ranks' segments.
  const long lld = setup.view.lld;
  const std::vector<double> seconds =
      timed_parallel_for(static_cast<long>(pieces.size()), threads, times != nullptr, [&](long k) {
        const Piece& p = pieces[k];
        const T* rows = elements_in<T>(window.base[comm.engine_to_caller[p.engine]]);
        const long ld = ld_of(p.engine);
        for_each_segment_from_engine(layout.row_begin[p.engine], layout.row_begin[p.engine + 1],
                                     p.runs, [&](const Segment& s) {
                                       out.copy(z + s.dest_row + s.dest_col * lld,
                                                rows + s.src_row + s.src_col * ld, s.len);
                                     });
        out.fence();
      });
  for (size_t k = 0; k < pieces.size() && times; ++k)
    if (pieces[k].engine == e) times->own += seconds[k];
  MPI_Win_unlock_all(window.win);
  clock.lap(&PhaseTimes::unpack);
  return true;
}

template bool engine_to_block_cyclic_on_node(bool, long, const double*, const ExchangeSetup&,
                                             const EngineLayout&, const EngineComm&, double*, int,
                                             PhaseClock&, PhaseTimes*);
template bool engine_to_block_cyclic_on_node(bool, long, const std::complex<double>*,
                                             const ExchangeSetup&, const EngineLayout&,
                                             const EngineComm&, std::complex<double>*, int,
                                             PhaseClock&, PhaseTimes*);

}  // namespace pipevd
