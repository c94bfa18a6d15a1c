#include "redistribute/block_cyclic_to_engine.hpp"

#include <complex>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/scalapack_api.hpp"
#include "redistribute/before_writes.hpp"
#include "redistribute/block_cyclic_to_engine_on_node.hpp"
#include "redistribute/element.hpp"
#include "redistribute/exchange_setup.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/segment_type.hpp"
#include "redistribute/tile_transpose.hpp"

namespace pipevd {

namespace {

// Copies one segment from the local block-cyclic array to contiguous memory (a mirrored one
// conjugated where A is Hermitian).
template <class T>
inline void read_segment(const T* a, long lld, const Segment& s, T* out) {
  const T* from = a + s.src_row + s.src_col * lld;
  if (!s.mirrored) {
    std::memcpy(out, from, sizeof(T) * static_cast<size_t>(s.len));
  } else {
    for (long t = 0; t < s.len; ++t) out[t] = conjugate(from[t * lld]);
  }
}

// A slice of one message to the engine columns [c0, c1): the direct or the mirrored segments of
// `runs` (the sender's runs, some of them), `count` elements at `offset` of the message buffer,
// or (own) written straight into the engine's columns.
struct Piece {
  int peer;
  long c0, c1;
  bool mirrored;
  LocalRuns runs;
  bool own;
  int chunk;
  long count = 0, offset = 0;
};

// Pieces of the message from runs `src` to columns [c0, c1), chunk by chunk: the direct part
// (when `direct`) in slices of column runs, then the mirrored part in slices of row runs. One
// chunk: message order; more: chunk c of the message is the direct then the mirrored segments of
// the c-th share of the runs.
void add_pieces(std::vector<Piece>& pieces, int peer, long c0, long c1, bool direct, bool own,
                const LocalRuns& src, int chunks, int slices) {
  for (int c = 0; c < chunks; ++c) {
    if (direct)
      for (const auto& [k0, k1] : chunk_slices(src.cols.size(), chunks, c, slices))
        pieces.push_back(Piece{peer, c0, c1, false, with_cols(src, k0, k1), own, c});
    for (const auto& [k0, k1] : chunk_slices(src.rows.size(), chunks, c, slices))
      pieces.push_back(Piece{peer, c0, c1, true, with_rows(src, k0, k1), own, c});
  }
}

long elements_of(char uplo, const Piece& p) {
  long c = 0;
  auto seg = [&](const Segment& s) { c += s.len; };
  if (!p.mirrored)
    for_each_direct_segment_to_engine(uplo, p.runs, p.c0, p.c1, seg);
  else
    for_each_mirrored_piece_to_engine(uplo, p.runs, p.c0, p.c1, seg,
                                      [&](const Run& rr, const Run& cr) { c += rr.len * cr.len; });
  return c;
}

// Senders pack the mirrored part (a mirrored segment is a row of their local array, no block for a
// datatype) and send the direct part of long segments in place; the engine rank receives long
// segments in place through a datatype over a_cols and unpacks only messages of short segments.
// With counts past the int limit, everything is packed and moved in rounds.
template <class T>
void to_engine(char uplo, long n, const T* a, long ia, long ja, const int* desca,
               const EngineLayout& layout, const EngineComm& comm, T* a_cols,
               const ExchangeOptions& options, PhaseTimes* times) {
  BeforeWrites before_writes(options.before_writes);
  PhaseClock clock(times);
  check_layout("block_cyclic_to_engine", n, layout, comm);
  if (n == 0) return;
  const ExchangeSetup setup =
      setup_exchange("block_cyclic_to_engine", n, desca, ia, ja, comm, options);
  const GridMap& grid = setup.grid;
  const BlockCyclicView& view = setup.view;
  const long lld = view.lld;
  const int me = setup.me, size = setup.size, threads = setup.threads;
  if (setup.node_window &&
      block_cyclic_to_engine_on_node(options, uplo, n, a, setup, layout, comm, a_cols, threads,
                                     before_writes, clock, times))
    return;

  const ExchangeCounts counts = counts_to_engine(uplo, view, grid, layout, comm);
  const bool rounds =
      largest_total_to_engine(view, layout) * Element<T>::doubles > options.int_limit;
  const int chunks = rounds ? 1 : std::max(1, options.chunks);
  auto long_segments = [&](long elements, long segments) {
    return !rounds && chunks == 1 && elements > 0 &&
           elements >= options.min_typed_segment * segments;
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

  // Pack per destination, in slices of runs on threads; the pieces this process keeps go
  // straight into a_cols.
  const LocalRuns mine = local_runs(view, grid.myrow, grid.mycol);
  const int slices = threads > 1 ? 2 * threads : 1;
  std::vector<Piece> pieces;
  for (int d = 0; d < layout.engine_ranks(); ++d) {
    const int dest = comm.engine_to_caller[d];
    const long d0 = layout.col_begin[d], d1 = layout.col_begin[d + 1];
    const bool own = dest == me;
    if (!own && counts.send[dest] == 0) continue;
    const bool direct_packed = own || packed[dest] == counts.send[dest];
    add_pieces(pieces, dest, d0, d1, direct_packed, own, mine, chunks, slices);
  }
  // What the engine rank unpacks: messages of short segments (all of them in chunks or rounds).
  std::vector<Piece> in;
  for (int src = 0; src < size && e >= 0; ++src) {
    if (src == me || counts.recv[src] == 0 || typed(src)) continue;
    add_pieces(in, src, c0, c1, true, false, local_runs(view, grid.prow[src], grid.pcol[src]),
               chunks, slices);
  }
  place_pieces(pieces, in, soff, roff, threads,
               [&](const Piece& p) { return elements_of(uplo, p); });
  KeptBuffer send_buffer(static_cast<size_t>(soff[size] * Element<T>::doubles)),
      recv_buffer(static_cast<size_t>(roff[size] * Element<T>::doubles));
  T* const send = elements_in<T>(send_buffer.data());
  T* const recv = elements_in<T>(recv_buffer.data());
  auto pack_piece = [&](const Piece& p) {
    if (p.own) {
      auto own = [&](const Segment& s) {
        read_segment(a, lld, s, a_cols + s.dest_row + (s.dest_col - p.c0) * n);
      };
      if (!p.mirrored)
        for_each_direct_segment_to_engine(uplo, p.runs, p.c0, p.c1, own);
      else
        for_each_mirrored_piece_to_engine(
            uplo, p.runs, p.c0, p.c1, own, [&](const Run& rr, const Run& cr) {
              transpose_tile(a + rr.local + cr.local * lld, lld, rr.len, cr.len,
                             a_cols + cr.global + (rr.global - p.c0) * n, n);
            });
      return;
    }
    T* out = send + p.offset;
    auto pack = [&](const Segment& s) {
      read_segment(a, lld, s, out);
      out += s.len;
    };
    if (!p.mirrored) {
      for_each_direct_segment_to_engine(uplo, p.runs, p.c0, p.c1, pack);
    } else {
      // A mirrored tile is its rows one after the other: its transpose with leading dimension
      // cr.len.
      for_each_mirrored_piece_to_engine(
          uplo, p.runs, p.c0, p.c1, pack, [&](const Run& rr, const Run& cr) {
            transpose_tile(a + rr.local + cr.local * lld, lld, rr.len, cr.len, out, cr.len);
            out += rr.len * cr.len;
          });
    }
  };
  auto unpack_piece = [&](const Piece& p) {
    const T* from = recv + p.offset;
    auto unpack = [&](const Segment& s) {
      std::memcpy(a_cols + s.dest_row + (s.dest_col - c0) * n, from,
                  sizeof(T) * static_cast<size_t>(s.len));
      from += s.len;
    };
    if (!p.mirrored) {
      for_each_direct_segment_to_engine(uplo, p.runs, c0, c1, unpack);
    } else {
      for_each_mirrored_piece_to_engine(
          uplo, p.runs, c0, c1, unpack, [&](const Run& rr, const Run& cr) {
            for (long t = 0; t < rr.len; ++t) {
              std::memcpy(a_cols + cr.global + (rr.global + t - c0) * n, from,
                          sizeof(T) * static_cast<size_t>(cr.len));
              from += cr.len;
            }
          });
    }
  };
  // The own pieces' packing, the typed receives and the unpack write a_cols.
  before_writes();
  if (chunks > 1) {
    clock.lap(&PhaseTimes::pack);
    pipelined_exchange(
        chunks, threads, comm.caller, pieces, send, in, recv,
        [&](long k) { pack_piece(pieces[k]); }, [&](long k) { unpack_piece(in[k]); },
        element_type<T>());
    clock.lap(&PhaseTimes::exchange);
    return;
  }
  const std::vector<double> piece_seconds =
      timed_parallel_for(static_cast<long>(pieces.size()), threads, times != nullptr,
                         [&](long k) { pack_piece(pieces[k]); });
  for (size_t k = 0; k < pieces.size() && times; ++k) {
    if (pieces[k].own) times->own += piece_seconds[k];
    if (pieces[k].mirrored) times->mirror += piece_seconds[k];
  }
  clock.lap(&PhaseTimes::pack);

  // The messages: their direct part in place (where it is not packed), then their packed slice.
  std::vector<MPI_Datatype> stype(size, MPI_DATATYPE_NULL), rtype(size, MPI_DATATYPE_NULL);
  for (int d = 0; d < layout.engine_ranks() && !rounds; ++d) {
    const int dest = comm.engine_to_caller[d];
    const long d0 = layout.col_begin[d], d1 = layout.col_begin[d + 1];
    if (dest == me || counts.send[dest] == 0) continue;
    SegmentType direct(element_type<T>());
    if (packed[dest] < counts.send[dest])
      for_each_direct_segment_to_engine(uplo, mine, d0, d1, [&](const Segment& s) {
        direct.add(a + s.src_row + s.src_col * lld, s.len);
      });
    MPI_Datatype parts[2] = {direct.commit(),
                             packed[dest] > 0
                                 ? contiguous_at(send + soff[dest], packed[dest], element_type<T>())
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
  clock.lap(&PhaseTimes::types);

  if (rounds) {
    exchange(send, counts.send, recv, counts.recv, comm.caller, options, element_type<T>());
  } else {
    for (int r = 0; r < size; ++r) {
      if (counts.recv[r] == 0) continue;
      if (!typed(r)) {
        rtype[r] = contiguous_at(recv + roff[r], counts.recv[r], element_type<T>());
        continue;
      }
      SegmentType in_place(element_type<T>());
      for_each_segment_to_engine(uplo, local_runs(view, grid.prow[r], grid.pcol[r]), c0, c1,
                                 [&](const Segment& s) {
                                   in_place.add(a_cols + s.dest_row + (s.dest_col - c0) * n, s.len);
                                 });
      rtype[r] = in_place.commit();
    }
    exchange_typed(stype, rtype, comm.caller);
  }
  send_buffer.release();
  clock.lap(&PhaseTimes::exchange);

  if (e < 0) return;
  parallel_for(static_cast<long>(in.size()), threads, [&](long k) { unpack_piece(in[k]); });
  clock.lap(&PhaseTimes::unpack);
}

}  // namespace

void block_cyclic_to_engine(char uplo, long n, const double* a, long ia, long ja, const int* desca,
                            const EngineLayout& layout, const EngineComm& comm, double* a_cols,
                            const ExchangeOptions& options, PhaseTimes* times) {
  to_engine(uplo, n, a, ia, ja, desca, layout, comm, a_cols, options, times);
}

void block_cyclic_to_engine(char uplo, long n, const std::complex<double>* a, long ia, long ja,
                            const int* desca, const EngineLayout& layout, const EngineComm& comm,
                            std::complex<double>* a_cols, const ExchangeOptions& options,
                            PhaseTimes* times) {
  to_engine(uplo, n, a, ia, ja, desca, layout, comm, a_cols, options, times);
}

}  // namespace pipevd
