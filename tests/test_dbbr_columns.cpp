// DBBR's column distributions (core/dbbr_columns.hpp): blockwise and cyclic over 1 to 4 ranks, n
// a multiple of neither b nor k and smaller than E k, hold every column exactly once, each rank's
// segments in global order with dense local columns, owner() and local() agreeing with the
// segments; cyclic puts outer block t on rank t mod E; column_moves between two distributions
// covers every column once, each run inside one segment of both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/dbbr.hpp"
#include "core/dbbr_columns.hpp"
#include "core/engine_plan.hpp"

namespace pipevd {
namespace {

// Every invariant of a distribution of n columns over `ranks` ranks.
void expect_valid(const DbbrColumns& c, long n, int ranks) {
  ASSERT_EQ(c.n(), n);
  ASSERT_EQ(c.ranks(), ranks);
  std::vector<int> held(n, 0);
  long total = 0;
  for (int q = 0; q < ranks; ++q) {
    long local = 0, last_end = -1;
    for (const ColumnSegment& s : c.segments(q)) {
      EXPECT_EQ(s.owner, q);
      EXPECT_GT(s.width(), 0);
      EXPECT_GT(s.begin, last_end) << "rank " << q << "'s segments out of order or touching";
      EXPECT_EQ(s.local, local) << "local columns not dense";
      for (long col = s.begin; col < s.end; ++col) {
        ++held[col];
        EXPECT_EQ(c.owner(col), q);
        EXPECT_EQ(c.local(col), s.local + (col - s.begin));
      }
      local += s.width();
      last_end = s.end;
    }
    EXPECT_EQ(c.width(q), local);
    total += local;
    for (long from : {0L, n / 3, n - 1, n}) {
      long expect = 0;
      for (long col = from; col < n; ++col) expect += c.owner(col) == q ? 1 : 0;
      EXPECT_EQ(c.width_from(q, from), expect) << "from " << from;
      long cut = 0;
      for (const ColumnSegment& s : c.segments_from(q, from)) {
        EXPECT_GE(s.begin, from);
        EXPECT_EQ(c.local(s.begin), s.local);
        cut += s.width();
      }
      EXPECT_EQ(cut, expect);
    }
  }
  EXPECT_EQ(total, n);
  for (long col = 0; col < n; ++col) EXPECT_EQ(held[col], 1) << "column " << col;
  long next = 0;
  for (const ColumnSegment& s : c.segments()) {
    EXPECT_EQ(s.begin, next) << "segments leave a gap";
    next = s.end;
  }
  EXPECT_EQ(next, n);
  EXPECT_THROW(c.owner(n), std::out_of_range);
  EXPECT_THROW(c.owner(-1), std::out_of_range);
}

TEST(DbbrColumns, CyclicDealsOuterBlocksInTurn) {
  for (int ranks = 1; ranks <= 4; ++ranks)
    for (auto [n, b, k] :
         {std::tuple{301L, 8L, 32L}, std::tuple{1000L, 8L, 32L}, std::tuple{1537L, 8L, 40L},
          std::tuple{70L, 8L, 32L}, std::tuple{5L, 8L, 32L}, std::tuple{1L, 4L, 4L}}) {
      SCOPED_TRACE("ranks=" + std::to_string(ranks) + " n=" + std::to_string(n) +
                   " k=" + std::to_string(k));
      const EngineLayout L = plan_engine_layout(n, ranks, b);
      DbbrOptions opt{b, k};
      opt.cyclic_blocks = true;
      const DbbrColumns c = dbbr_columns(L, opt);
      expect_valid(c, n, ranks);
      const long bw = effective_bandwidth(n, b), kb = (k + bw - 1) / bw * bw;
      for (long col = 0; col < n; ++col)
        ASSERT_EQ(c.owner(col), (col / kb) % ranks) << "column " << col;
      // Consecutive blocks of one rank (one rank only) are one segment.
      if (ranks == 1) EXPECT_EQ(c.segments(0).size(), 1u);
      if (ranks > 1)
        for (const ColumnSegment& s : c.segments()) EXPECT_LE(s.width(), kb);
      expect_valid(DbbrColumns::blockwise(L), n, ranks);
      if (ranks == 1) EXPECT_EQ(c, DbbrColumns::blockwise(L));
      if (ranks > 1 && n > kb) EXPECT_NE(c, DbbrColumns::blockwise(L));
    }
}

// The blockwise distribution is the layout's, zero-width ranks included.
TEST(DbbrColumns, BlockwiseIsTheLayout) {
  EngineLayout L;
  L.n = 100;
  L.col_begin = {0, 0, 40, 40, 100};
  L.row_begin = {0, 25, 50, 75, 100};
  const DbbrColumns c = DbbrColumns::blockwise(L);
  expect_valid(c, 100, 4);
  EXPECT_TRUE(c.segments(0).empty());
  EXPECT_TRUE(c.segments(2).empty());
  ASSERT_EQ(c.segments(3).size(), 1u);
  EXPECT_EQ(c.segments(3)[0].begin, 40);
  EXPECT_EQ(c.local(73), 33);
  EXPECT_EQ(dbbr_columns(L, DbbrOptions{4, 8}), c);
}

// The moves between blockwise and cyclic and back: in order, gapless, each inside one segment of
// both distributions, the holders and local columns as the two distributions say.
TEST(DbbrColumns, MovesCoverEveryColumnOnce) {
  for (int ranks = 1; ranks <= 4; ++ranks)
    for (long n : {1L, 37L, 301L, 1537L}) {
      SCOPED_TRACE("ranks=" + std::to_string(ranks) + " n=" + std::to_string(n));
      const EngineLayout L = plan_engine_layout(n, ranks, 8);
      const DbbrColumns blockwise = DbbrColumns::blockwise(L),
                        cyclic = DbbrColumns::cyclic(n, ranks, 32);
      for (const auto& [from, to] :
           {std::pair{&blockwise, &cyclic}, std::pair{&cyclic, &blockwise}}) {
        long next = 0;
        for (const ColumnMove& mv : column_moves(*from, *to)) {
          EXPECT_EQ(mv.begin, next);
          ASSERT_GT(mv.width(), 0);
          for (long col : {mv.begin, mv.end - 1}) {
            EXPECT_EQ(from->owner(col), mv.from);
            EXPECT_EQ(to->owner(col), mv.to);
            EXPECT_EQ(from->local(col), mv.from_local + (col - mv.begin));
            EXPECT_EQ(to->local(col), mv.to_local + (col - mv.begin));
          }
          next = mv.end;
        }
        EXPECT_EQ(next, n);
      }
    }
}

}  // namespace
}  // namespace pipevd
