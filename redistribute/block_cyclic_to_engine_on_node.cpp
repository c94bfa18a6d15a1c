#include "redistribute/block_cyclic_to_engine_on_node.hpp"

#include <algorithm>
#include <complex>
#include <memory>
#include <utility>
#include <vector>

#include "redistribute/element.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "redistribute/stream_copy.hpp"
#include "redistribute/window_rounds.hpp"

namespace pipevd {

namespace {

// What one thread copies at a time: the direct (some column runs) or the mirrored (some row runs)
// elements of one process's local array (or its image in the window) that fill engine columns
// [c0, c1); column c0 of the destination at `to` (leading dimension n).
template <class T>
struct Piece {
  int engine;
  int source;  // the caller rank whose local array it reads
  bool mirrored;
  LocalRuns runs;  // local indices into `from`
  long c0, c1;
  const T* from;
  long ldf;
  T* to;
};

// Pieces of p's elements in engine columns [p.c0, p.c1): its direct ones (its column runs there)
// and its mirrored ones (its row runs there), each cut into about `parts` for the threads.
template <class T>
void add_pieces(std::vector<Piece<T>>& pieces, Piece<T> p, long parts) {
  const LocalRuns all = p.runs;
  p.mirrored = false;
  for (std::vector<Run>& cols : cut_runs(clip_runs(all.cols, p.c0, p.c1), parts)) {
    p.runs = LocalRuns{all.rows, std::move(cols)};
    pieces.push_back(p);
  }
  p.mirrored = true;
  for (std::vector<Run>& rows : cut_runs(clip_runs(all.rows, p.c0, p.c1), parts)) {
    p.runs = LocalRuns{std::move(rows), all.cols};
    pieces.push_back(p);
  }
}

// Copies a piece into the full matrix's columns at p.to; the mirrored elements of a Hermitian
// matrix conjugated.
template <class T>
void copy_piece(const Copier& out, char uplo, const Piece<T>& p, long n) {
  auto segment = [&](const Segment& s) {
    const T* f = p.from + s.src_row + s.src_col * p.ldf;
    T* to = p.to + s.dest_row + (s.dest_col - p.c0) * n;
    if (!s.mirrored) {
      out.copy(to, f, s.len);
    } else {
      for (long t = 0; t < s.len; ++t) to[t] = conjugate(f[t * p.ldf]);
    }
  };
  if (!p.mirrored) {
    for_each_direct_segment_to_engine(uplo, p.runs, p.c0, p.c1, segment);
  } else {
    for_each_mirrored_piece_to_engine(
        uplo, p.runs, p.c0, p.c1, segment, [&](const Run& rr, const Run& cr) {
          out.transpose(p.from + rr.local + cr.local * p.ldf, p.ldf, rr.len, cr.len,
                        p.to + cr.global + (rr.global - p.c0) * n, n);
        });
  }
  out.fence();
}

// The pieces' copies; their seconds into times->own (pieces this process both reads and keeps)
// and ->mirror.
template <class T>
RoundCopies piece_copies(const Copier& out, char uplo, long n, std::vector<Piece<T>> pieces, int me,
                         const EngineComm& comm, PhaseTimes* times) {
  RoundCopies c;
  c.count = static_cast<long>(pieces.size());
  auto shared = std::make_shared<std::vector<Piece<T>>>(std::move(pieces));
  c.copy = [out, uplo, n, shared](long k) { copy_piece(out, uplo, (*shared)[k], n); };
  if (times)
    c.charge = [shared, me, &comm, times](long k, double seconds) {
      const Piece<T>& p = (*shared)[k];
      if (p.source == me && comm.engine_to_caller[p.engine] == me) times->own += seconds;
      if (p.mirrored) times->mirror += seconds;
    };
  return c;
}

long total(const std::vector<Run>& runs) {
  long t = 0;
  for (const Run& r : runs) t += r.len;
  return t;
}

// The runs with local indices counted from the first run's (0 there).
LocalRuns rebased(LocalRuns r) {
  for (std::vector<Run>* v : {&r.rows, &r.cols}) {
    const long base = v->empty() ? 0 : v->front().local;
    for (Run& run : *v) run.local -= base;
  }
  return r;
}

// The window holds doubles: T's elements take Element<T>::doubles each.
template <class T>
T* segment_of(const NodeWindow& window, int rank) {
  return elements_in<T>(window.base[rank]);
}

// Segment of engine rank k: a round's columns of its a_cols (leading dimension n); round r takes
// every engine rank's columns [r c, (r + 1) c) of its own.
template <class T>
bool push(const Copier& out, char uplo, long n, const T* a, const ExchangeSetup& setup,
          const EngineLayout& layout, const EngineComm& comm, T* a_cols, int threads,
          int populate_threads, long segment, BeforeWrites& before_writes, PhaseClock& clock,
          PhaseTimes* times) {
  const int e = comm.engine_rank, engines = layout.engine_ranks();
  const long d = Element<T>::doubles;
  long widest = 0;
  for (int k = 0; k < engines; ++k) widest = std::max(widest, layout.width(k));
  const WindowRounds rounds = plan_window_rounds(widest, n * d, segment, 1);
  const long own = e >= 0 ? layout.width(e) : 0;
  const NodeWindow* shared =
      node_window(comm.caller, window_request(rounds, own, n * d, layout, e, d, segment),
                  populate_threads, segment);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  const LocalRuns mine = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
  const long parts = parts_for(threads, engines);
  clock.lap(&PhaseTimes::plan);

  // Each element at its place in engine rank k's columns of the round.
  auto write = [&](long r) {
    std::vector<Piece<T>> pieces;
    for (int k = 0; k < engines; ++k)
      rounds.for_each_group(r, layout.width(k), [&](long first, long len, long at) {
        const long c0 = layout.col_begin[k] + first;
        T* to = segment_of<T>(window, comm.engine_to_caller[k]) + at * n;
        add_pieces(pieces, Piece<T>{k, setup.me, false, mine, c0, c0 + len, a, setup.view.lld, to},
                   parts);
      });
    return piece_copies(out, uplo, n, std::move(pieces), setup.me, comm, times);
  };
  // The segment holds the round's columns as a_cols does: contiguous copies.
  auto read = [&](long r) {
    before_writes();
    std::vector<Span> spans;
    rounds.for_each_group(r, own, [&](long first, long len, long at) {
      spans.push_back(
          Span{as_words(a_cols + first * n), window.base[setup.me] + at * n * d, len * n * d});
    });
    return span_copies(out, spans);
  };
  copy_in_rounds(rounds, threads, window, comm.caller, write, read, clock, times);
  return true;
}

// Every process's image of its part of the submatrix: its local rows and columns of the submatrix
// (contiguous in its local array, from the first run's local index) with leading dimension
// max(1, their row count), so that readers need nobody's LLD (which may differ per process); a
// segment holds a round's columns of it, round r taking groups of columns spread over the whole
// image, so that every engine rank has its share of every round to read.
struct Images {
  std::vector<LocalRuns> runs;  // rank r's runs, local indices into its image
  std::vector<long> ld;         // rank r's image's leading dimension
  long most_columns = 0, most_ld = 1;
};

Images images_of(const ExchangeSetup& setup) {
  Images im;
  im.runs.resize(setup.size);
  im.ld.resize(setup.size);
  for (int r = 0; r < setup.size; ++r) {
    im.runs[r] = rebased(local_runs(setup.view, setup.grid.prow[r], setup.grid.pcol[r]));
    im.ld[r] = std::max(1L, total(im.runs[r].rows));
    im.most_columns = std::max(im.most_columns, total(im.runs[r].cols));
    im.most_ld = std::max(im.most_ld, im.ld[r]);
  }
  return im;
}

// Global index of each (rebased) local index of `runs`.
std::vector<long> globals_of(const std::vector<Run>& runs) {
  std::vector<long> g(static_cast<size_t>(total(runs)));
  for (const Run& r : runs)
    for (long t = 0; t < r.len; ++t) g[r.local + t] = r.global + t;
  return g;
}

// Copies this process's image columns of the stored triangle from its local array into its
// segment. Local rows ascend with global rows, so the triangle's part of a local column is a
// suffix ('L': rows i >= j) or a prefix ('U': i <= j) of it.
template <class T>
class TriangleWriter {
 public:
  TriangleWriter(const Copier& out, char uplo, const T* a, const ExchangeSetup& setup,
                 const LocalRuns& image, long ld)
      : out_(out),
        lower_(uplo == 'L' || uplo == 'l'),
        lld_(setup.view.lld),
        ld_(ld),
        row_global_(globals_of(image.rows)),
        col_global_(globals_of(image.cols)) {
    const LocalRuns original = local_runs(setup.view, setup.grid.myrow, setup.grid.mycol);
    const long row_base = original.rows.empty() ? 0 : original.rows.front().local;
    const long col_base = original.cols.empty() ? 0 : original.cols.front().local;
    a_ = a + row_base + col_base * lld_;
  }

  // Round r's columns into `seg`, each group cut into at most `parts` pieces.
  RoundCopies round(const WindowRounds& rounds, long r, long parts, T* seg) const {
    struct Stretch {
      long c0, c1, at;  // image columns [c0, c1) go to the segment's columns from at
    };
    std::vector<Stretch> stretches;
    rounds.for_each_group(r, static_cast<long>(col_global_.size()),
                          [&](long first, long len, long at) {
                            const long q = std::min(parts, len);
                            for (long p = 0; p < q; ++p) {
                              const long c0 = first + len * p / q, c1 = first + len * (p + 1) / q;
                              stretches.push_back(Stretch{c0, c1, at + (c0 - first)});
                            }
                          });
    RoundCopies c;
    c.count = static_cast<long>(stretches.size());
    c.copy = [this, seg, stretches](long k) {
      copy(stretches[k].c0, stretches[k].c1, seg, stretches[k].at);
    };
    return c;
  }

 private:
  void copy(long c0, long c1, T* seg, long at) const {
    const long rows = static_cast<long>(row_global_.size());
    for (long lc = c0; lc < c1; ++lc) {
      const long j = col_global_[lc];
      const long split =
          std::lower_bound(row_global_.begin(), row_global_.end(), lower_ ? j : j + 1) -
          row_global_.begin();
      const long r0 = lower_ ? split : 0, r1 = lower_ ? rows : split;
      if (r1 > r0) out_.copy(seg + r0 + (at + lc - c0) * ld_, a_ + r0 + lc * lld_, r1 - r0);
    }
    out_.fence();
  }

  const Copier& out_;
  bool lower_;
  const T* a_ = nullptr;  // the image's (0, 0) in the local array
  long lld_, ld_;
  std::vector<long> row_global_, col_global_;
};

// Engine rank e's reads of round r: its columns' elements from every process's segment.
template <class T>
RoundCopies column_reads(const Copier& out, char uplo, long n, const Images& im,
                         const WindowRounds& rounds, long r, const NodeWindow& window,
                         const EngineLayout& layout, const EngineComm& comm, int me, T* a_cols,
                         int threads, PhaseTimes* times) {
  const int e = comm.engine_rank;
  std::vector<Piece<T>> pieces;
  if (e >= 0 && layout.width(e) > 0) {
    const long c0 = layout.col_begin[e], c1 = layout.col_begin[e + 1];
    const int sources = static_cast<int>(im.runs.size());
    const long parts = parts_for(threads, rounds.groups * sources);
    for (int s = 0; s < sources; ++s) {
      const LocalRuns& runs = im.runs[s];
      rounds.for_each_group(r, total(runs.cols), [&](long first, long len, long at) {
        const LocalRuns in_round{runs.rows, local_stretch(runs.cols, first, len, at)};
        add_pieces(
            pieces,
            Piece<T>{e, s, false, in_round, c0, c1, segment_of<T>(window, s), im.ld[s], a_cols},
            parts);
      });
    }
  }
  return piece_copies(out, uplo, n, std::move(pieces), me, comm, times);
}

template <class T>
bool pull(const Copier& out, char uplo, long n, const T* a, const ExchangeSetup& setup,
          const EngineLayout& layout, const EngineComm& comm, T* a_cols, int threads,
          int populate_threads, long segment, BeforeWrites& before_writes, PhaseClock& clock,
          PhaseTimes* times) {
  const Images im = images_of(setup);
  const long d = Element<T>::doubles, ld = im.ld[setup.me];
  const long columns = total(im.runs[setup.me].cols);
  const WindowRounds rounds =
      plan_window_rounds(im.most_columns, im.most_ld * d, segment, 8L * setup.size);
  const NodeWindow* shared = node_window(
      comm.caller, window_request(rounds, columns, ld * d, layout, comm.engine_rank, d, segment),
      populate_threads, segment);
  if (!shared) return false;
  const NodeWindow& window = *shared;
  const TriangleWriter<T> writer(out, uplo, a, setup, im.runs[setup.me], ld);
  const long parts = parts_for(threads, rounds.groups);
  clock.lap(&PhaseTimes::plan);

  copy_in_rounds(
      rounds, threads, window, comm.caller,
      [&](long r) { return writer.round(rounds, r, parts, segment_of<T>(window, setup.me)); },
      [&](long r) {
        before_writes();
        return column_reads(out, uplo, n, im, rounds, r, window, layout, comm, setup.me, a_cols,
                            threads, times);
      },
      clock, times);
  return true;
}

}  // namespace

template <class T>
bool block_cyclic_to_engine_on_node(const ExchangeOptions& options, char uplo, long n, const T* a,
                                    const ExchangeSetup& setup, const EngineLayout& layout,
                                    const EngineComm& comm, T* a_cols, int threads,
                                    BeforeWrites& before_writes, PhaseClock& clock,
                                    PhaseTimes* times) {
  const Copier out{options.streaming_stores};
  const long segment = segment_doubles(options);
  const int populate = options.window_threads(threads);
  return options.node_memory == NodeMemory::push
             ? push(out, uplo, n, a, setup, layout, comm, a_cols, threads, populate, segment,
                    before_writes, clock, times)
             : pull(out, uplo, n, a, setup, layout, comm, a_cols, threads, populate, segment,
                    before_writes, clock, times);
}

template bool block_cyclic_to_engine_on_node(const ExchangeOptions&, char, long, const double*,
                                             const ExchangeSetup&, const EngineLayout&,
                                             const EngineComm&, double*, int, BeforeWrites&,
                                             PhaseClock&, PhaseTimes*);
template bool block_cyclic_to_engine_on_node(const ExchangeOptions&, char, long,
                                             const std::complex<double>*, const ExchangeSetup&,
                                             const EngineLayout&, const EngineComm&,
                                             std::complex<double>*, int, BeforeWrites&, PhaseClock&,
                                             PhaseTimes*);

}  // namespace pipevd
