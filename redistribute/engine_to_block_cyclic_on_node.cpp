#include "redistribute/engine_to_block_cyclic_on_node.hpp"

#include <algorithm>
#include <complex>
#include <memory>
#include <utility>
#include <vector>

#include "redistribute/element.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/stream_copy.hpp"
#include "redistribute/window_rounds.hpp"

namespace pipevd {

namespace {

// What one thread copies at a time: the elements of some of this process's column runs (Z's
// columns [first, ...) of a round) that engine rank `engine` holds, from its segment's column
// `at` on.
struct Piece {
  int engine;
  LocalRuns runs;
  long first, at;
};

}  // namespace

template <class T>
bool engine_to_block_cyclic_on_node(const ExchangeOptions& options, long n, const T* z_rows,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* z, int threads, PhaseClock& clock,
                                    PhaseTimes* times) {
  const Copier out{options.streaming_stores};
  const long segment = segment_doubles(options), d = Element<T>::doubles;
  const int e = comm.engine_rank, engines = layout.engine_ranks();
  // Engine rank k's segment: a round's columns of its rows, leading dimension max(1, height(k));
  // round r takes Z's columns [r c, (r + 1) c) of every engine rank.
  auto ld_of = [&](int k) { return std::max(1L, layout.height(k)); };
  long most_ld = 1;
  for (int k = 0; k < engines; ++k) most_ld = std::max(most_ld, ld_of(k));
  const WindowRounds rounds = plan_window_rounds(n, most_ld * d, segment, 1);
  const long own = e >= 0 && layout.height(e) > 0 ? n : 0;
  const NodeWindow* shared = node_window(
      comm.caller, window_request(rounds, own, (e >= 0 ? ld_of(e) : 1) * d, layout, e, d, segment),
      threads, segment);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  const LocalRuns mine = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  const long parts = threads > 1 ? std::max(1L, (4L * threads + engines - 1) / engines) : 1;
  clock.lap(&PhaseTimes::plan);

  // Engine ranks: the round's columns of their rows into their segment, contiguous.
  auto write = [&](long r) {
    std::vector<Span> spans;
    rounds.for_each_group(r, own, [&](long first, long len, long at) {
      spans.push_back(Span{window.base[setup.me] + at * ld_of(e) * d,
                           doubles_of(z_rows + first * ld_of(e)), len * ld_of(e) * d});
    });
    return span_copies(out, spans);
  };
  // Every process: its local Z's runs in the round's columns from the engine ranks' segments.
  const long lld = setup.view.lld;
  auto read = [&](long r) {
    std::vector<Piece> pieces;
    for (int k = 0; k < engines; ++k)
      if (layout.height(k) > 0)
        rounds.for_each_group(r, n, [&](long first, long len, long at) {
          for (std::vector<Run>& cols : cut_runs(clip_runs(mine.cols, first, first + len), parts))
            pieces.push_back(Piece{k, LocalRuns{mine.rows, std::move(cols)}, first, at});
        });
    RoundCopies c;
    c.count = static_cast<long>(pieces.size());
    auto shared_pieces = std::make_shared<std::vector<Piece>>(std::move(pieces));
    c.copy = [&, shared_pieces](long k) {
      const Piece& p = (*shared_pieces)[k];
      const long ld = ld_of(p.engine);
      const T* rows = elements_in<T>(window.base[comm.engine_to_caller[p.engine]]);
      for_each_segment_from_engine(layout.row_begin[p.engine], layout.row_begin[p.engine + 1],
                                   p.runs, [&](const Segment& s) {
                                     out.copy(z + s.dest_row + s.dest_col * lld,
                                              rows + s.src_row + (s.src_col - p.first + p.at) * ld,
                                              s.len);
                                   });
      out.fence();
    };
    if (times)
      c.charge = [shared_pieces, e, times](long k, double seconds) {
        if ((*shared_pieces)[k].engine == e) times->own += seconds;
      };
    return c;
  };
  copy_in_rounds(rounds, threads, window, comm.caller, write, read, clock, times);
  return true;
}

template bool engine_to_block_cyclic_on_node(const ExchangeOptions&, long, const double*,
                                             const ExchangeSetup&, const EngineLayout&,
                                             const EngineComm&, double*, int, PhaseClock&,
                                             PhaseTimes*);
template bool engine_to_block_cyclic_on_node(const ExchangeOptions&, long,
                                             const std::complex<double>*, const ExchangeSetup&,
                                             const EngineLayout&, const EngineComm&,
                                             std::complex<double>*, int, PhaseClock&, PhaseTimes*);

}  // namespace pipevd
