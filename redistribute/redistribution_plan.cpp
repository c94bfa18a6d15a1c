#include "redistribute/redistribution_plan.hpp"

#include "base/communicator.hpp"

namespace pipevd {

LocalRuns local_runs(const BlockCyclicView& v, int prow, int pcol) {
  return {owned_runs(v.ia, v.m, v.mb, v.rsrc, v.nprow, prow),
          owned_runs(v.ja, v.n, v.nb, v.csrc, v.npcol, pcol)};
}

namespace {

long largest_local_size(const BlockCyclicView& v) {
  long largest = 0;
  for (int pr = 0; pr < v.nprow; ++pr)
    for (int pc = 0; pc < v.npcol; ++pc) {
      const LocalRuns runs = local_runs(v, pr, pc);
      long rows = 0, cols = 0;
      for (const Run& r : runs.rows) rows += r.len;
      for (const Run& r : runs.cols) cols += r.len;
      largest = std::max(largest, rows * cols);
    }
  return largest;
}

long largest_engine_block(const std::vector<long>& begin, long n) {
  long largest = 0;
  for (size_t e = 0; e + 1 < begin.size(); ++e)
    largest = std::max(largest, (begin[e + 1] - begin[e]) * n);
  return largest;
}

}  // namespace

// A process sends each stored element at most twice (direct and mirrored).
long largest_total_to_engine(const BlockCyclicView& a, const EngineLayout& layout) {
  return std::max(2 * largest_local_size(a), largest_engine_block(layout.col_begin, layout.n));
}

long largest_total_from_engine(const BlockCyclicView& z, const EngineLayout& layout) {
  return std::max(largest_local_size(z), largest_engine_block(layout.row_begin, layout.n));
}

// Pieces a process keeps for itself are copied in place, not sent: their counts stay 0.
ExchangeCounts counts_to_engine(char uplo, const BlockCyclicView& a, const GridMap& grid,
                                const EngineLayout& layout, const EngineComm& comm) {
  const int me = rank_in(comm.caller), size = size_of(comm.caller);
  ExchangeCounts c{std::vector<long>(size, 0), std::vector<long>(size, 0),
                   std::vector<long>(size, 0), std::vector<long>(size, 0)};
  c.send_direct.assign(size, 0);
  c.send_direct_segments.assign(size, 0);
  const LocalRuns mine = local_runs(a, grid.myrow, grid.mycol);
  for (int e = 0; e < layout.engine_ranks(); ++e) {
    const int dest = comm.engine_to_caller[e];
    if (dest == me) continue;
    long total = 0, segments = 0, direct = 0, direct_segments = 0;
    for_each_segment_to_engine(uplo, mine, layout.col_begin[e], layout.col_begin[e + 1],
                               [&](const Segment& s) {
                                 total += s.len;
                                 ++segments;
                                 if (!s.mirrored) {
                                   direct += s.len;
                                   ++direct_segments;
                                 }
                               });
    c.send[dest] = total;
    c.send_segments[dest] = segments;
    c.send_direct[dest] = direct;
    c.send_direct_segments[dest] = direct_segments;
  }
  if (comm.engine_rank >= 0) {
    const int e = comm.engine_rank;
    for (int src = 0; src < size; ++src) {
      if (src == me) continue;
      long total = 0, segments = 0;
      for_each_segment_to_engine(uplo, local_runs(a, grid.prow[src], grid.pcol[src]),
                                 layout.col_begin[e], layout.col_begin[e + 1],
                                 [&](const Segment& s) {
                                   total += s.len;
                                   ++segments;
                                 });
      c.recv[src] = total;
      c.recv_segments[src] = segments;
    }
  }
  return c;
}

ExchangeCounts counts_from_engine(const BlockCyclicView& z, const GridMap& grid,
                                  const EngineLayout& layout, const EngineComm& comm) {
  const int me = rank_in(comm.caller), size = size_of(comm.caller);
  ExchangeCounts c{std::vector<long>(size, 0), std::vector<long>(size, 0),
                   std::vector<long>(size, 0), std::vector<long>(size, 0)};
  if (comm.engine_rank >= 0) {
    const int e = comm.engine_rank;
    for (int dest = 0; dest < size; ++dest) {
      if (dest == me) continue;
      long total = 0, segments = 0;
      for_each_segment_from_engine(layout.row_begin[e], layout.row_begin[e + 1],
                                   local_runs(z, grid.prow[dest], grid.pcol[dest]),
                                   [&](const Segment& s) {
                                     total += s.len;
                                     ++segments;
                                   });
      c.send[dest] = total;
      c.send_segments[dest] = segments;
    }
  }
  const LocalRuns mine = local_runs(z, grid.myrow, grid.mycol);
  for (int e = 0; e < layout.engine_ranks(); ++e) {
    const int src = comm.engine_to_caller[e];
    if (src == me) continue;
    long total = 0, segments = 0;
    for_each_segment_from_engine(layout.row_begin[e], layout.row_begin[e + 1], mine,
                                 [&](const Segment& s) {
                                   total += s.len;
                                   ++segments;
                                 });
    c.recv[src] = total;
    c.recv_segments[src] = segments;
  }
  return c;
}

}  // namespace pipevd
