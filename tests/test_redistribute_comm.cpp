// The pieces under the redistribution: the caller/engine communicators recovered from a BLACS
// context, the 64-bit exchange, and the block-cyclic index arithmetic against ScaLAPACK's own.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/communicator.hpp"
#include "redistribute/block_cyclic.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_partition.hpp"
#include "redistribute/exchange.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#include "redistribute/redistribution_plan.hpp"
#include "tests/redistribute_support.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd::test {
namespace {

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
// The redistribution's threads: the requested count, else this process's CPUs (shared by the
// ranks on the node when unbound); PIPEVD_THREADS is the caller's (interface/policy) to apply
// through ExchangeOptions::threads, never read here.
TEST(RedistributionThreads, RequestedElseAffinityAndNoEnvironment) {
  EXPECT_EQ(redistribution_threads(5, 4), 5);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const int mask = CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const char* before = getenv("PIPEVD_THREADS");
  const std::string saved = before ? before : "";
  setenv("PIPEVD_THREADS", "1", 1);
  EXPECT_EQ(redistribution_threads(0, 1), mask);
  const int ranks = ranks_on_this_node(MPI_COMM_WORLD);
  EXPECT_EQ(redistribution_threads(0, ranks), mask >= online ? std::max(1, mask / ranks) : mask);
  if (before)
    setenv("PIPEVD_THREADS", saved.c_str(), 1);
  else
    unsetenv("PIPEVD_THREADS");
}

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

// The plan, process by process: every entry of every engine column block arrives exactly once,
// read from the named triangle only (direct: stored (i, j); mirrored: stored (j, i)); every local
// entry of Z inside the submatrix is written exactly once, from the engine row that holds it.
TEST(RedistributionPlan, EveryEntryExactlyOnceFromTheNamedTriangle) {
  struct V {
    long n, ia, ja;
    int mb, nb, rsrc, csrc, nprow, npcol;
  };
  const V views[] = {{1, 0, 0, 1, 1, 0, 0, 1, 1},
                     {31, 1, 2, 3, 7, 1, 0, 2, 2},
                     {97, 4, 0, 7, 2, 0, 2, 1, 3},
                     {97, 32, 64, 64, 3, 1, 0, 2, 1},
                     {50, 7, 7, 7, 7, 1, 1, 3, 2}};
  for (const V& v : views)
    for (char uplo : {'L', 'U'})
      for (int engines : {1, 3}) {
        SCOPED_TRACE(::testing::Message() << "n=" << v.n << " uplo=" << uplo << " E=" << engines
                                          << " grid " << v.nprow << "x" << v.npcol);
        BlockCyclicView view;
        view.m = view.n = v.n;
        view.ia = v.ia;
        view.ja = v.ja;
        view.mb = v.mb;
        view.nb = v.nb;
        view.rsrc = v.rsrc;
        view.csrc = v.csrc;
        view.nprow = v.nprow;
        view.npcol = v.npcol;
        const std::vector<long> cols = uneven_partition(v.n, engines);
        std::vector<int> hits(static_cast<size_t>(v.n * v.n), 0);
        long outside = 0;
        for (int pr = 0; pr < v.nprow; ++pr)
          for (int pc = 0; pc < v.npcol; ++pc) {
            const LocalRuns runs = local_runs(view, pr, pc);
            for (int e = 0; e < engines; ++e)
              for_each_segment_to_engine(uplo, runs, cols[e], cols[e + 1], [&](const Segment& s) {
                for (long t = 0; t < s.len; ++t) {
                  ++hits[(s.dest_row + t) + s.dest_col * v.n];
                  // The stored entry read, in submatrix indices.
                  const long li = s.src_row + (s.mirrored ? 0 : t);
                  const long lj = s.src_col + (s.mirrored ? t : 0);
                  const long i =
                      global_index(static_cast<int>(li), v.mb, pr, v.rsrc, v.nprow) - v.ia;
                  const long j =
                      global_index(static_cast<int>(lj), v.nb, pc, v.csrc, v.npcol) - v.ja;
                  const bool in_triangle = uplo == 'L' ? i >= j : i <= j;
                  const long expect_i = s.mirrored ? s.dest_col : s.dest_row + t;
                  const long expect_j = s.mirrored ? s.dest_row + t : s.dest_col;
                  if (!in_triangle || i != expect_i || j != expect_j) ++outside;
                  if (s.dest_col < cols[e] || s.dest_col >= cols[e + 1]) ++outside;
                }
              });
          }
        long wrong = 0;
        for (int h : hits) wrong += h != 1;
        EXPECT_EQ(wrong, 0) << "entries not received exactly once";
        EXPECT_EQ(outside, 0) << "entries read outside the named triangle or misplaced";

        // Engine rows -> every process's local part of Z, exactly once.
        const std::vector<long> rows = even_partition(v.n, engines, 5);
        for (int pr = 0; pr < v.nprow; ++pr)
          for (int pc = 0; pc < v.npcol; ++pc) {
            const LocalRuns runs = local_runs(view, pr, pc);
            long local_rows = 0, local_cols = 0, placed = 0, misplaced = 0;
            for (const pipevd::Run& r : runs.rows) local_rows += r.len;
            for (const pipevd::Run& r : runs.cols) local_cols += r.len;
            std::vector<int> z_hits;
            for (int e = 0; e < engines; ++e)
              for_each_segment_from_engine(rows[e], rows[e + 1], runs, [&](const Segment& s) {
                placed += s.len;
                for (long t = 0; t < s.len; ++t) {
                  const long i =
                      global_index(static_cast<int>(s.dest_row + t), v.mb, pr, v.rsrc, v.nprow) -
                      v.ia;
                  const long j =
                      global_index(static_cast<int>(s.dest_col), v.nb, pc, v.csrc, v.npcol) - v.ja;
                  if (i != rows[e] + s.src_row + t || j != s.src_col) ++misplaced;
                }
              });
            EXPECT_EQ(placed, local_rows * local_cols);
            EXPECT_EQ(misplaced, 0);
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
