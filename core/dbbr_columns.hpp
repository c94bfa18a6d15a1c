// DBBR's column distribution: which engine rank holds each column of the n x n matrix during the
// band reduction, and where in its buffer. Each rank stores its columns concatenated in the order
// of their global index, full height, leading dimension n.
//
// Blockwise: the engine layout's contiguous columns, as the redistribution delivers them. Every
// panel synchronises all ranks, so it waits for the rank with the most columns right of it: the
// last rank keeps n / E of them to the end while rank 0 runs out after the first 1/E of the
// reduction. Cyclic: outer block t on rank t mod E, so that at any panel every rank holds about
// (n - j) / E + k of the trailing matrix's columns.
#pragma once
#include <vector>

#include "base/engine_layout.hpp"

namespace pipevd {

// Columns [begin, end) held by rank `owner` as its local columns [local, local + width()).
struct ColumnSegment {
  int owner = 0;
  long begin = 0, end = 0, local = 0;
  long width() const { return end - begin; }
  bool operator==(const ColumnSegment& o) const {
    return owner == o.owner && begin == o.begin && end == o.end && local == o.local;
  }
};

class DbbrColumns {
 public:
  // Rank e holds the layout's columns [col_begin[e], col_begin[e+1]).
  static DbbrColumns blockwise(const EngineLayout& layout);
  // Outer block t, columns [t kb, min((t + 1) kb, n)), on rank t mod ranks.
  static DbbrColumns cyclic(long n, int ranks, long kb);

  long n() const { return n_; }
  int ranks() const { return static_cast<int>(by_rank_.size()); }
  // Every segment in global column order; consecutive columns of one rank form one segment.
  const std::vector<ColumnSegment>& segments() const { return all_; }
  // The rank's segments, in global (and local) column order.
  const std::vector<ColumnSegment>& segments(int rank) const { return by_rank_[rank]; }
  // The rank's segments cut to their columns >= c (local moved along).
  std::vector<ColumnSegment> segments_from(int rank, long c) const;
  // How many columns the rank holds: all of them, and those >= c.
  long width(int rank) const;
  long width_from(int rank, long c) const;
  // The rank holding column c (0 <= c < n), and where in its buffer.
  int owner(long c) const { return segment_of(c).owner; }
  long local(long c) const {
    const ColumnSegment& s = segment_of(c);
    return s.local + (c - s.begin);
  }

  bool operator==(const DbbrColumns& o) const { return n_ == o.n_ && by_rank_ == o.by_rank_; }
  bool operator!=(const DbbrColumns& o) const { return !(*this == o); }

 private:
  // From (owner, begin, end) runs covering [0, n) in order: merges, numbers the local columns.
  DbbrColumns(long n, int ranks, const std::vector<ColumnSegment>& runs);
  const ColumnSegment& segment_of(long c) const;

  long n_ = 0;
  std::vector<ColumnSegment> all_;
  std::vector<std::vector<ColumnSegment>> by_rank_;
};

// Columns [begin, end) held by rank `from` in one distribution (local columns from `from_local`)
// and by rank `to` in another (from `to_local`).
struct ColumnMove {
  int from = 0, to = 0;
  long begin = 0, end = 0, from_local = 0, to_local = 0;
  long width() const { return end - begin; }
};

// The runs in which two distributions of the same n columns agree on both holders, in global
// column order: what moves from one to the other (where from != to) and what stays.
std::vector<ColumnMove> column_moves(const DbbrColumns& from, const DbbrColumns& to);

}  // namespace pipevd
