// Who sends which pieces to whom, in which order. A piece is a segment of one column of the
// destination; sender and receiver walk the same segments in the same order, so a message is the
// concatenation of its segments and needs no index data.
//
// Block-cyclic -> engine columns (symmetrising): the stored element (i, j) of the triangle UPLO
// names (i >= j for 'L', i <= j for 'U') goes to the engine rank owning column j as (i, j)
// ("direct") and, off the diagonal, to the rank owning column i as (j, i) ("mirrored"). The other
// triangle is never read. Message from a grid process to engine rank e: the direct segments
// (tile by tile: its column runs inside e's columns x its row runs), then the mirrored ones (its
// row runs inside e's columns x its column runs).
//
// Engine rows -> block-cyclic: engine rank e sends to each grid process the part of its rows
// that process owns, tile by tile (the process's column runs x its row runs inside e's rows).
#pragma once
#include <algorithm>
#include <vector>

#include "base/engine_layout.hpp"
#include "redistribute/block_cyclic.hpp"
#include "redistribute/engine_comm.hpp"

namespace pipevd {

// The runs one grid process owns of a submatrix.
struct LocalRuns {
  std::vector<Run> rows, cols;
};
LocalRuns local_runs(const BlockCyclicView& v, int prow, int pcol);

// One segment: `len` consecutive rows [dest_row, dest_row+len) of destination column dest_col
// (submatrix-relative), read on the source at local (src_row, src_col) moving down its local
// column (mirrored == false) or along its local row (mirrored == true).
struct Segment {
  long dest_col, dest_row, len;
  long src_row, src_col;
  bool mirrored;
};

// The direct segments that a grid process with runs `src` sends to the engine rank owning
// columns [c0, c1), in message order: stored (i, j) with j in [c0, c1) and (i, j) in the named
// triangle; f(const Segment&).
template <class F>
void for_each_direct_segment_to_engine(char uplo, const LocalRuns& src, long c0, long c1, F&& f) {
  const bool lower = uplo == 'L' || uplo == 'l';
  for (const Run& cr0 : src.cols) {
    const Run cr = clip(cr0, c0, c1);
    if (cr.len == 0) continue;
    for (const Run& rr : src.rows) {
      const long r_end = rr.global + rr.len, c_end = cr.global + cr.len;
      if (lower ? r_end <= cr.global : rr.global >= c_end) continue;  // tile outside the triangle
      for (long j = cr.global; j < c_end; ++j) {
        const long lo = lower ? std::max(rr.global, j) : rr.global;
        const long hi = lower ? r_end : std::min(r_end, j + 1);
        if (lo < hi)
          f(Segment{j, lo, hi - lo, rr.local + (lo - rr.global), cr.local + (j - cr.global),
                    false});
      }
    }
  }
}

// The mirrored part of the same message, in message order: stored (i, j) strictly inside the
// named triangle with i in [c0, c1) lands at (j, i). A source tile (row run rr x column run cr)
// whose rows are all whole segments (off the diagonal) comes as tile(rr, cr), standing for the
// segments of its rows in order (row i: columns cr.global.. , cr.len long); every other piece as
// seg(const Segment&). Tiles can so be transposed in cache-sized blocks.
template <class S, class T>
void for_each_mirrored_piece_to_engine(char uplo, const LocalRuns& src, long c0, long c1, S&& seg,
                                       T&& tile) {
  const bool lower = uplo == 'L' || uplo == 'l';
  for (const Run& rr0 : src.rows) {
    const Run rr = clip(rr0, c0, c1);
    if (rr.len == 0) continue;
    for (const Run& cr : src.cols) {
      const long r_end = rr.global + rr.len, c_end = cr.global + cr.len;
      if (lower ? cr.global >= r_end : c_end <= rr.global) continue;
      if (lower ? c_end <= rr.global : cr.global >= r_end) {
        tile(rr, cr);
        continue;
      }
      for (long i = rr.global; i < r_end; ++i) {
        const long lo = lower ? cr.global : std::max(cr.global, i + 1);
        const long hi = lower ? std::min(c_end, i) : c_end;
        if (lo < hi)
          seg(Segment{i, lo, hi - lo, rr.local + (i - rr.global), cr.local + (lo - cr.global),
                      true});
      }
    }
  }
}

// Segments that a grid process with runs `src` sends to the engine rank owning columns
// [c0, c1), in message order: the direct segments (tile by tile: its column runs inside e's
// columns x its row runs), then the mirrored ones (its row runs inside e's columns x its column
// runs); f(const Segment&).
template <class F>
void for_each_segment_to_engine(char uplo, const LocalRuns& src, long c0, long c1, F&& f) {
  for_each_direct_segment_to_engine(uplo, src, c0, c1, f);
  for_each_mirrored_piece_to_engine(uplo, src, c0, c1, f, [&](const Run& rr, const Run& cr) {
    for (long t = 0; t < rr.len; ++t)
      f(Segment{rr.global + t, cr.global, cr.len, rr.local + t, cr.local, true});
  });
}

// Segments that the engine rank owning rows [r0, r1) sends to the grid process with runs `dest`,
// in message order. Here the source is the engine's row block (src_row relative to r0, src_col =
// global column) and the destination position is the grid process's local (dest_row, dest_col).
template <class F>
void for_each_segment_from_engine(long r0, long r1, const LocalRuns& dest, F&& f) {
  for (const Run& cr : dest.cols) {
    for (const Run& rr0 : dest.rows) {
      const Run rr = clip(rr0, r0, r1);
      if (rr.len == 0) continue;
      for (long t = 0; t < cr.len; ++t)
        f(Segment{cr.local + t, rr.local, rr.len, rr.global - r0, cr.global + t, false});
    }
  }
}

// Element counts per caller rank of one exchange, from this process's point of view.
struct ExchangeCounts {
  std::vector<long> send, recv;                    // elements
  std::vector<long> send_segments, recv_segments;  // segments they come in
  // To the engine only: the direct part of each message (it comes first, then the mirrored one).
  std::vector<long> send_direct, send_direct_segments;
};

// Upper bounds of any rank's total (send or receive, elements) in each direction, the same on
// every rank without communication, so all ranks agree on the way to exchange (exchange.hpp).
long largest_total_to_engine(const BlockCyclicView& a, const EngineLayout& layout);
long largest_total_from_engine(const BlockCyclicView& z, const EngineLayout& layout);

// Counts for block-cyclic -> engine columns. `a` is the n x n submatrix view.
ExchangeCounts counts_to_engine(char uplo, const BlockCyclicView& a, const GridMap& grid,
                                const EngineLayout& layout, const EngineComm& comm);

// Counts for engine rows -> block-cyclic `z`.
ExchangeCounts counts_from_engine(const BlockCyclicView& z, const GridMap& grid,
                                  const EngineLayout& layout, const EngineComm& comm);

}  // namespace pipevd
