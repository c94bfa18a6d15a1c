// Worker threads that throw: the loop returns (no std::terminate), every thread is joined, and the
// first exception reaches the caller; a loop that does not throw runs every index once.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "redistribute/parallel_pieces.hpp"

namespace pipevd {
namespace {

TEST(WorkerPool, EveryIndexOnce) {
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(1000, 4, [&](long i) { ++hits[i]; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(WorkerPool, AThrowingWorkerIsJoinedAndReported) {
  for (int threads : {1, 2, 4}) {
    std::atomic<long> done{0};
    EXPECT_THROW(parallel_for(200, threads,
                              [&](long i) {
                                if (i == 17) throw std::runtime_error("piece 17");
                                ++done;
                              }),
                 std::runtime_error)
        << threads << " threads";
    EXPECT_LT(done.load(), 200);
  }
}

TEST(WorkerPool, AThrowingPieceDuringAnExchangeIsReportedAfterIt) {
  MPI_Request req = MPI_REQUEST_NULL;
  int x = 1, y = 0;
  MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  EXPECT_THROW(parallel_for_during(50, 3, &req,
                                   [](long i) {
                                     if (i == 3) throw std::logic_error("piece 3");
                                   }),
               std::logic_error);
  EXPECT_EQ(req, MPI_REQUEST_NULL);  // driven to completion all the same
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(y, size);
}

}  // namespace
}  // namespace pipevd
