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

// Engine rank k's segment: a round's columns of its rows, leading dimension max(1, height(k)).
long ld_of(const EngineLayout& layout, int k) { return std::max(1L, layout.height(k)); }

// Every process's reads of round r: its local Z's runs in the round's columns from the engine
// ranks' segments, each group cut into at most `parts` pieces.
template <class T>
RoundCopies local_reads(const Copier& out, const WindowRounds& rounds, long r, long n,
                        const LocalRuns& mine, const NodeWindow& window, const EngineLayout& layout,
                        const EngineComm& comm, T* z, long lld, long parts, PhaseTimes* times) {
  std::vector<Piece> pieces;
  for (int k = 0; k < layout.engine_ranks(); ++k)
    if (layout.height(k) > 0)
      rounds.for_each_group(r, n, [&](long first, long len, long at) {
        for (std::vector<Run>& cols : cut_runs(clip_runs(mine.cols, first, first + len), parts))
          pieces.push_back(Piece{k, LocalRuns{mine.rows, std::move(cols)}, first, at});
      });
  RoundCopies c;
  c.count = static_cast<long>(pieces.size());
  auto shared = std::make_shared<std::vector<Piece>>(std::move(pieces));
  c.copy = [&out, &window, &layout, &comm, z, lld, shared](long k) {
    const Piece& p = (*shared)[k];
    const long ld = ld_of(layout, p.engine);
    const T* rows = elements_in<T>(window.base[comm.engine_to_caller[p.engine]]);
    for_each_segment_from_engine(
        layout.row_begin[p.engine], layout.row_begin[p.engine + 1], p.runs, [&](const Segment& s) {
          out.copy(z + s.dest_row + s.dest_col * lld,
                   rows + s.src_row + (s.src_col - p.first + p.at) * ld, s.len);
        });
    out.fence();
  };
  if (times)
    c.charge = [shared, e = comm.engine_rank, times](long k, double seconds) {
      if ((*shared)[k].engine == e) times->own += seconds;
    };
  return c;
}

}  // namespace

// Round r takes Z's columns [r c, (r + 1) c) of every engine rank's rows.
template <class T>
bool engine_to_block_cyclic_on_node(const ExchangeOptions& options, long n, const T* z_rows,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* z, int threads, PhaseClock& clock,
                                    PhaseTimes* times) {
  const Copier out{options.streaming_stores};
  const long segment = segment_doubles(options), d = Element<T>::doubles;
  const int e = comm.engine_rank, engines = layout.engine_ranks();
  long most_ld = 1;
  for (int k = 0; k < engines; ++k) most_ld = std::max(most_ld, ld_of(layout, k));
  const WindowRounds rounds = plan_window_rounds(n, most_ld * d, segment, 1);
  const long own = e >= 0 && layout.height(e) > 0 ? n : 0, ld = e >= 0 ? ld_of(layout, e) : 1;
  const NodeWindow* shared =
      node_window(comm.caller, window_request(rounds, own, ld * d, layout, e, d, segment),
                  options.window_threads(threads), segment);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  const LocalRuns mine = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  const long parts = parts_for(threads, engines);
  clock.lap(&PhaseTimes::plan);

  // Engine ranks: the round's columns of their rows into their segment, contiguous.
  auto write = [&](long r) {
    std::vector<Span> spans;
    rounds.for_each_group(r, own, [&](long first, long len, long at) {
      spans.push_back(
          Span{window.base[setup.me] + at * ld * d, as_words(z_rows + first * ld), len * ld * d});
    });
    return span_copies(out, spans);
  };
  auto read = [&](long r) {
    return local_reads(out, rounds, r, n, mine, window, layout, comm, z, setup.view.lld, parts,
                       times);
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
