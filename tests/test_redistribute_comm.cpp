// The pieces under the redistribution: the caller/engine communicators recovered from a BLACS
// context, the 64-bit exchange, and the block-cyclic index arithmetic against ScaLAPACK's own.
#include <gtest/gtest.h>

#include <vector>

#include "redistribute/block_cyclic.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_partition.hpp"
#include "redistribute/exchange.hpp"
#include "tests/redistribute_support.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd::test {
namespace {

int rank_in(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}

int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

// Caller comm = the grid's processes in pnum order; engine ranks = node-local ranks 0..g-1.
TEST(EngineComm, CallerInPnumOrderAndEngineRanksPerNode) {
  const int size = world_size();
  for (const auto& [nprow, npcol] : all_grid_shapes(size))
    for (char order : {'R', 'C'})
      for (int g = 1; g <= size + 1; ++g) {
        SCOPED_TRACE(::testing::Message() << nprow << "x" << npcol << order << " g=" << g);
        BlacsGrid grid(nprow, npcol, order);
        const EngineComm& comm = engine_comm_for(grid.ictxt, g);
        ASSERT_EQ(size_of(comm.caller), nprow * npcol);
        EXPECT_EQ(rank_in(comm.caller), Cblacs_pnum(grid.ictxt, grid.myrow, grid.mycol));
        const GridMap map = grid_map(grid.ictxt);
        EXPECT_EQ(map.caller_rank[grid.myrow * npcol + grid.mycol], rank_in(comm.caller));

        MPI_Comm node;
        MPI_Comm_split_type(comm.caller, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        const bool expect_engine = rank_in(node) < g;
        MPI_Comm_free(&node);
        EXPECT_EQ(comm.engine_rank >= 0, expect_engine);
        int engines = expect_engine ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &engines, 1, MPI_INT, MPI_SUM, comm.caller);
        EXPECT_EQ(comm.engine_ranks(), engines);
        if (comm.engine_rank >= 0) {
          EXPECT_EQ(size_of(comm.engine), engines);
          EXPECT_EQ(comm.engine_to_caller[comm.engine_rank], rank_in(comm.caller));
        } else {
          EXPECT_EQ(comm.engine, MPI_COMM_NULL);
        }
        // Cached: the same object for the same processes and g, also from a new context.
        EXPECT_EQ(&engine_comm_for(grid.ictxt, g), &comm);
        BlacsGrid again(nprow, npcol, order);
        EXPECT_EQ(&engine_comm_for(again.ictxt, g), &comm);
      }
}

// A context over part of the world, processes in reverse order: only they call, and the caller
// comm holds exactly them.
TEST(EngineComm, ContextOverASubsetOfTheWorld) {
  const int size = world_size();
  const int procs = size > 1 ? size - 1 : 1;
  std::vector<int> usermap(procs);
  for (int k = 0; k < procs; ++k) usermap[k] = size - 1 - k;
  MappedGrid grid(procs, 1, usermap);
  if (!grid.in_grid()) return;
  const EngineComm& comm = engine_comm_for(grid.ictxt, 1);
  EXPECT_EQ(size_of(comm.caller), procs);
  EXPECT_EQ(rank_in(comm.caller), Cblacs_pnum(grid.ictxt, grid.myrow, grid.mycol));
  EXPECT_EQ(comm.engine_ranks(), 1);  // one node here
}

// Counts that differ per pair (zeros included), through one Alltoallv and through rounds of
// Alltoallw with tiny messages: every element arrives where it belongs.
TEST(Exchange, AlltoallvAndRoundsDeliverEveryElement) {
  const int size = world_size(), me = world_rank();
  auto count = [](int from, int to) { return static_cast<long>((from * 7 + to * 3) % 5) * 13; };
  auto value = [](int from, int to, long k) { return from * 1e6 + to * 1e3 + k; };
  std::vector<long> sc(size), rc(size);
  std::vector<double> send;
  for (int r = 0; r < size; ++r) {
    sc[r] = count(me, r);
    rc[r] = count(r, me);
    for (long k = 0; k < sc[r]; ++k) send.push_back(value(me, r, k));
  }
  long total = 0;
  for (long c : rc) total += c;
  for (long max_message : {1L << 27, 1L, 5L, 13L}) {
    ExchangeOptions opt;
    if (max_message < 100) opt.int_limit = 0;
    opt.max_message = max_message;
    std::vector<double> recv(total, -1.0);
    exchange(send.data(), sc, recv.data(), rc, MPI_COMM_WORLD, opt);
    long at = 0, wrong = 0;
    for (int r = 0; r < size; ++r)
      for (long k = 0; k < rc[r]; ++k) wrong += !(recv[at++] == value(r, me, k));
    EXPECT_EQ(wrong, 0) << "max_message " << max_message;
  }
}

// owned_runs covers exactly the indices NUMROC counts, at the local places ScaLAPACK's
// block-cyclic map gives them.
TEST(BlockCyclic, OwnedRunsAgreeWithNumroc) {
  for (int nprocs : {1, 2, 3, 4})
    for (int nb : {1, 2, 3, 7, 64})
      for (int src = 0; src < nprocs; ++src)
        for (long offset : {0L, 1L, 5L, 64L, 65L})
          for (long count : {0L, 1L, 2L, 31L, 97L}) {
            const int total = static_cast<int>(offset + count);
            for (int p = 0; p < nprocs; ++p) {
              const auto runs = owned_runs(offset, count, nb, src, nprocs, p);
              const int owned_before = numroc_(&total, &nb, &p, &src, &nprocs);
              const int off = static_cast<int>(offset);
              const int before = numroc_(&off, &nb, &p, &src, &nprocs);
              long got = 0, prev = -1;
              for (const pipevd::Run& r : runs) {
                EXPECT_GT(r.global, prev);
                for (long t = 0; t < r.len; ++t) {
                  const long l = r.local + t;
                  EXPECT_EQ(global_index(static_cast<int>(l), nb, p, src, nprocs),
                            offset + r.global + t);
                }
                prev = r.global + r.len - 1;
                got += r.len;
              }
              EXPECT_EQ(got, owned_before - before)
                  << nprocs << " " << nb << " " << src << " " << offset << " " << count << " " << p;
              if (!runs.empty()) EXPECT_EQ(runs.front().local, before);
            }
          }
}

TEST(EnginePartition, EvenInWholeBlocksRemainderLast) {
  EXPECT_EQ(even_partition(100, 3, 16), (std::vector<long>{0, 32, 64, 100}));
  EXPECT_EQ(even_partition(10, 4, 4), (std::vector<long>{0, 4, 8, 8, 10}));
  EXPECT_EQ(even_partition(1, 2, 32), (std::vector<long>{0, 0, 1}));
  EXPECT_EQ(even_partition(128, 2, 32), (std::vector<long>{0, 64, 128}));
  EXPECT_EQ(partition_from_widths({3, 0, 4}), (std::vector<long>{0, 3, 3, 7}));
  const EngineLayout l = even_layout(97, 3, 32);
  EXPECT_EQ(l.n, 97);
  EXPECT_EQ(l.col_begin, (std::vector<long>{0, 32, 64, 97}));
  EXPECT_EQ(l.row_begin, l.col_begin);
  EXPECT_EQ(l.width(2), 33);
  EXPECT_THROW(even_partition(5, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace pipevd::test
