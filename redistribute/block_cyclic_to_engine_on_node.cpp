#include "redistribute/block_cyclic_to_engine_on_node.hpp"

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

// What one thread copies at a time: the direct (a slice of the column runs) or the mirrored (a
// slice of the row runs) elements of one process's local array bound for engine rank `engine`.
struct Piece {
  int engine;
  int source;  // caller rank whose local array it reads
  bool mirrored;
  LocalRuns runs;
};

// Pieces of the elements with local runs `src` bound for engine rank d, a few slices each so the
// threads share them out evenly (the triangle makes slices unequal; dynamic scheduling evens it).
void add_pieces(std::vector<Piece>& pieces, int d, int source, const LocalRuns& src, int slices) {
  for (const auto& [k0, k1] : split_runs(src.cols.size(), slices))
    pieces.push_back(Piece{d, source, false, with_cols(src, k0, k1)});
  for (const auto& [k0, k1] : split_runs(src.rows.size(), slices))
    pieces.push_back(Piece{d, source, true, with_rows(src, k0, k1)});
}

// Copies a piece from a local array `from` (leading dimension ldf, the piece's local indices) into
// columns [c0, c1) of the full matrix at `cols` (all n rows, leading dimension n); the mirrored
// elements of a Hermitian matrix conjugated.
template <class T>
void copy_piece(const Copier& out, char uplo, const Piece& p, long c0, long c1, const T* from,
                long ldf, T* cols, long n) {
  auto segment = [&](const Segment& s) {
    const T* f = from + s.src_row + s.src_col * ldf;
    T* to = cols + s.dest_row + (s.dest_col - c0) * n;
    if (!s.mirrored) {
      out.copy(to, f, s.len);
    } else {
      for (long t = 0; t < s.len; ++t) to[t] = Element<T>::mirrored(f[t * ldf]);
    }
  };
  if (!p.mirrored) {
    for_each_direct_segment_to_engine(uplo, p.runs, c0, c1, segment);
  } else {
    for_each_mirrored_piece_to_engine(
        uplo, p.runs, c0, c1, segment, [&](const Run& rr, const Run& cr) {
          out.transpose(from + rr.local + cr.local * ldf, ldf, rr.len, cr.len,
                        cols + cr.global + (rr.global - c0) * n, n);
        });
  }
  out.fence();
}

long total(const std::vector<Run>& runs) {
  long t = 0;
  for (const Run& r : runs) t += r.len;
  return t;
}

// The runs with local indices counted from the first run's (0 there).
LocalRuns rebased(LocalRuns r) {
  for (std::vector<Run>* v : {&r.rows, &r.cols}) {
    const long base = v->empty() ? 0 : v->front().local;
    for (Run& run : *v) run.local -= base;
  }
  return r;
}

// Seconds of each piece into times->own (pieces this process both reads and keeps) and ->mirror.
void charge(const std::vector<Piece>& pieces, const std::vector<double>& seconds, int me,
            const EngineComm& comm, PhaseTimes* times) {
  for (size_t k = 0; k < pieces.size() && times; ++k) {
    if (pieces[k].source == me && comm.engine_to_caller[pieces[k].engine] == me)
      times->own += seconds[k];
    if (pieces[k].mirrored) times->mirror += seconds[k];
  }
}

// The window holds doubles: T's elements take Element<T>::doubles each.
template <class T>
T* segment_of(const NodeWindow& window, int rank) {
  return elements_in<T>(window.base[rank]);
}

template <class T>
bool push(const Copier& out, char uplo, long n, const T* a, const ExchangeSetup& setup,
          const EngineLayout& layout, const EngineComm& comm, T* a_cols, int threads,
          PhaseClock& clock, PhaseTimes* times) {
  const int e = comm.engine_rank;
  const long mine_elements = e >= 0 ? n * layout.width(e) : 0;
  const NodeWindow* shared = node_window(
      comm.caller,
      std::max(mine_elements, engine_segment_elements(layout, e)) * Element<T>::doubles, threads);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  const LocalRuns mine = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  std::vector<Piece> pieces;
  for (int d = 0; d < layout.engine_ranks(); ++d)
    if (layout.width(d) > 0) add_pieces(pieces, d, setup.me, mine, threads > 1 ? 4 * threads : 1);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window.win);
  clock.lap(&PhaseTimes::plan);

  // Each element at its place in engine rank d's columns, laid out as d's a_cols.
  const std::vector<double> seconds =
      timed_parallel_for(static_cast<long>(pieces.size()), threads, times != nullptr, [&](long k) {
        const Piece& p = pieces[k];
        copy_piece(out, uplo, p, layout.col_begin[p.engine], layout.col_begin[p.engine + 1], a,
                   setup.view.lld, segment_of<T>(window, comm.engine_to_caller[p.engine]), n);
      });
  charge(pieces, seconds, setup.me, comm, times);
  clock.lap(&PhaseTimes::pack);
  node_window_barrier(window, comm.caller);
  clock.lap(&PhaseTimes::exchange);

  // The segment is a_cols already, in the same order: one contiguous copy in 2 MiB pieces.
  copy_on_threads(out, doubles_of(a_cols), window.base[setup.me],
                  mine_elements * Element<T>::doubles, threads);
  MPI_Win_unlock_all(window.win);
  clock.lap(&PhaseTimes::unpack);
  return true;
}

template <class T>
bool pull(const Copier& out, char uplo, long n, const T* a, const ExchangeSetup& setup,
          const EngineLayout& layout, const EngineComm& comm, T* a_cols, int threads,
          PhaseClock& clock, PhaseTimes* times) {
  // Every process's part of the submatrix in its segment: its local rows and columns of the
  // submatrix (contiguous in its local array, from the first run's local index) with leading
  // dimension max(1, their row count), so that readers need nobody's LLD (which may differ per
  // process). runs[r]: rank r's runs with local indices into that image.
  std::vector<LocalRuns> runs(setup.size);
  for (int r = 0; r < setup.size; ++r)
    runs[r] = rebased(local_runs(setup.view, setup.grid.prow[r], setup.grid.pcol[r]));
  std::vector<long> ld_of(setup.size);
  for (int r = 0; r < setup.size; ++r) ld_of[r] = std::max(1L, total(runs[r].rows));
  const LocalRuns& mine = runs[setup.me];
  const LocalRuns original = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  const long row_base = original.rows.empty() ? 0 : original.rows.front().local;
  const long col_base = original.cols.empty() ? 0 : original.cols.front().local;
  const long ld = ld_of[setup.me], local_cols = total(mine.cols);
  const NodeWindow* shared =
      node_window(comm.caller,
                  std::max(ld * local_cols, engine_segment_elements(layout, comm.engine_rank)) *
                      Element<T>::doubles,
                  threads);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window.win);
  clock.lap(&PhaseTimes::plan);

  // Local columns' stored rows: local rows ascend with global rows, so the triangle's part of a
  // local column is a suffix ('L': rows i >= j) or a prefix ('U': i <= j) of it.
  const bool lower = uplo == 'L' || uplo == 'l';
  const long lld = setup.view.lld, rows = total(mine.rows);
  std::vector<long> row_global(static_cast<size_t>(rows));
  for (const Run& r : mine.rows)
    for (long t = 0; t < r.len; ++t) row_global[r.local + t] = r.global + t;
  T* seg = segment_of<T>(window, setup.me);
  const int slices = threads > 1 ? 4 * threads : 1;
  const auto col_slices = split_runs(mine.cols.size(), slices);
  parallel_for(static_cast<long>(col_slices.size()), threads, [&](long k) {
    for (size_t c = col_slices[k].first; c < col_slices[k].second; ++c) {
      const Run& cr = mine.cols[c];
      for (long t = 0; t < cr.len; ++t) {
        const long j = cr.global + t, lc = cr.local + t;
        const long split =
            std::lower_bound(row_global.begin(), row_global.end(), lower ? j : j + 1) -
            row_global.begin();
        const long r0 = lower ? split : 0, r1 = lower ? rows : split;
        if (r1 > r0)
          out.copy(seg + r0 + lc * ld, a + (row_base + r0) + (col_base + lc) * lld, r1 - r0);
      }
    }
    out.fence();
  });
  clock.lap(&PhaseTimes::pack);
  node_window_barrier(window, comm.caller);
  clock.lap(&PhaseTimes::exchange);

  // Engine ranks: their columns' elements from every process's segment.
  const int e = comm.engine_rank;
  if (e >= 0 && layout.width(e) > 0) {
    std::vector<Piece> pieces;
    for (int s = 0; s < setup.size; ++s) add_pieces(pieces, e, s, runs[s], slices);
    const long c0 = layout.col_begin[e], c1 = layout.col_begin[e + 1];
    const std::vector<double> seconds = timed_parallel_for(
        static_cast<long>(pieces.size()), threads, times != nullptr, [&](long k) {
          const Piece& p = pieces[k];
          copy_piece(out, uplo, p, c0, c1, segment_of<T>(window, p.source), ld_of[p.source], a_cols,
                     n);
        });
    charge(pieces, seconds, setup.me, comm, times);
  }
  MPI_Win_unlock_all(window.win);
  clock.lap(&PhaseTimes::unpack);
  return true;
}

}  // namespace

template <class T>
bool block_cyclic_to_engine_on_node(NodeMemory way, bool streaming, char uplo, long n, const T* a,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* a_cols, int threads,
                                    PhaseClock& clock, PhaseTimes* times) {
  const Copier out{streaming};
  return way == NodeMemory::push
             ? push(out, uplo, n, a, setup, layout, comm, a_cols, threads, clock, times)
             : pull(out, uplo, n, a, setup, layout, comm, a_cols, threads, clock, times);
}

template bool block_cyclic_to_engine_on_node(NodeMemory, bool, char, long, const double*,
                                             const ExchangeSetup&, const EngineLayout&,
                                             const EngineComm&, double*, int, PhaseClock&,
                                             PhaseTimes*);
template bool block_cyclic_to_engine_on_node(NodeMemory, bool, char, long,
                                             const std::complex<double>*, const ExchangeSetup&,
                                             const EngineLayout&, const EngineComm&,
                                             std::complex<double>*, int, PhaseClock&, PhaseTimes*);

}  // namespace pipevd
