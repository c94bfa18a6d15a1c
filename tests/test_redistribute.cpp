// Block-cyclic <-> engine layout: the engine receives exactly the full symmetric matrix (built
// from the named triangle only, never the NaN in the other one), Z comes back exactly, both
// equal ScaLAPACK's PDGEMR2D between the same layouts, and a round trip returns the matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "redistribute/block_cyclic_to_engine.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_partition.hpp"
#include "redistribute/engine_to_block_cyclic.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/stream_copy.hpp"
#include "redistribute/tile_transpose.hpp"
#include "tests/redistribute_support.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/redistribution_case.hpp"

namespace pipevd::test {
namespace {

constexpr unsigned kSeed = 17;

using Case = RedistributionCase;

std::string describe(const Case& c, int nprow, int npcol, char order, int g) {
  return describe(c) + " grid=" + std::to_string(nprow) + "x" + std::to_string(npcol) + order +
         " g=" + std::to_string(g);
}

// The cases every grid shape runs; n = 500 only where `large` is set (the squarest grid).
std::vector<Case> cases(bool large) {
  std::vector<Case> c = {
      {1, 1, 1, 0, 0, 1, 1, 0, 'L'},     {2, 2, 3, 1, 1, 1, 1, 0, 'U'},
      {31, 3, 7, 1, 0, 2, 3, 2, 'L'},    {31, 7, 2, 0, 1, 4, 1, 0, 'U'},
      {97, 32, 32, 1, 1, 1, 1, 3, 'L'},  {97, 1, 64, 0, 1, 5, 2, 0, 'U'},
      {97, 64, 3, 1, 0, 33, 65, 1, 'L'}, {97, 7, 7, 1, 1, 8, 8, 0, 'U'},
      {97, 2, 1, 0, 0, 3, 2, 0, 'L'},
  };
  if (large) {
    c.push_back({500, 32, 64, 1, 0, 1, 1, 0, 'L'});
    c.push_back({500, 64, 64, 1, 1, 65, 3, 2, 'U'});
  }
  return c;
}

// A with the case's triangle filled from the symmetric test matrix and NaN everywhere else
// (the other triangle and everything outside the submatrix).
TestMatrix make_a(const GridInfo& grid, const Case& c) {
  TestMatrix a(grid, {static_cast<int>(c.ia - 1 + c.n + 2), static_cast<int>(c.ja - 1 + c.n + 1),
                      c.mb, c.nb, c.rsrc % grid.nprow, c.csrc % grid.npcol, c.lld_extra});
  const bool lower = c.uplo == 'L';
  a.fill([&](long i, long j) {
    const long si = i - (c.ia - 1), sj = j - (c.ja - 1);
    const bool inside = si >= 0 && si < c.n && sj >= 0 && sj < c.n;
    if (!inside || (lower ? si < sj : si > sj)) return nan_value();
    return random_symmetric_entry(si, sj, kSeed);
  });
  return a;
}

// Z's descriptor for a case: the same shape of global matrix, other blocking and offsets.
BlockCyclicLayout z_layout(const GridInfo& grid, const Case& c) {
  return {static_cast<int>(c.ia - 1 + c.n + 1),
          static_cast<int>(c.ja - 1 + c.n + 3),
          c.nb,
          c.mb,
          c.csrc % grid.nprow,
          c.rsrc % grid.npcol,
          c.lld_extra + 1};
}

EngineLayout layout_for(long n, int engines, int variant) {
  EngineLayout l;
  l.n = n;
  if (variant % 2 == 0) {
    l.col_begin = even_partition(n, engines, 32);
    l.row_begin = uneven_partition(n, engines);
  } else {
    l.col_begin = uneven_partition(n, engines);
    l.row_begin = even_partition(n, engines, 3);
  }
  return l;
}

// Runs block_cyclic_to_engine and checks every received entry; returns a_cols.
std::vector<double> check_to_engine(const GridInfo& grid, const Case& c, const EngineLayout& layout,
                                    const EngineComm& comm, const ExchangeOptions& opt = {}) {
  TestMatrix a = make_a(grid, c);
  std::vector<double> a_cols;
  if (comm.engine_rank >= 0)
    a_cols.assign(static_cast<size_t>(c.n) * layout.width(comm.engine_rank), -4242.0);
  block_cyclic_to_engine(c.uplo, c.n, a.local.data(), c.ia, c.ja, a.desc, layout, comm,
                         a_cols.empty() ? nullptr : a_cols.data(), opt);
  if (comm.engine_rank >= 0) {
    const long c0 = layout.col_begin[comm.engine_rank];
    long wrong = 0, nans = 0;
    for (long j = 0; j < layout.width(comm.engine_rank); ++j)
      for (long i = 0; i < c.n; ++i) {
        const double got = a_cols[i + j * c.n];
        if (std::isnan(got)) ++nans;
        if (!(got == random_symmetric_entry(i, c0 + j, kSeed))) ++wrong;
      }
    EXPECT_EQ(nans, 0) << "NaN of the other triangle reached the engine";
    EXPECT_EQ(wrong, 0) << "entries that differ from the symmetric matrix";
  }
  return a_cols;
}

// Runs engine_to_block_cyclic with z_rows(i, j) = general_entry(i, j) and checks the caller's Z
// inside the submatrix and its untouched surroundings (sentinel), LLD padding included.
TestMatrix check_from_engine(const GridInfo& grid, const Case& c, const EngineLayout& layout,
                             const EngineComm& comm, const ExchangeOptions& opt = {}) {
  const double sentinel = -31.5;
  TestMatrix z(grid, z_layout(grid, c));
  std::fill(z.local.begin(), z.local.end(), sentinel);
  std::vector<double> rows;
  if (comm.engine_rank >= 0) {
    const long r0 = layout.row_begin[comm.engine_rank], h = layout.height(comm.engine_rank);
    rows.resize(static_cast<size_t>(std::max(1L, h)) * c.n);
    for (long j = 0; j < c.n; ++j)
      for (long i = 0; i < h; ++i) rows[i + j * std::max(1L, h)] = general_entry(r0 + i, j);
  }
  engine_to_block_cyclic(c.n, rows.empty() ? nullptr : rows.data(), layout, comm, z.local.data(),
                         c.ia, c.ja, z.desc, opt);
  long wrong = 0;
  const int lld = z.desc[8];
  for (int jl = 0; jl < std::max(1, z.local_cols); ++jl)
    for (int il = 0; il < lld; ++il) {
      double expect = sentinel;
      if (il < z.local_rows && jl < z.local_cols) {
        const long si = z.row_of(il) - (c.ia - 1), sj = z.col_of(jl) - (c.ja - 1);
        if (si >= 0 && si < c.n && sj >= 0 && sj < c.n) expect = general_entry(si, sj);
      }
      if (!(z.local[il + static_cast<size_t>(jl) * lld] == expect)) ++wrong;
    }
  EXPECT_EQ(wrong, 0) << "local entries of Z that differ";
  return z;
}

class Redistribute : public ::testing::Test {
 protected:
  int size = world_size();
};

// Every grid shape and order, every case, all ranks engines; layouts alternate even/uneven.
TEST_F(Redistribute, ToEngineAndBackOnEveryGrid) {
  const auto shapes = all_grid_shapes(size);
  for (const auto& [nprow, npcol] : shapes)
    for (char order : {'R', 'C'}) {
      BlacsGrid blacs(nprow, npcol, order);
      const GridInfo grid = GridInfo::of(blacs);
      const bool squarest = nprow == squarest_grid(size).nprow;
      int variant = 0;
      for (const Case& c : cases(squarest && order == 'R')) {
        SCOPED_TRACE(describe(c, nprow, npcol, order, size));
        const EngineComm& comm = engine_comm_for(grid.ictxt, size);
        const EngineLayout layout = layout_for(c.n, comm.engine_ranks(), variant++);
        check_to_engine(grid, c, layout, comm);
        check_from_engine(grid, c, layout, comm);
      }
    }
}

// More caller ranks than engine ranks: the others only send and receive.
TEST_F(Redistribute, FewerEngineRanksThanCallerRanks) {
  const auto shape = squarest_grid(size);
  BlacsGrid blacs(shape.nprow, shape.npcol, 'C');
  const GridInfo grid = GridInfo::of(blacs);
  for (int g = 1; g < size; ++g) {
    const EngineComm& comm = engine_comm_for(grid.ictxt, g);
    ASSERT_EQ(comm.engine_ranks(), g);
    int variant = g;
    for (const Case& c : cases(false)) {
      SCOPED_TRACE(describe(c, shape.nprow, shape.npcol, 'C', g));
      const EngineLayout layout = layout_for(c.n, g, variant++);
      check_to_engine(grid, c, layout, comm);
      check_from_engine(grid, c, layout, comm);
    }
  }
}

// Every way of moving the messages gives the same result: packed in rounds of Alltoallw with tiny
// messages (the path for counts past 2^31), always described in place by datatypes, always packed.
TEST_F(Redistribute, EveryExchangePathGivesTheSameResult) {
  const auto shape = squarest_grid(size);
  BlacsGrid blacs(shape.nprow, shape.npcol, 'R');
  const GridInfo grid = GridInfo::of(blacs);
  const EngineComm& comm = engine_comm_for(grid.ictxt, size);
  ExchangeOptions rounds, typed, packed;
  rounds.int_limit = 0;
  rounds.max_message = 37;
  typed.min_typed_segment = 1;
  packed.min_typed_segment = 1L << 40;
  for (const ExchangeOptions& opt : {rounds, typed, packed}) {
    int variant = 0;
    for (const Case& c : cases(false)) {
      SCOPED_TRACE(describe(c, shape.nprow, shape.npcol, 'R', size) +
                   " int_limit=" + std::to_string(opt.int_limit) +
                   " min_typed_segment=" + std::to_string(opt.min_typed_segment));
      const EngineLayout layout = layout_for(c.n, comm.engine_ranks(), variant++);
      check_to_engine(grid, c, layout, comm, opt);
      check_from_engine(grid, c, layout, comm, opt);
    }
  }
}

// Packing and unpacking on threads (slices of runs, offsets from a counting pass) give the same
// bytes as one thread, on every exchange path (rounds, datatypes, packed, pipelined in chunks),
// with more caller ranks than engine ranks too; check_* compare every entry with the matrix.
TEST_F(Redistribute, ThreadsGiveTheSameResultAsOneThread) {
  const auto shape = squarest_grid(size);
  BlacsGrid blacs(shape.nprow, shape.npcol, 'C');
  const GridInfo grid = GridInfo::of(blacs);
  ExchangeOptions rounds, typed, packed, chunked, many_chunks;
  rounds.int_limit = 0;
  rounds.max_message = 37;
  typed.min_typed_segment = 1;
  packed.min_typed_segment = 1L << 40;
  chunked.chunks = 3;
  many_chunks.chunks = 50;  // more chunks than runs: empty chunks on some ranks
  for (int g : {size, std::max(1, size - 1)})
    for (ExchangeOptions opt : {rounds, typed, packed, ExchangeOptions{}, chunked, many_chunks}) {
      const EngineComm& comm = engine_comm_for(grid.ictxt, g);
      int variant = 0;
      for (const Case& c : cases(false)) {
        SCOPED_TRACE(describe(c, shape.nprow, shape.npcol, 'C', g) +
                     " min_typed_segment=" + std::to_string(opt.min_typed_segment) +
                     " chunks=" + std::to_string(opt.chunks));
        const EngineLayout layout = layout_for(c.n, g, variant++);
        opt.threads = 1;
        const std::vector<double> cols1 = check_to_engine(grid, c, layout, comm, opt);
        const std::vector<double> z1 = check_from_engine(grid, c, layout, comm, opt).local;
        for (int threads : {2, 5}) {
          opt.threads = threads;
          EXPECT_EQ(check_to_engine(grid, c, layout, comm, opt), cols1) << threads << " threads";
          EXPECT_EQ(check_from_engine(grid, c, layout, comm, opt).local, z1)
              << threads << " threads";
        }
      }
    }
}

// Through a node's shared window (all test ranks run on one node), pushed and pulled: the same
// engine columns and the same Z as the packed exchange, entry for entry (check_to_engine also
// compares each with the matrix and finds no NaN of the other triangle, check_from_engine each of
// Z with its rows and the sentinel around the submatrix), streamed or plain stores, on 1 and 3
// threads, all ranks engines and one fewer, the cases in growing and shrinking n so the kept
// window is grown and reused (and shared by both directions).
TEST_F(Redistribute, NodeMemoryGivesTheSameColumnsAsPackedMessages) {
  const auto shape = squarest_grid(size);
  BlacsGrid blacs(shape.nprow, shape.npcol, 'C');
  const GridInfo grid = GridInfo::of(blacs);
  ExchangeOptions packed, node;
  packed.min_typed_segment = 1L << 40;
  std::vector<Case> all = cases(true);
  // n a multiple of 8 with blocks of 8 and more: the engine's columns start on whole cache lines,
  // where mirrored tiles go through the streamed transpose.
  all.push_back({256, 16, 24, 0, 1, 1, 1, 0, 'L'});
  all.push_back({248, 8, 8, 1, 0, 9, 17, 5, 'U'});
  all.insert(all.end(), all.rbegin(), all.rend());
  for (int g : {size, std::max(1, size - 1)}) {
    const EngineComm& comm = engine_comm_for(grid.ictxt, g);
    int variant = 0;
    for (const Case& c : all) {
      SCOPED_TRACE(describe(c, shape.nprow, shape.npcol, 'C', g));
      const EngineLayout layout = layout_for(c.n, g, variant++);
      packed.threads = 1;
      const std::vector<double> ref = check_to_engine(grid, c, layout, comm, packed);
      const std::vector<double> z_ref = check_from_engine(grid, c, layout, comm, packed).local;
      for (NodeMemory way : {NodeMemory::push, NodeMemory::pull})
        for (bool streaming : {true, false})
          for (int threads : {1, 3}) {
            node.node_memory = way;
            node.streaming_stores = streaming;
            node.threads = threads;
            const std::string how = std::string(way == NodeMemory::push ? "push, " : "pull, ") +
                                    (streaming ? "streamed, " : "plain, ") +
                                    std::to_string(threads) + " threads";
            EXPECT_EQ(check_to_engine(grid, c, layout, comm, node), ref) << how;
            EXPECT_EQ(check_from_engine(grid, c, layout, comm, node).local, z_ref) << how;
          }
    }
  }
}

// The streamed copies (whole lines non-temporal, the rest plain) equal plain ones at every
// alignment of the destination within its cache line and for lengths around the line sizes.
// The engine's A and Z and the large messages reuse the memory of the previous call (no fresh
// pages to fault in again), each buffer of a call on its own memory; small ones are not kept.
TEST(KeptBuffer, LargeBuffersReuseTheLastCallsMemory) {
  release_kept_buffers();
  const std::size_t big = std::size_t(3) << 20, other = std::size_t(2) << 20;  // 24 and 16 MiB
  double *first_a = nullptr, *first_z = nullptr;
  for (int call = 0; call < 3; ++call) {
    KeptBuffer a(big), z(other), small(100);
    ASSERT_NE(a.data(), nullptr);
    EXPECT_NE(a.data(), z.data());
    a.data()[big - 1] = 1.0;  // every element is addressable
    z.data()[other - 1] = 2.0;
    if (call == 0) {
      first_a = a.data();
      first_z = z.data();
    } else {
      EXPECT_EQ(a.data(), first_a) << call;
      EXPECT_EQ(z.data(), first_z) << call;
    }
    KeptBuffer moved(std::move(a));
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(moved.data(), first_a);
  }
  {  // in use: a second buffer of the same size gets other memory
    KeptBuffer a(big), b(big);
    EXPECT_NE(a.data(), b.data());
  }
  release_kept_buffers();
}

TEST(StreamCopy, EqualsPlainCopiesAtEveryAlignment) {
  std::vector<double> src(64 * 80);
  for (size_t k = 0; k < src.size(); ++k) src[k] = 0.5 + static_cast<double>(k);
  for (long offset = 0; offset < 8; ++offset)
    for (long len : {0L, 1L, 7L, 31L, 32L, 33L, 39L, 40L, 64L, 100L, 517L}) {
      std::vector<double> got(600, -1.0), want(600, -1.0);
      stream_copy(got.data() + offset, src.data() + 3, len);
      stream_fence();
      std::copy(src.begin() + 3, src.begin() + 3 + len, want.begin() + offset);
      EXPECT_EQ(got, want) << "offset " << offset << " len " << len;
    }
  for (long offset = 0; offset < 8; ++offset)
    for (long ldd : {64L, 72L, 67L})
      for (long rows : {1L, 7L, 8L, 19L, 64L})
        for (long cols : {1L, 8L, 9L, 23L, 64L}) {
          std::vector<double> got(static_cast<size_t>(ldd * 70), -1.0), want = got;
          stream_transpose_tile(src.data() + 5, 70, rows, cols, got.data() + offset, ldd);
          stream_fence();
          transpose_tile(src.data() + 5, 70, rows, cols, want.data() + offset, ldd);
          EXPECT_EQ(got, want) << "offset " << offset << " ldd " << ldd << " " << rows << "x"
                               << cols;
        }
}

// The node window on a grid of some of the processes in reverse order (its own communicator), a
// column of processes (local row counts, so the pulled images' leading dimensions, differ).
TEST_F(Redistribute, NodeMemoryOnASubsetInReverseOrder) {
  const int procs = size > 1 ? size - 1 : 1;
  std::vector<int> usermap(procs);
  for (int k = 0; k < procs; ++k) usermap[k] = size - 1 - k;
  MappedGrid mapped(procs, 1, usermap);
  if (!mapped.in_grid()) return;
  const GridInfo grid = GridInfo::of(mapped);
  for (NodeMemory way : {NodeMemory::push, NodeMemory::pull})
    for (int g : {procs, std::max(1, procs - 1)}) {
      ExchangeOptions node;
      node.node_memory = way;
      node.threads = 2;
      const EngineComm& comm = engine_comm_for(mapped.ictxt, g);
      int variant = 1;
      for (const Case& c : cases(false)) {
        SCOPED_TRACE(describe(c, procs, 1, 'M', g));
        const EngineLayout layout = layout_for(c.n, g, variant++);
        check_to_engine(grid, c, layout, comm, node);
        check_from_engine(grid, c, layout, comm, node);
      }
    }
}

// Symmetric A's triangle -> engine columns; the columns transposed are the same rows of A (A is
// symmetric) -> back into a Z descriptor: Z equals the full symmetric matrix.
TEST_F(Redistribute, RoundTripRebuildsTheFullMatrix) {
  for (const auto& [nprow, npcol] : all_grid_shapes(size)) {
    BlacsGrid blacs(nprow, npcol, 'C');
    const GridInfo grid = GridInfo::of(blacs);
    const EngineComm& comm = engine_comm_for(grid.ictxt, size);
    int variant = 0;
    for (const Case& c : cases(false)) {
      SCOPED_TRACE(describe(c, nprow, npcol, 'C', size));
      EngineLayout layout = layout_for(c.n, comm.engine_ranks(), variant++);
      layout.row_begin = layout.col_begin;
      const std::vector<double> cols = check_to_engine(grid, c, layout, comm);
      std::vector<double> rows;
      if (comm.engine_rank >= 0) {
        const long w = layout.width(comm.engine_rank), ld = std::max(1L, w);
        rows.resize(static_cast<size_t>(ld) * c.n);
        for (long j = 0; j < w; ++j)
          for (long i = 0; i < c.n; ++i) rows[j + i * ld] = cols[i + j * c.n];
      }
      TestMatrix z(grid, z_layout(grid, c));
      engine_to_block_cyclic(c.n, rows.empty() ? nullptr : rows.data(), layout, comm,
                             z.local.data(), c.ia, c.ja, z.desc);
      // Every entry of the submatrix, wherever it lives, is the symmetric matrix's.
      long wrong = 0, seen = 0;
      for (int jl = 0; jl < z.local_cols; ++jl)
        for (int il = 0; il < z.local_rows; ++il) {
          const long si = z.row_of(il) - (c.ia - 1), sj = z.col_of(jl) - (c.ja - 1);
          if (si < 0 || si >= c.n || sj < 0 || sj >= c.n) continue;
          ++seen;
          if (!(z.local[il + static_cast<size_t>(jl) * z.lld()] ==
                random_symmetric_entry(si, sj, kSeed)))
            ++wrong;
        }
      MPI_Allreduce(MPI_IN_PLACE, &seen, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(seen, c.n * c.n);
      EXPECT_EQ(wrong, 0);
    }
  }
}

// The same layouts as block-cyclic descriptors where they can be one (even blocks, all ranks
// engines): our result equals ScaLAPACK's PDGEMR2D entry for entry, both ways.
TEST_F(Redistribute, EqualsPdgemr2dBetweenTheSameLayouts) {
  BlacsGrid everyone(1, size, 'R');  // PDGEMR2D's context holding both grids
  for (const auto& [nprow, npcol] : all_grid_shapes(size))
    for (char order : {'R', 'C'}) {
      BlacsGrid blacs(nprow, npcol, order);
      const GridInfo grid = GridInfo::of(blacs);
      const EngineComm& comm = engine_comm_for(grid.ictxt, size);
      const int engines = comm.engine_ranks();
      const std::vector<int> world = engine_world_ranks(comm);
      MappedGrid cols_grid(1, engines, world), rows_grid(engines, 1, world);
      for (const Case& c : cases(false)) {
        SCOPED_TRACE(describe(c, nprow, npcol, order, size));
        const int n = static_cast<int>(c.n), ia = static_cast<int>(c.ia),
                  ja = static_cast<int>(c.ja);
        const int one = 1, zero = 0, block = static_cast<int>((c.n + engines - 1) / engines);
        EngineLayout layout;
        layout.n = c.n;
        layout.col_begin = layout.row_begin = block_partition(c.n, engines, block);
        const int e = comm.engine_rank;
        const int w = e >= 0 ? static_cast<int>(layout.width(e)) : 0;
        const int h = e >= 0 ? static_cast<int>(layout.height(e)) : 0;

        // In: the symmetric matrix stored in full for PDGEMR2D, only its triangle for us.
        const std::vector<double> ours = check_to_engine(grid, c, layout, comm);
        TestMatrix full = make_a(grid, c);
        full.fill([&](long i, long j) {
          const long si = i - (c.ia - 1), sj = j - (c.ja - 1);
          if (si < 0 || si >= c.n || sj < 0 || sj >= c.n) return nan_value();
          return random_symmetric_entry(si, sj, kSeed);
        });
        int desc_cols[9] = {0, -1, 0, 0, 1, 1, 0, 0, 1}, info = 0;
        std::vector<double> theirs(static_cast<size_t>(n) * std::max(1, w), -1.0);
        if (cols_grid.in_grid())
          descinit_(desc_cols, &n, &n, &n, &block, &zero, &zero, &cols_grid.ictxt, &n, &info);
        pdgemr2d_(&n, &n, full.local.data(), &ia, &ja, full.desc, theirs.data(), &one, &one,
                  desc_cols, &everyone.ictxt);
        if (e >= 0) {
          long differ = 0;
          for (long k = 0; k < static_cast<long>(n) * w; ++k) differ += !(ours[k] == theirs[k]);
          EXPECT_EQ(differ, 0) << "engine columns differ from PDGEMR2D's";
        }

        // Out: engine row blocks -> Z, ours against PDGEMR2D's into a copy of the same Z.
        const TestMatrix z = check_from_engine(grid, c, layout, comm);
        TestMatrix z_ref(grid, z_layout(grid, c));
        std::fill(z_ref.local.begin(), z_ref.local.end(), -31.5);
        const int ldr = std::max(1, h);
        std::vector<double> rows(static_cast<size_t>(ldr) * n);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < h; ++i) rows[i + j * ldr] = general_entry(layout.row_begin[e] + i, j);
        int desc_rows[9] = {0, -1, 0, 0, 1, 1, 0, 0, 1};
        if (rows_grid.in_grid())
          descinit_(desc_rows, &n, &n, &block, &n, &zero, &zero, &rows_grid.ictxt, &ldr, &info);
        pdgemr2d_(&n, &n, rows.data(), &one, &one, desc_rows, z_ref.local.data(), &ia, &ja,
                  z_ref.desc, &everyone.ictxt);
        long differ = 0;
        for (size_t k = 0; k < z.local.size(); ++k) differ += !(z.local[k] == z_ref.local[k]);
        EXPECT_EQ(differ, 0) << "Z differs from PDGEMR2D's";
      }
    }
}

// A grid whose processes are world ranks in reverse order, on all ranks but world rank 0 where
// there are several: the caller comm comes from the BLACS context, not from MPI_COMM_WORLD.
TEST_F(Redistribute, GridOnASubsetInReverseOrder) {
  const int procs = size > 1 ? size - 1 : 1;
  std::vector<int> usermap(procs);
  for (int k = 0; k < procs; ++k) usermap[k] = size - 1 - k;
  const int nprow = procs >= 2 ? 2 : 1;
  const int npcol = procs / nprow;
  usermap.resize(nprow * npcol);
  MappedGrid mapped(nprow, npcol, usermap);
  if (!mapped.in_grid()) return;
  const EngineComm& comm = engine_comm_for(mapped.ictxt, size);
  int csize = 0;
  MPI_Comm_size(comm.caller, &csize);
  EXPECT_EQ(csize, nprow * npcol);
  const GridInfo grid = GridInfo::of(mapped);
  int variant = 1;
  for (const Case& c : cases(false)) {
    SCOPED_TRACE(describe(c, nprow, npcol, 'M', size));
    const EngineLayout layout = layout_for(c.n, comm.engine_ranks(), variant++);
    check_to_engine(grid, c, layout, comm);
    check_from_engine(grid, c, layout, comm);
  }
}

}  // namespace
}  // namespace pipevd::test
