// The all-to-all that moves every piece, for element counts of any size. Below int_limit: one
// MPI_Alltoallw whose per-peer datatypes describe the messages in place or point at packed
// slices (exchange_typed), or one MPI_Alltoallv of packed buffers (exchange). Above it: packed
// buffers in rounds of MPI_Alltoallw whose per-peer datatypes carry 64-bit offsets, each message
// at most max_message elements, so memory stays that of the packed buffers.
#pragma once
#include <mpi.h>

#include <functional>
#include <vector>

#include "redistribute/element.hpp"

namespace pipevd {

enum class NodeMemory { off, push, pull };

struct ExchangeOptions {
  // Above this total per rank (elements, on any rank) messages go in rounds. 2 GiB of doubles:
  // below MPI's int counts and clear of 32-bit byte counts in MPI implementations.
  long int_limit = (1L << 28) - 1;
  long max_message = 1L << 27;  // elements per peer per round (1 GiB of doubles)
  // Below the int limit, a message whose segments average at least this many elements is
  // described in place by a datatype (no pack or unpack pass); shorter ones are packed.
  long min_typed_segment = 32;
  // Threads that pack and unpack; 0: redistribution_threads() picks (the affinity mask, shared
  // by the ranks on the node when unbound). A cap (PIPEVD_THREADS) is the caller's to apply here.
  // The result does not depend on it.
  int threads = 0;
  // Below the int limit: > 1 packs every message and moves it in this many chunks (nonblocking
  // all-to-alls), packing and unpacking overlapping the transfer of the chunk between.
  int chunks = 1;
  // Where every caller process runs on one node, no messages but a shared window:
  // block_cyclic_to_engine pushes or pulls as named (block_cyclic_to_engine_on_node.hpp says how
  // they differ), engine_to_block_cyclic pulls for either (engine_to_block_cyclic_on_node.hpp);
  // elsewhere (and for one process) the settings above apply. Any size. The same on every rank.
  NodeMemory node_memory = NodeMemory::off;
  // There: the most bytes one process's segment of the window holds (at least two columns of what
  // it passes); a call whose parts exceed it moves them in rounds (window_rounds.hpp). Larger:
  // fewer rounds, each a barrier that waits for the slowest process and a start of the threads,
  // paid on every call; smaller: fewer fresh pages for the first call to populate (the kernel
  // zeroes them far slower than a round copies them) and less of /dev/shm held between calls.
  // 256 MiB keeps a node's first populate to a fraction of a second for a few processes while the
  // rounds stay few, since a code makes many repeated calls to one first. The same on every rank.
  long node_segment_bytes = 256L << 20;
  // There: whole cache lines written with non-temporal stores (stream_copy.hpp).
  bool streaming_stores = true;
  // There: the threads that back a new window's pages (0: all of the threads above), fewer where
  // the process backs other memory next to it (redistribute/destination_population.hpp).
  int window_populate_threads = 0;
  // The threads that back a new window's pages where the redistribution has `threads`.
  int window_threads(int threads) const {
    return window_populate_threads > 0 ? window_populate_threads : threads;
  }
  // block_cyclic_to_engine only: called once on the calling thread before anything writes the
  // destination's columns, on every path (also one that writes nothing, returns early or throws:
  // then as it ends), so that what it waits for never outlives the redistribution.
  std::function<void()> before_writes;
};

// Seconds spent in each phase of one redistribution (this process), for benchmarks and logs.
struct PhaseTimes {
  double plan = 0, pack = 0, exchange = 0, unpack = 0;
  // Parts of pack, in seconds summed over the threads: the engine's own part (copied in place) and
  // the mirrored triangle's pieces (to the engine only). types: wall time building the send
  // datatypes (out: with the counting pass that places the packed pieces).
  double own = 0, mirror = 0, types = 0;
};

// Collective over comm. send holds the elements for rank r at [sum(send_counts[<r]), +count), and
// recv receives those from rank r likewise. Counts are in elements of `element` (doubles unless
// told); the limits of `options` count doubles, an element of two doubles as two.
void exchange(const void* send, const std::vector<long>& send_counts, void* recv,
              const std::vector<long>& recv_counts, MPI_Comm comm,
              const ExchangeOptions& options = {}, ElementType element = {});

// Collective over comm: one MPI_Alltoallw from MPI_BOTTOM, one message per peer described by a
// datatype over absolute addresses (MPI_DATATYPE_NULL: no message). Frees the datatypes.
void exchange_typed(std::vector<MPI_Datatype>& send, std::vector<MPI_Datatype>& recv,
                    MPI_Comm comm);

}  // namespace pipevd
