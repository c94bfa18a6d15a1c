#include "redistribute/engine_to_block_cyclic.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/scalapack_api.hpp"
#include "redistribute/element.hpp"
#include "redistribute/engine_to_block_cyclic_on_node.hpp"
#include "redistribute/exchange_setup.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/segment_type.hpp"

namespace pipevd {

namespace {

// A slice of one message from the engine rows [r0, r1): the segments of `runs` (some column runs
// of the grid process), `count` elements at `offset` of the message buffer, or (own) copied
// straight from the engine's rows into z.
struct Piece {
  int peer;
  long r0, r1;
  LocalRuns runs;
  bool own;
  int chunk;
  long count = 0, offset = 0;
};

// The message between rows [r0, r1) and the grid process with runs `theirs`, in slices of its
// column runs: message order (chunk c: the c-th share of the column runs).
void add_pieces(std::vector<Piece>& pieces, int peer, long r0, long r1, bool own,
                const LocalRuns& theirs, int chunks, int slices) {
  for (int c = 0; c < chunks; ++c)
    for (const auto& [k0, k1] : chunk_slices(theirs.cols.size(), chunks, c, slices))
      pieces.push_back(Piece{peer, r0, r1, with_cols(theirs, k0, k1), own, c});
}

long elements_of(const Piece& p) {
  long c = 0;
  for_each_segment_from_engine(p.r0, p.r1, p.runs, [&](const Segment& s) { c += s.len; });
  return c;
}

// Segments are contiguous on both sides, so messages of long segments go straight from z_rows to
// z through datatypes; short-segment messages (and everything past the int limit) are packed.
template <class T>
void from_engine(long n, const T* z_rows, const EngineLayout& layout, const EngineComm& comm, T* z,
                 long iz, long jz, const int* descz, const ExchangeOptions& options,
                 PhaseTimes* times) {
  PhaseClock clock(times);
  check_layout("engine_to_block_cyclic", n, layout, comm);
  if (n == 0) return;
  const ExchangeSetup setup =
      setup_exchange("engine_to_block_cyclic", n, descz, iz, jz, comm, options);
  const GridMap& grid = setup.grid;
  const BlockCyclicView& view = setup.view;
  const long lld = view.lld;
  const int me = setup.me, size = setup.size, threads = setup.threads;
  if (setup.node_window && engine_to_block_cyclic_on_node(options, n, z_rows, setup, layout, comm,
                                                          z, threads, clock, times))
    return;

  const ExchangeCounts counts = counts_from_engine(view, grid, layout, comm);
  const bool rounds =
      largest_total_from_engine(view, layout) * Element<T>::doubles > options.int_limit;
  const int chunks = rounds ? 1 : std::max(1, options.chunks);
  auto typed = [&](long elements, long segments) {
    return !rounds && chunks == 1 && elements >= options.min_typed_segment * segments;
  };
  // Room only for the messages that are packed (short segments, or all of them in rounds).
  std::vector<long> soff(size + 1, 0), roff(size + 1, 0);
  for (int r = 0; r < size; ++r) {
    soff[r + 1] = soff[r] + (typed(counts.send[r], counts.send_segments[r]) ? 0 : counts.send[r]);
    roff[r + 1] = roff[r] + (typed(counts.recv[r], counts.recv_segments[r]) ? 0 : counts.recv[r]);
  }
  std::vector<int> engine_of(size, -1);
  for (int e = 0; e < layout.engine_ranks(); ++e) engine_of[comm.engine_to_caller[e]] = e;
  const LocalRuns mine = local_runs(view, grid.myrow, grid.mycol);
  const int e = comm.engine_rank;
  const long r0 = e >= 0 ? layout.row_begin[e] : 0, r1 = e >= 0 ? layout.row_begin[e + 1] : 0;
  const long ldz = std::max(1L, r1 - r0);
  clock.lap(&PhaseTimes::plan);

  // Engine ranks: their own part straight into z; per destination a datatype or a packed slice,
  // packed in slices of the destination's column runs on threads.
  const int slices = threads > 1 ? 2 * threads : 1;
  std::vector<MPI_Datatype> stype(size, MPI_DATATYPE_NULL), rtype(size, MPI_DATATYPE_NULL);
  KeptBuffer send_buffer(static_cast<size_t>(soff[size] * Element<T>::doubles)),
      recv_buffer(static_cast<size_t>(roff[size] * Element<T>::doubles));
  T* const send = elements_in<T>(send_buffer.data());
  T* const recv = elements_in<T>(recv_buffer.data());
  std::vector<Piece> pieces, in;
  for (int dest = 0; dest < size && e >= 0; ++dest) {
    if (dest == me) {
      add_pieces(pieces, dest, r0, r1, true, mine, chunks, slices);
      continue;
    }
    if (counts.send[dest] == 0) continue;
    const LocalRuns theirs = local_runs(view, grid.prow[dest], grid.pcol[dest]);
    if (typed(counts.send[dest], counts.send_segments[dest])) {
      SegmentType in_place(element_type<T>());
      for_each_segment_from_engine(r0, r1, theirs, [&](const Segment& s) {
        in_place.add(z_rows + s.src_row + s.src_col * ldz, s.len);
      });
      stype[dest] = in_place.commit();
      continue;
    }
    add_pieces(pieces, dest, r0, r1, false, theirs, chunks, slices);
    if (!rounds)
      stype[dest] = contiguous_at(send + soff[dest], counts.send[dest], element_type<T>());
  }
  // What this process unpacks: messages of short segments (all of them in chunks or rounds).
  for (int src = 0; src < size; ++src) {
    if (src == me || counts.recv[src] == 0 || typed(counts.recv[src], counts.recv_segments[src]))
      continue;
    const int from = engine_of[src];
    add_pieces(in, src, layout.row_begin[from], layout.row_begin[from + 1], false, mine, chunks,
               slices);
  }
  place_pieces(pieces, in, soff, roff, threads, [&](const Piece& p) { return elements_of(p); });
  clock.lap(&PhaseTimes::types);

  auto pack_piece = [&](const Piece& p) {
    T* out = send + p.offset;
    for_each_segment_from_engine(r0, r1, p.runs, [&](const Segment& s) {
      const T* from = z_rows + s.src_row + s.src_col * ldz;
      const size_t bytes = sizeof(T) * static_cast<size_t>(s.len);
      if (p.own) {
        std::memcpy(z + s.dest_row + s.dest_col * lld, from, bytes);
      } else {
        std::memcpy(out, from, bytes);
        out += s.len;
      }
    });
  };
  auto unpack_piece = [&](const Piece& p) {
    const T* from = recv + p.offset;
    for_each_segment_from_engine(p.r0, p.r1, p.runs, [&](const Segment& s) {
      std::memcpy(z + s.dest_row + s.dest_col * lld, from, sizeof(T) * static_cast<size_t>(s.len));
      from += s.len;
    });
  };
  if (chunks > 1) {
    for (MPI_Datatype& t : stype)
      if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
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
  for (size_t k = 0; k < pieces.size() && times; ++k)
    if (pieces[k].own) times->own += piece_seconds[k];
  clock.lap(&PhaseTimes::pack);

  if (rounds) {
    exchange(send, counts.send, recv, counts.recv, comm.caller, options, element_type<T>());
  } else {
    for (int src = 0; src < size; ++src) {
      if (counts.recv[src] == 0) continue;
      if (!typed(counts.recv[src], counts.recv_segments[src])) {
        rtype[src] = contiguous_at(recv + roff[src], counts.recv[src], element_type<T>());
        continue;
      }
      const int from = engine_of[src];
      SegmentType in_place(element_type<T>());
      for_each_segment_from_engine(
          layout.row_begin[from], layout.row_begin[from + 1], mine,
          [&](const Segment& s) { in_place.add(z + s.dest_row + s.dest_col * lld, s.len); });
      rtype[src] = in_place.commit();
    }
    exchange_typed(stype, rtype, comm.caller);
  }
  send_buffer.release();
  clock.lap(&PhaseTimes::exchange);

  parallel_for(static_cast<long>(in.size()), threads, [&](long k) { unpack_piece(in[k]); });
  clock.lap(&PhaseTimes::unpack);
}

}  // namespace

void engine_to_block_cyclic(long n, const double* z_rows, const EngineLayout& layout,
                            const EngineComm& comm, double* z, long iz, long jz, const int* descz,
                            const ExchangeOptions& options, PhaseTimes* times) {
  from_engine(n, z_rows, layout, comm, z, iz, jz, descz, options, times);
}

void engine_to_block_cyclic(long n, const std::complex<double>* z_rows, const EngineLayout& layout,
                            const EngineComm& comm, std::complex<double>* z, long iz, long jz,
                            const int* descz, const ExchangeOptions& options, PhaseTimes* times) {
  from_engine(n, z_rows, layout, comm, z, iz, jz, descz, options, times);
}

}  // namespace pipevd
