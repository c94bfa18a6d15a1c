#include "redistribute/window_rounds.hpp"

#include "base/parallel_for.hpp"

namespace pipevd {

WindowRounds plan_window_rounds(long most_columns, long column_doubles, long segment_doubles,
                                long spread) {
  WindowRounds w;
  w.group = std::max(1L, most_columns);
  if (most_columns * column_doubles <= segment_doubles) return w;
  const long block = std::max(1L, segment_doubles / (2 * std::max(1L, column_doubles)));
  w.groups = std::clamp(spread, 1L, block);
  w.group = block / w.groups;
  const long units = (most_columns + w.group - 1) / w.group;
  w.rounds = (units + w.groups - 1) / w.groups;
  w.halves = w.rounds > 1;
  return w;
}

long window_request(const WindowRounds& rounds, long columns, long column_doubles,
                    const EngineLayout& layout, int engine_rank, long element_doubles,
                    long segment_doubles) {
  long own = 0;
  if (columns > 0) own = (rounds.halves ? 2 * rounds.columns() : columns) * column_doubles;
  if (engine_rank < 0) return own;
  const long part =
      layout.n * std::max(layout.width(engine_rank), layout.height(engine_rank)) * element_doubles;
  return std::max(own, std::min(part, segment_doubles));
}

long segment_doubles(const ExchangeOptions& options) {
  return std::max(1L, options.node_segment_bytes / static_cast<long>(sizeof(double)));
}

long parts_for(int threads, long stretches) {
  return threads > 1 ? std::max(1L, (4L * threads + stretches - 1) / std::max(1L, stretches)) : 1;
}

RoundCopies span_copies(const Copier& out, const std::vector<Span>& spans) {
  constexpr long kPiece = 1L << 18;  // 2 MiB of doubles
  std::vector<Span> pieces;
  for (const Span& s : spans)
    for (long b = 0; b < s.len; b += kPiece)
      pieces.push_back(Span{s.dst + b, s.src + b, std::min(kPiece, s.len - b)});
  RoundCopies c;
  c.count = static_cast<long>(pieces.size());
  c.copy = [out, pieces = std::move(pieces)](long k) {
    out.copy(pieces[k].dst, pieces[k].src, pieces[k].len);
    out.fence();
  };
  return c;
}

namespace {

// a's pieces and b's on the threads together.
void copy_both(const RoundCopies& a, const RoundCopies& b, int threads, bool timed) {
  const std::vector<double> seconds =
      timed_parallel_for(a.count + b.count, threads, timed, [&](long k) {
        if (k < a.count)
          a.copy(k);
        else
          b.copy(k - a.count);
      });
  if (!timed) return;
  for (long k = 0; k < a.count && a.charge; ++k) a.charge(k, seconds[k]);
  for (long k = 0; k < b.count && b.charge; ++k) b.charge(k, seconds[a.count + k]);
}

}  // namespace

void copy_in_rounds(const WindowRounds& rounds, int threads, const NodeWindow& window,
                    MPI_Comm comm, const std::function<RoundCopies(long)>& write,
                    const std::function<RoundCopies(long)>& read, PhaseClock& clock,
                    PhaseTimes* times) {
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window.win);
  copy_both(write(0), RoundCopies{}, threads, times != nullptr);
  clock.lap(&PhaseTimes::pack);
  for (long r = 0; r < rounds.rounds; ++r) {
    node_window_barrier(window, comm);
    clock.lap(&PhaseTimes::exchange);
    copy_both(read(r), r + 1 < rounds.rounds ? write(r + 1) : RoundCopies{}, threads,
              times != nullptr);
    clock.lap(&PhaseTimes::unpack);
  }
  MPI_Win_unlock_all(window.win);
}

}  // namespace pipevd
