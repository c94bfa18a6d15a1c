// The node window in rounds (redistribute/window_rounds.hpp): with segments of a few KB a call
// takes many rounds, and still gives the engine's columns and the caller's Z bit for bit as the
// message exchange gives them and as the matrix has them, both ways, pushed and pulled, real and
// complex, both triangles, odd n and blocks, submatrices, fewer engine ranks than callers; the
// segment held never grows past the limit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <complex>
#include <string>
#include <vector>

#include "redistribute/block_cyclic_to_engine.hpp"
#include "redistribute/element.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_partition.hpp"
#include "redistribute/engine_to_block_cyclic.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/window_rounds.hpp"
#include "tests/redistribute_support.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/redistribution_case.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd::test {
namespace {

// Every column of `count` exactly once over the rounds, in its round's block, the blocks within
// the segment.
void expect_rounds_cover(const WindowRounds& w, long count, long most, long column, long segment) {
  std::vector<int> seen(static_cast<size_t>(count), 0);
  for (long r = 0; r < w.rounds; ++r)
    w.for_each_group(r, count, [&](long first, long len, long at) {
      for (long c = first; c < first + len; ++c) ++seen[static_cast<size_t>(c)];
      EXPECT_GE(at - w.block(r), 0);
      EXPECT_LE(at - w.block(r) + len, w.columns());
    });
  for (long c = 0; c < count; ++c) EXPECT_EQ(seen[static_cast<size_t>(c)], 1) << "column " << c;
  const long held = (w.halves ? 2 : 1) * w.columns() * column;
  if (most * column <= segment) EXPECT_EQ(w.rounds, 1);
  EXPECT_LE(held, std::max(segment, 2 * column));  // the floor: two columns
}

TEST(WindowRounds, EveryColumnOnceAndSegmentsWithinTheLimit) {
  for (long most : {1L, 2L, 7L, 64L, 97L, 1000L})
    for (long column : {1L, 3L, 100L})
      for (long segment : {1L, 5L, 200L, 1000L, 4096L, 1L << 20})
        for (long spread : {1L, 4L, 32L}) {
          SCOPED_TRACE("most " + std::to_string(most) + " column " + std::to_string(column) +
                       " segment " + std::to_string(segment) + " spread " + std::to_string(spread));
          const WindowRounds w = plan_window_rounds(most, column, segment, spread);
          for (long count : {0L, 1L, most / 2, most})
            expect_rounds_cover(w, count, most, column, segment);
        }
}

TEST(CutRuns, KeepsEveryIndexInOrder) {
  const std::vector<pipevd::Run> runs = {{0, 0, 5}, {10, 5, 1}, {20, 6, 13}};
  for (long parts : {1L, 2L, 3L, 7L, 19L, 40L}) {
    std::vector<long> globals;
    long pieces = 0;
    for (const std::vector<pipevd::Run>& piece : cut_runs(runs, parts)) {
      ++pieces;
      EXPECT_FALSE(piece.empty());
      for (const pipevd::Run& r : piece) {
        EXPECT_EQ(r.global - r.local, r.global < 10 ? 0 : r.global < 20 ? 5 : 14);
        for (long t = 0; t < r.len; ++t) globals.push_back(r.global + t);
      }
    }
    EXPECT_EQ(pieces, std::min(parts, 19L));
    std::vector<long> want;
    for (const pipevd::Run& r : runs)
      for (long t = 0; t < r.len; ++t) want.push_back(r.global + t);
    EXPECT_EQ(globals, want);
  }
}

using Case = RedistributionCase;

// Entries: real ones of the general test matrix, complex ones with an imaginary part off the
// diagonal (where a Hermitian matrix's is 0).
template <class T>
T value(long i, long j);
template <>
double value<double>(long i, long j) {
  return general_entry(i, j);
}
template <>
std::complex<double> value<std::complex<double>>(long i, long j) {
  return {general_entry(i, j), i == j ? 0.0 : general_entry(j + 7, i)};
}
// The full symmetric (Hermitian) matrix whose lower triangle is value().
template <class T>
T full(long i, long j) {
  return i >= j ? value<T>(i, j) : conjugate(value<T>(j, i));
}

// A block-cyclic operand of T: the shape of a TestMatrix, its own storage.
template <class T>
struct Operand {
  Operand(const GridInfo& grid, const BlockCyclicLayout& layout) : shape(grid, layout) {
    local.assign(shape.local.size(), T(-31.5));
  }
  TestMatrix shape;
  std::vector<T> local;
};

template <class T>
Operand<T> make_a(const GridInfo& grid, const Case& c) {
  Operand<T> a(grid, {static_cast<int>(c.ia - 1 + c.n + 2), static_cast<int>(c.ja - 1 + c.n + 1),
                      c.mb, c.nb, c.rsrc % grid.nprow, c.csrc % grid.npcol, c.lld_extra});
  const bool lower = c.uplo == 'L';
  for (int jl = 0; jl < a.shape.local_cols; ++jl)
    for (int il = 0; il < a.shape.local_rows; ++il) {
      const long si = a.shape.row_of(il) - (c.ia - 1), sj = a.shape.col_of(jl) - (c.ja - 1);
      const bool inside = si >= 0 && si < c.n && sj >= 0 && sj < c.n;
      a.local[il + static_cast<size_t>(jl) * a.shape.lld()] =
          inside && (lower ? si >= sj : si <= sj) ? full<T>(si, sj) : T(nan_value());
    }
  return a;
}

// The engine's columns through `opt`; every entry checked against the matrix.
template <class T>
std::vector<T> to_engine(const GridInfo& grid, const Case& c, const EngineLayout& layout,
                         const EngineComm& comm, const ExchangeOptions& opt) {
  Operand<T> a = make_a<T>(grid, c);
  const int e = comm.engine_rank;
  std::vector<T> cols(e >= 0 ? static_cast<size_t>(c.n * layout.width(e)) : 0, T(-4242.0));
  block_cyclic_to_engine(c.uplo, c.n, a.local.data(), c.ia, c.ja, a.shape.desc, layout, comm,
                         cols.empty() ? nullptr : cols.data(), opt);
  long wrong = 0;
  for (long j = 0; e >= 0 && j < layout.width(e); ++j)
    for (long i = 0; i < c.n; ++i)
      if (!(cols[i + j * c.n] == full<T>(i, layout.col_begin[e] + j))) ++wrong;
  EXPECT_EQ(wrong, 0) << "engine entries that differ from the matrix";
  return cols;
}

// The caller's Z (sentinel around the submatrix) through `opt` from engine rows of value();
// every local entry checked.
template <class T>
std::vector<T> from_engine(const GridInfo& grid, const Case& c, const EngineLayout& layout,
                           const EngineComm& comm, const ExchangeOptions& opt) {
  Operand<T> z(grid, {static_cast<int>(c.ia - 1 + c.n + 1), static_cast<int>(c.ja - 1 + c.n + 3),
                      c.nb, c.mb, c.csrc % grid.nprow, c.rsrc % grid.npcol, c.lld_extra + 1});
  const int e = comm.engine_rank;
  std::vector<T> rows;
  if (e >= 0) {
    const long r0 = layout.row_begin[e], h = layout.height(e), ld = std::max(1L, h);
    rows.resize(static_cast<size_t>(ld * c.n));
    for (long j = 0; j < c.n; ++j)
      for (long i = 0; i < h; ++i) rows[i + j * ld] = value<T>(r0 + i, j);
  }
  engine_to_block_cyclic(c.n, rows.empty() ? nullptr : rows.data(), layout, comm, z.local.data(),
                         c.ia, c.ja, z.shape.desc, opt);
  long wrong = 0;
  for (int jl = 0; jl < z.shape.local_cols; ++jl)
    for (int il = 0; il < z.shape.local_rows; ++il) {
      const long si = z.shape.row_of(il) - (c.ia - 1), sj = z.shape.col_of(jl) - (c.ja - 1);
      const bool inside = si >= 0 && si < c.n && sj >= 0 && sj < c.n;
      if (!(z.local[il + static_cast<size_t>(jl) * z.shape.lld()] ==
            (inside ? value<T>(si, sj) : T(-31.5))))
        ++wrong;
    }
  EXPECT_EQ(wrong, 0) << "local entries of Z that differ";
  return z.local;
}

EngineLayout layout_for(long n, int engines, int variant) {
  EngineLayout l;
  l.n = n;
  l.col_begin = variant % 2 ? uneven_partition(n, engines) : even_partition(n, engines, 3);
  l.row_begin = variant % 2 ? even_partition(n, engines, 5) : uneven_partition(n, engines);
  return l;
}

const std::vector<Case> kCases = {
    {97, 7, 5, 1, 0, 3, 2, 1, 'L'},   {131, 3, 9, 0, 1, 1, 4, 0, 'U'},
    {61, 13, 13, 1, 1, 5, 5, 2, 'U'}, {45, 1, 11, 0, 0, 2, 9, 0, 'L'},
    {2, 3, 1, 1, 1, 1, 1, 0, 'L'},
};

// Segment limits, growing: the window only grows, so each check holds for the limit it was made
// under. 3000 bytes is under two columns of the larger complex cases (the floor applies there).
const long kLargestN = 131;
const std::vector<long> kLimits = {3000, 8192, 40000, 64L << 20};

long whole_pages(long bytes) {
  const long page = sysconf(_SC_PAGESIZE);
  return (bytes + page - 1) / page * page;
}

template <class T>
void check_rounds_equal_messages(int nprow, int npcol, char order) {
  BlacsGrid blacs(nprow, npcol, order);
  const GridInfo grid = GridInfo::of(blacs);
  const int size = nprow * npcol;
  ExchangeOptions messages;
  messages.min_typed_segment = 1L << 40;
  const long floor = 2 * kLargestN * static_cast<long>(sizeof(T));
  for (int g : {size, std::max(1, size - 1)}) {
    const EngineComm& comm = engine_comm_for(grid.ictxt, g);
    release_node_window(comm.caller);
    for (long limit : kLimits) {
      int variant = g;
      for (const Case& c : kCases) {
        const EngineLayout layout = layout_for(c.n, g, variant++);
        SCOPED_TRACE(describe(c) + " grid " + std::to_string(nprow) + "x" + std::to_string(npcol) +
                     " engines " + std::to_string(g) + " limit " + std::to_string(limit) +
                     (sizeof(T) > 8 ? " complex" : " real"));
        const std::vector<T> cols_ref = to_engine<T>(grid, c, layout, comm, messages);
        const std::vector<T> z_ref = from_engine<T>(grid, c, layout, comm, messages);
        for (NodeMemory way : {NodeMemory::push, NodeMemory::pull})
          for (int threads : {1, 3}) {
            ExchangeOptions node;
            node.node_memory = way;
            node.threads = threads;
            node.node_segment_bytes = limit;
            const std::string how = std::string(way == NodeMemory::push ? "push, " : "pull, ") +
                                    std::to_string(threads) + " threads";
            EXPECT_TRUE(bitwise_equal(to_engine<T>(grid, c, layout, comm, node), cols_ref)) << how;
            EXPECT_TRUE(bitwise_equal(from_engine<T>(grid, c, layout, comm, node), z_ref)) << how;
            // Within the limit, or two columns of the largest case where it is below them, in
            // whole pages (what the MPI gives).
            EXPECT_LE(8 * node_window_segment(comm.caller), whole_pages(std::max(limit, floor)))
                << how;
          }
      }
    }
  }
}

TEST(WindowRounds, TinySegmentsGiveWhatMessagesGiveReal) {
  const GridShape s = squarest_grid(world_size());
  check_rounds_equal_messages<double>(s.nprow, s.npcol, 'C');
  check_rounds_equal_messages<double>(world_size(), 1, 'R');
}

TEST(WindowRounds, TinySegmentsGiveWhatMessagesGiveComplex) {
  const GridShape s = squarest_grid(world_size());
  check_rounds_equal_messages<std::complex<double>>(s.nprow, s.npcol, 'R');
  check_rounds_equal_messages<std::complex<double>>(1, world_size(), 'C');
}

// The limits above do take many rounds, in several groups each where a block holds several
// columns: the first case's real way in, pushed (one engine rank) and pulled (4 ranks).
TEST(WindowRounds, TinyLimitsTakeManyRounds) {
  for (long limit : {3000L, 8192L}) {
    const WindowRounds push = plan_window_rounds(97, 97, limit / 8, 1);
    EXPECT_GE(push.rounds, 10) << limit;
    const WindowRounds pull = plan_window_rounds(49, 49, limit / 8, 8 * 4);
    EXPECT_GE(pull.rounds, 4) << limit;
    if (limit > 3000) EXPECT_GT(pull.groups, 1);
  }
}

}  // namespace
}  // namespace pipevd::test
