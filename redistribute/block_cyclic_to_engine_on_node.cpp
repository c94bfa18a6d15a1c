#include "redistribute/block_cyclic_to_engine_on_node.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/tile_transpose.hpp"

namespace pipevd {

namespace {

// What one thread writes at a time: the direct (a slice of this process's column runs) or the
// mirrored (a slice of its row runs) elements bound for engine rank `engine`.
struct Piece {
  int engine;
  bool mirrored;
  LocalRuns runs;
};

}  // namespace

void block_cyclic_to_engine_on_node(char uplo, long n, const double* a, const ExchangeSetup& setup,
                                    const EngineLayout& layout, const EngineComm& comm,
                                    double* a_cols, int threads, PhaseClock& clock,
                                    PhaseTimes* times) {
  const long lld = setup.view.lld;
  const int e = comm.engine_rank;
  const long mine_elements = e >= 0 ? n * layout.width(e) : 0;
  const NodeWindow& window = node_window(comm.caller, mine_elements);

  // Pieces per engine rank, several slices each so the threads share them out evenly (the
  // triangle makes slices unequal; dynamic scheduling evens it).
  const LocalRuns mine = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  const int slices = threads > 1 ? 4 * threads : 1;
  std::vector<Piece> pieces;
  for (int d = 0; d < layout.engine_ranks(); ++d) {
    if (layout.width(d) == 0) continue;
    for (const auto& [k0, k1] : split_runs(mine.cols.size(), slices))
      pieces.push_back(Piece{d, false, with_cols(mine, k0, k1)});
    for (const auto& [k0, k1] : split_runs(mine.rows.size(), slices))
      pieces.push_back(Piece{d, true, with_rows(mine, k0, k1)});
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window.win);
  clock.lap(&PhaseTimes::plan);

  // Each element at its place in engine rank d's columns [d0, d1): (row, column - d0) with
  // leading dimension n, as the engine's own a_cols.
  auto write_piece = [&](const Piece& p) {
    const long d0 = layout.col_begin[p.engine], d1 = layout.col_begin[p.engine + 1];
    double* cols = window.base[comm.engine_to_caller[p.engine]];
    auto segment = [&](const Segment& s) {
      const double* from = a + s.src_row + s.src_col * lld;
      double* to = cols + s.dest_row + (s.dest_col - d0) * n;
      if (!s.mirrored) {
        std::memcpy(to, from, sizeof(double) * static_cast<size_t>(s.len));
      } else {
        for (long t = 0; t < s.len; ++t) to[t] = from[t * lld];
      }
    };
    if (!p.mirrored) {
      for_each_direct_segment_to_engine(uplo, p.runs, d0, d1, segment);
      return;
    }
    for_each_mirrored_piece_to_engine(
        uplo, p.runs, d0, d1, segment, [&](const Run& rr, const Run& cr) {
          transpose_tile(a + rr.local + cr.local * lld, lld, rr.len, cr.len,
                         cols + cr.global + (rr.global - d0) * n, n);
        });
  };
  const std::vector<double> piece_seconds =
      timed_parallel_for(static_cast<long>(pieces.size()), threads, times != nullptr,
                         [&](long k) { write_piece(pieces[k]); });
  for (size_t k = 0; k < pieces.size() && times; ++k) {
    if (comm.engine_to_caller[pieces[k].engine] == setup.me) times->own += piece_seconds[k];
    if (pieces[k].mirrored) times->mirror += piece_seconds[k];
  }
  clock.lap(&PhaseTimes::pack);

  // Every process's writes done and visible before an engine rank reads its segment.
  MPI_Win_sync(window.win);
  MPI_Barrier(comm.caller);
  MPI_Win_sync(window.win);
  clock.lap(&PhaseTimes::exchange);

  // The segment is a_cols already, in the same order: one contiguous copy in 2 MiB pieces.
  if (e >= 0 && mine_elements > 0) {
    const double* from = window.base[setup.me];
    const long step = 1L << 18;
    parallel_for((mine_elements + step - 1) / step, threads, [&](long k) {
      const long begin = k * step, len = std::min(step, mine_elements - begin);
      std::memcpy(a_cols + begin, from + begin, sizeof(double) * static_cast<size_t>(len));
    });
  }
  MPI_Win_unlock_all(window.win);
  clock.lap(&PhaseTimes::unpack);
}

}  // namespace pipevd
