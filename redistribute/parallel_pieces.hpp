// Packing and unpacking on threads. A message to or from the engine is walked run by run (its
// order: outer loop over the source's column runs for direct segments, row runs for mirrored
// ones, column runs of the destination for engine -> block-cyclic), so a range of outer runs is a
// contiguous slice of the message: pieces of work that threads can copy independently once a
// counting pass has given each its offset.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#include "base/parallel_for.hpp"
#include "redistribute/element.hpp"
#include "redistribute/redistribution_plan.hpp"

namespace pipevd {

// Threads for packing and unpacking: `requested` when > 0, else the CPUs in this process's
// affinity mask (its share of the node under mpirun binding; unbound: the node's CPUs over the
// `ranks_on_node` processes on it, node_window.hpp's ranks_on_this_node). A cap (PIPEVD_THREADS,
// interface/policy) is the caller's: it passes the capped count as `requested`.
int redistribution_threads(int requested, int ranks_on_node);

// f(k) for k in [0, count) on `threads` threads while this thread drives `req` to completion (an
// exchange in flight moves only inside MPI calls of this thread: the others never call MPI); once
// it is complete this thread takes work too. req: MPI_REQUEST_NULL for none.
template <class F>
void parallel_for_during(long count, int threads, MPI_Request* req, F&& f) {
  std::atomic<long> next{0};
  WorkerPool pool;
  auto work = [&] {
    for (long i = next++; i < count && !pool.failed(); i = next++) f(i);
  };
  pool.start(std::min<long>(threads - 1, count), work);
  // The request is driven to completion whatever the work does (a failed piece is rethrown after).
  for (int done = 0; !done;) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (threads > 1 && next < count && !pool.failed()) continue;
    const long i = next++;  // one thread, or nothing left to share: work here between tests
    if (i < count && !pool.failed()) {
      auto one = [&] { f(i); };
      pool.guarded(one);
    } else {
      MPI_Wait(req, MPI_STATUS_IGNORE), done = 1;
    }
  }
  pool.guarded(work);
  pool.join();
}

// A packed exchange in `chunks` steps, each one MPI_Ialltoallv of every message's chunk c, so that
// packing chunk c+1 and unpacking chunk c-1 overlap the transfer of chunk c. Pieces (P: peer,
// chunk, own, count, offset; each peer's pieces in chunk order, so a chunk of a message is
// contiguous): pack(k) fills send piece k (own ones go straight to their place), unpack(k) reads
// receive piece k. Counts and offsets in elements of `element`, below the int limit.
template <class P, class Pack, class Unpack>
void pipelined_exchange(int chunks, int threads, MPI_Comm comm, const std::vector<P>& out,
                        const void* sbuf, const std::vector<P>& in, void* rbuf, Pack&& pack,
                        Unpack&& unpack, ElementType element = {}) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<std::vector<int>> sc(chunks, std::vector<int>(size, 0)), sd = sc, rc = sc, rd = sc;
  std::vector<std::vector<long>> packs(chunks), unpacks(chunks);
  auto place = [&](const P& p, std::vector<std::vector<int>>& c, std::vector<std::vector<int>>& d) {
    if (p.own) return;
    if (c[p.chunk][p.peer] == 0) d[p.chunk][p.peer] = static_cast<int>(p.offset);
    c[p.chunk][p.peer] += static_cast<int>(p.count);
  };
  for (size_t k = 0; k < out.size(); ++k) {
    packs[out[k].chunk].push_back(static_cast<long>(k));
    place(out[k], sc, sd);
  }
  for (size_t k = 0; k < in.size(); ++k) {
    unpacks[in[k].chunk].push_back(static_cast<long>(k));
    place(in[k], rc, rd);
  }
  MPI_Request none = MPI_REQUEST_NULL;
  parallel_for_during(static_cast<long>(packs[0].size()), threads, &none,
                      [&](long i) { pack(packs[0][i]); });
  for (int c = 0; c < chunks; ++c) {
    MPI_Request req;
    MPI_Ialltoallv(sbuf, sc[c].data(), sd[c].data(), element.mpi, rbuf, rc[c].data(), rd[c].data(),
                   element.mpi, comm, &req);
    static const std::vector<long> nothing;
    const std::vector<long>& p = c + 1 < chunks ? packs[c + 1] : nothing;
    const std::vector<long>& u = c > 0 ? unpacks[c - 1] : nothing;
    const long np = static_cast<long>(p.size());
    parallel_for_during(np + static_cast<long>(u.size()), threads, &req, [&](long i) {
      if (i < np)
        pack(p[i]);
      else
        unpack(u[i - np]);
    });
  }
  parallel_for_during(static_cast<long>(unpacks[chunks - 1].size()), threads, &none,
                      [&](long i) { unpack(unpacks[chunks - 1][i]); });
}

// Sizes and places of the pieces of an exchange (P as for pipelined_exchange): count_of(p) for
// every piece that is not own, on threads, then the offsets, each peer's pieces one after the other
// from soff[peer] (send pieces `out`) or roff[peer] (receive pieces `in`).
template <class P, class Count>
void place_pieces(std::vector<P>& out, std::vector<P>& in, const std::vector<long>& soff,
                  const std::vector<long>& roff, int threads, Count&& count_of) {
  parallel_for(static_cast<long>(out.size() + in.size()), threads, [&](long k) {
    P& p = k < static_cast<long>(out.size()) ? out[k] : in[k - out.size()];
    if (!p.own) p.count = count_of(p);
  });
  auto set_offsets = [](std::vector<P>& pieces, const std::vector<long>& off) {
    int peer = -1;
    long at = 0;
    for (P& p : pieces) {
      if (p.own) continue;
      if (p.peer != peer) at = off[peer = p.peer];
      p.offset = at;
      at += p.count;
    }
  };
  set_offsets(out, soff);
  set_offsets(in, roff);
}

// [k0, k1) ranges that split `count` runs into at most `parts` nearly equal pieces (none empty).
inline std::vector<std::pair<size_t, size_t>> split_runs(size_t count, int parts) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t p = std::max<size_t>(1, std::min<size_t>(count, static_cast<size_t>(parts)));
  for (size_t k = 0; k < p; ++k) {
    const size_t k0 = count * k / p, k1 = count * (k + 1) / p;
    if (k1 > k0) out.emplace_back(k0, k1);
  }
  return out;
}

// The [k0, k1) ranges of `count` runs: chunk c of `chunks` (possibly empty; sender and receiver
// compute the same), split into at most `slices` pieces.
inline std::vector<std::pair<size_t, size_t>> chunk_slices(size_t count, int chunks, int c,
                                                           int slices) {
  const size_t k0 = count * c / chunks, k1 = count * (c + 1) / chunks;
  std::vector<std::pair<size_t, size_t>> out = split_runs(k1 - k0, slices);
  for (auto& r : out) r = {r.first + k0, r.second + k0};
  return out;
}

// The runs with only rows [k0, k1) (or columns) kept.
inline LocalRuns with_rows(const LocalRuns& r, size_t k0, size_t k1) {
  return {std::vector<Run>(r.rows.begin() + k0, r.rows.begin() + k1), r.cols};
}
inline LocalRuns with_cols(const LocalRuns& r, size_t k0, size_t k1) {
  return {r.rows, std::vector<Run>(r.cols.begin() + k0, r.cols.begin() + k1)};
}

// The parts of `runs` inside the (global, submatrix-relative) range [lo, hi).
std::vector<Run> clip_runs(const std::vector<Run>& runs, long lo, long hi);
// The parts of `runs` at local indices [first, first + len), those indices moved to start at
// `at` (where a window holds those local columns).
std::vector<Run> local_stretch(const std::vector<Run>& runs, long first, long len, long at);
// `runs` cut into at most `parts` pieces of nearly equal total length (none empty; a run may be
// cut), for threads to share.
std::vector<std::vector<Run>> cut_runs(const std::vector<Run>& runs, long parts);

}  // namespace pipevd
