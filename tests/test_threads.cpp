// Several threads of one process call pdsyevd_ at once (the library serialises them): every call
// returns INFO = 0 and the eigenvalues of its own matrix. Without the serialisation the threads
// share the communicator caches, the kept buffers and MPI collectives on one communicator.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

TEST(Threads, ConcurrentCallsAreSerialised) {
  BlacsGrid grid(1, 1);
  constexpr int kThreads = 4, kCalls = 3, n = 90, nb = 8;
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, 0};
  std::vector<int> infos(kThreads * kCalls, -99);
  std::vector<double> errors(kThreads * kCalls, 1.0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const unsigned seed = 100 + 10 * t + c;
        DistributedMatrix a(grid, layout), z(grid, layout);
        a.fill([&](long i, long j) { return random_symmetric_entry(i, j, seed); });
        std::vector<double> full = a.local, w(n);
        infos[t * kCalls + c] =
            call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
        errors[t * kCalls + c] = eigenvalue_difference(w, lapack_eigenvalues(n, full));
      }
    });
  for (std::thread& th : threads) th.join();
  for (int k = 0; k < kThreads * kCalls; ++k) {
    EXPECT_EQ(infos[k], 0) << "call " << k;
    EXPECT_LE(errors[k], 1e-12) << "call " << k;
  }
}

}  // namespace
}  // namespace pipevd::test
