#include "core/dbbr_columns.hpp"

#include <algorithm>
#include <stdexcept>

namespace pipevd {

DbbrColumns::DbbrColumns(long n, int ranks, const std::vector<ColumnSegment>& runs)
    : n_(n), by_rank_(std::max(0, ranks)) {
  std::vector<long> next_local(by_rank_.size(), 0);
  for (const ColumnSegment& r : runs) {
    if (r.end <= r.begin) continue;
    if (!all_.empty() && all_.back().owner == r.owner) {
      all_.back().end = r.end;
      by_rank_[r.owner].back().end = r.end;
    } else {
      all_.push_back({r.owner, r.begin, r.end, next_local[r.owner]});
      by_rank_[r.owner].push_back(all_.back());
    }
    next_local[r.owner] += r.width();
  }
}

DbbrColumns DbbrColumns::blockwise(const EngineLayout& layout) {
  std::vector<ColumnSegment> runs;
  for (int e = 0; e < layout.engine_ranks(); ++e)
    runs.push_back({e, layout.col_begin[e], layout.col_begin[e + 1], 0});
  return DbbrColumns(layout.n, layout.engine_ranks(), runs);
}

DbbrColumns DbbrColumns::cyclic(long n, int ranks, long kb) {
  if (ranks < 1 || kb < 1) throw std::invalid_argument("cyclic DBBR columns: ranks, kb < 1");
  std::vector<ColumnSegment> runs;
  for (long t = 0; t * kb < n; ++t)
    runs.push_back({static_cast<int>(t % ranks), t * kb, std::min(n, (t + 1) * kb), 0});
  return DbbrColumns(n, ranks, runs);
}

std::vector<ColumnSegment> DbbrColumns::segments_from(int rank, long c) const {
  std::vector<ColumnSegment> cut;
  for (ColumnSegment s : by_rank_[rank]) {
    if (s.end <= c) continue;
    if (s.begin < c) {
      s.local += c - s.begin;
      s.begin = c;
    }
    cut.push_back(s);
  }
  return cut;
}

long DbbrColumns::width(int rank) const { return width_from(rank, 0); }

long DbbrColumns::width_from(int rank, long c) const {
  long w = 0;
  for (const ColumnSegment& s : by_rank_[rank]) w += std::max(0L, s.end - std::max(s.begin, c));
  return w;
}

const ColumnSegment& DbbrColumns::segment_of(long c) const {
  // The last segment beginning at or before c.
  const auto it = std::upper_bound(all_.begin(), all_.end(), c,
                                   [](long col, const ColumnSegment& s) { return col < s.begin; });
  if (c < 0 || c >= n_ || it == all_.begin()) throw std::out_of_range("DBBR column out of range");
  return *(it - 1);
}

std::vector<ColumnMove> column_moves(const DbbrColumns& from, const DbbrColumns& to) {
  if (from.n() != to.n()) throw std::invalid_argument("column_moves: distributions of other n");
  std::vector<ColumnMove> moves;
  const std::vector<ColumnSegment>&f = from.segments(), &t = to.segments();
  std::size_t i = 0, j = 0;
  for (long c = 0; c < from.n();) {
    while (f[i].end <= c) ++i;
    while (t[j].end <= c) ++j;
    const long end = std::min(f[i].end, t[j].end);
    moves.push_back({f[i].owner, t[j].owner, c, end, f[i].local + (c - f[i].begin),
                     t[j].local + (c - t[j].begin)});
    c = end;
  }
  return moves;
}

}  // namespace pipevd
