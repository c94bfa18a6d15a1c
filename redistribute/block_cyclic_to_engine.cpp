#include "redistribute/block_cyclic_to_engine.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "adapters/scalapack/scalapack_api.hpp"
#include "redistribute/exchange_setup.hpp"
#include "redistribute/message_buffer.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/segment_type.hpp"
#include "redistribute/tile_transpose.hpp"

namespace pipevd {

namespace {

// Copies one segment from the local block-cyclic array to contiguous memory.
inline void read_segment(const double* a, long lld, const Segment& s, double* out) {
  const double* from = a + s.src_row + s.src_col * lld;
  if (!s.mirrored) {
    std::memcpy(out, from, sizeof(double) * static_cast<size_t>(s.len));
  } else {
    for (long t = 0; t < s.len; ++t) out[t] = from[t * lld];
  }
}

}  // namespace

// Senders pack the mirrored part (a mirrored segment is a row of their local array, no block for a
// datatype) and send the direct part of long segments in place; the engine rank receives long
// segments in place through a datatype over a_cols and unpacks only messages of short segments.
// With counts past the int limit, everything is packed and moved in rounds.
void block_cyclic_to_engine(char uplo, long n, const double* a, long ia, long ja, const int* desca,
                            const EngineLayout& layout, const EngineComm& comm, double* a_cols,
                            const ExchangeOptions& options, PhaseTimes* times) {
  PhaseClock clock(times);
  check_layout("block_cyclic_to_engine", n, layout, comm);
  if (n == 0) return;
  const ExchangeSetup setup = setup_exchange("block_cyclic_to_engine", n, desca, ia, ja, comm);
  const GridMap& grid = setup.grid;
  const BlockCyclicView& view = setup.view;
  const long lld = view.lld;
  const int me = setup.me, size = setup.size;

  const ExchangeCounts counts = counts_to_engine(uplo, view, grid, layout, comm);
  const bool rounds = largest_total_to_engine(view, layout) > options.int_limit;
  auto long_segments = [&](long elements, long segments) {
    return !rounds && elements > 0 && elements >= options.min_typed_segment * segments;
  };
  // What is packed per destination: everything, or only the mirrored part where the direct part
  // (whole columns of segments in A) goes out in place.
  std::vector<long> packed(size), soff(size + 1, 0), roff(size + 1, 0);
  for (int r = 0; r < size; ++r) {
    const bool direct_in_place =
        long_segments(counts.send_direct[r], counts.send_direct_segments[r]);
    packed[r] = counts.send[r] - (direct_in_place ? counts.send_direct[r] : 0);
    soff[r + 1] = soff[r] + packed[r];
    // Only messages of short segments need room: the others land in a_cols directly.
    const bool recv_in_place = long_segments(counts.recv[r], counts.recv_segments[r]);
    roff[r + 1] = roff[r] + (recv_in_place ? 0 : counts.recv[r]);
  }
  const int e = comm.engine_rank;
  const long c0 = e >= 0 ? layout.col_begin[e] : 0, c1 = e >= 0 ? layout.col_begin[e + 1] : 0;
  auto typed = [&](int src) { return long_segments(counts.recv[src], counts.recv_segments[src]); };
  clock.lap(&PhaseTimes::plan);

  // Pack per destination; the pieces this process keeps go straight into a_cols.
  const LocalRuns mine = local_runs(view, grid.myrow, grid.mycol);
  MessageBuffer send(static_cast<size_t>(soff[size]));
  std::vector<MPI_Datatype> stype(size, MPI_DATATYPE_NULL), rtype(size, MPI_DATATYPE_NULL);
  for (int d = 0; d < layout.engine_ranks(); ++d) {
    const int dest = comm.engine_to_caller[d];
    const long d0 = layout.col_begin[d], d1 = layout.col_begin[d + 1];
    if (dest == me) {
      auto own = [&](const Segment& s) {
        read_segment(a, lld, s, a_cols + s.dest_row + (s.dest_col - d0) * n);
      };
      for_each_direct_segment_to_engine(uplo, mine, d0, d1, own);
      for_each_mirrored_piece_to_engine(uplo, mine, d0, d1, own, [&](const Run& rr, const Run& cr) {
        transpose_tile(a + rr.local + cr.local * lld, lld, rr.len, cr.len,
                       a_cols + cr.global + (rr.global - d0) * n, n);
      });
      continue;
    }
    if (counts.send[dest] == 0) continue;
    const bool direct_in_place = packed[dest] < counts.send[dest];
    SegmentType direct;
    double* out = send.data() + soff[dest];
    auto pack = [&](const Segment& s) {
      read_segment(a, lld, s, out);
      out += s.len;
    };
    for_each_direct_segment_to_engine(uplo, mine, d0, d1, [&](const Segment& s) {
      if (direct_in_place)
        direct.add(a + s.src_row + s.src_col * lld, s.len);
      else
        pack(s);
    });
    // A mirrored tile is its rows one after the other: its transpose with leading dimension cr.len.
    for_each_mirrored_piece_to_engine(uplo, mine, d0, d1, pack, [&](const Run& rr, const Run& cr) {
      transpose_tile(a + rr.local + cr.local * lld, lld, rr.len, cr.len, out, cr.len);
      out += rr.len * cr.len;
    });
    if (rounds) continue;
    // The message: its direct part in place, then its packed slice (message order).
    MPI_Datatype parts[2] = {
        direct.commit(), packed[dest] > 0 ? contiguous_at(send.data() + soff[dest], packed[dest])
                                          : MPI_DATATYPE_NULL};
    if (parts[0] == MPI_DATATYPE_NULL || parts[1] == MPI_DATATYPE_NULL) {
      stype[dest] = parts[0] != MPI_DATATYPE_NULL ? parts[0] : parts[1];
      continue;
    }
    const int ones[2] = {1, 1};
    const MPI_Aint zeros[2] = {0, 0};
    MPI_Type_create_struct(2, ones, zeros, parts, &stype[dest]);
    MPI_Type_commit(&stype[dest]);
    MPI_Type_free(&parts[0]);
    MPI_Type_free(&parts[1]);
  }
  clock.lap(&PhaseTimes::pack);

  MessageBuffer recv(static_cast<size_t>(roff[size]));
  if (rounds) {
    exchange(send.data(), counts.send, recv.data(), counts.recv, comm.caller, options);
  } else {
    for (int r = 0; r < size; ++r) {
      if (counts.recv[r] == 0) continue;
      if (!typed(r)) {
        rtype[r] = contiguous_at(recv.data() + roff[r], counts.recv[r]);
        continue;
      }
      SegmentType in_place;
      for_each_segment_to_engine(uplo, local_runs(view, grid.prow[r], grid.pcol[r]), c0, c1,
                                 [&](const Segment& s) {
                                   in_place.add(a_cols + s.dest_row + (s.dest_col - c0) * n, s.len);
                                 });
      rtype[r] = in_place.commit();
    }
    exchange_typed(stype, rtype, comm.caller);
  }
  send.release();
  clock.lap(&PhaseTimes::exchange);

  if (e < 0) return;
  for (int src = 0; src < size; ++src) {
    if (src == me || counts.recv[src] == 0 || typed(src)) continue;
    const double* in = recv.data() + roff[src];
    for_each_segment_to_engine(uplo, local_runs(view, grid.prow[src], grid.pcol[src]), c0, c1,
                               [&](const Segment& s) {
                                 std::memcpy(a_cols + s.dest_row + (s.dest_col - c0) * n, in,
                                             sizeof(double) * static_cast<size_t>(s.len));
                                 in += s.len;
                               });
  }
  clock.lap(&PhaseTimes::unpack);
}

}  // namespace pipevd
