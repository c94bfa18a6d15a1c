// A redistribution through a node window (node_window.hpp) in rounds, so that each process's
// segment stays within ExchangeOptions::node_segment_bytes whatever the matrix. What a process
// passes through its segment is a set of columns, each of its own leading dimension; a round
// moves a share of every process's columns, at most the same number on each, so every process
// copies about as much as the others in every round.
//
// Where a call's columns do not fit at once, a segment holds two blocks of a round's columns and
// round r uses block r % 2: a process writes round r + 1 into one block while the others may still
// read round r from the other, so one barrier per round orders everything (a process writes round
// r + 2 only after the barrier of round r + 1, which nobody reaches before reading round r).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "base/engine_layout.hpp"
#include "redistribute/exchange_setup.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/stream_copy.hpp"

namespace pipevd {

// Which columns each round moves, and where in a segment they go: columns are taken in groups of
// `group`; round r takes groups u = r, r + rounds, r + 2 rounds, ... (at most `groups` of them),
// the k-th at column block(r) + k * group of the segment. With several groups a round's columns
// spread over all of a process's columns instead of one stretch of them.
struct WindowRounds {
  long rounds = 1;      // the same on every process
  long group = 1;       // columns per group
  long groups = 1;      // groups per round
  bool halves = false;  // two blocks, round r in block r % 2 (more than one round)
  long columns() const { return group * groups; }  // of one block
  long block(long r) const { return halves ? r % 2 * columns() : 0; }
  // f(first, len, at) for round r's groups among `count` columns: columns [first, first + len) go
  // to the segment's columns from `at`.
  template <class F>
  void for_each_group(long r, long count, F&& f) const {
    for (long k = 0; k < groups; ++k) {
      const long first = (r + k * rounds) * group;
      if (first >= count) return;
      f(first, std::min(group, count - first), block(r) + k * group);
    }
  }
};

// Rounds for processes that each pass at most `most_columns` columns of at most `column_doubles`
// doubles through a segment of at most `segment_doubles` (all three the same on every process, so
// every process plans the same rounds): one round where they fit, else two blocks of as many
// columns as fit (at least one), in up to `spread` groups per round. A segment too small for two
// columns still holds two.
WindowRounds plan_window_rounds(long most_columns, long column_doubles, long segment_doubles,
                                long spread);

// Doubles this process asks of the window in one direction: what `rounds` put in its segment (it
// passes `columns` columns of `column_doubles`), and where it is engine rank `engine_rank`, at
// least its larger part of either direction (element_doubles per element) up to segment_doubles,
// so that the way out, asking no more, finds the window the way in made.
long window_request(const WindowRounds& rounds, long columns, long column_doubles,
                    const EngineLayout& layout, int engine_rank, long element_doubles,
                    long segment_doubles);

// A segment's limit from ExchangeOptions::node_segment_bytes, in doubles.
long segment_doubles(const ExchangeOptions& options);

// Pieces to cut each of a round's `stretches` (its groups, per engine rank or per source) into,
// so that the round gives every thread a few.
long parts_for(int threads, long stretches);

// What one process copies in one round: `count` pieces, copy(k) the k-th (on any thread, its
// streaming stores fenced); charge(k, seconds), where set, is told each piece's time.
struct RoundCopies {
  long count = 0;
  std::function<void(long)> copy;
  std::function<void(long, double)> charge;
};

// Contiguous copies dst[0, len) = src[0, len) of doubles as pieces of at most 2 MiB.
struct Span {
  double* dst;
  const double* src;
  long len;
};
RoundCopies span_copies(const Copier& out, const std::vector<Span>& spans);

// Collective over comm, whose window it is: every round's copies into the window (write(r)), a
// node_window_barrier, its copies out (read(r)), reading round r on the same threads as writing
// round r + 1. Phases: the first writing is pack, the barriers exchange, the rest unpack.
void copy_in_rounds(const WindowRounds& rounds, int threads, const NodeWindow& window,
                    MPI_Comm comm, const std::function<RoundCopies(long)>& write,
                    const std::function<RoundCopies(long)>& read, PhaseClock& clock,
                    PhaseTimes* times);

}  // namespace pipevd
