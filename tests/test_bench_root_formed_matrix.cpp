// pipevd-bench's prescribed-spectrum matrix formed on world rank 0 and broadcast (bench/test_matrix
// with a former, bench/broadcast), the host's LAPACK formation standing in for the GPU's: the same
// local blocks and eigenvalues as the matrix formed on every rank, the former called on rank 0
// alone, its failure there reported on every rank; the broadcast in chunks of any size.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/broadcast.hpp"
#include "bench/test_matrix.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/spectra.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd::test {
namespace {

// Wraps a host formation, counting its calls on this rank.
template <class T>
bench::SpectrumFormer<T> counted(const bench::SpectrumFormer<T>& form, int* calls) {
  return [form, calls](const std::vector<double>& lambda, unsigned seed) {
    ++*calls;
    return form(lambda, seed);
  };
}

TEST(RootFormedMatrix, RealEqualsTheOneFormedOnEveryRank) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  for (int n : {1, 37, 64}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    DistributedMatrix every(g, {n, n, 8, 8}), root(g, {n, n, 8, 8});
    std::vector<double> every_w, root_w;
    std::string why;
    ASSERT_TRUE(bench::generate_test_matrix("geometric", 5, g, every, every_w, &why)) << why;
    int calls = 0;
    ASSERT_TRUE(bench::generate_test_matrix("geometric", 5, g, root, root_w, &why,
                                            counted<double>(matrix_with_eigenvalues, &calls)))
        << why;
    EXPECT_EQ(calls, world_rank() == 0 ? 1 : 0);
    EXPECT_TRUE(bitwise_equal(every.local, root.local));
    EXPECT_TRUE(bitwise_equal(every_w, root_w));
    EXPECT_EQ(static_cast<int>(root_w.size()), n);
  }
}

TEST(RootFormedMatrix, ComplexEqualsTheOneFormedOnEveryRank) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  for (int n : {1, 37, 64}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    ComplexDistributedMatrix every(g, n, 8), root(g, n, 8);
    std::vector<double> every_w, root_w;
    std::string why;
    ASSERT_TRUE(bench::generate_test_matrix("cluster0", 9, g, every, every_w, &why)) << why;
    int calls = 0;
    ASSERT_TRUE(bench::generate_test_matrix("cluster0", 9, g, root, root_w, &why,
                                            counted<Complex>(hermitian_with_eigenvalues, &calls)))
        << why;
    EXPECT_EQ(calls, world_rank() == 0 ? 1 : 0);
    EXPECT_TRUE(bitwise_equal(every.real.local, root.real.local));
    EXPECT_TRUE(bitwise_equal(every_w, root_w));
  }
}

TEST(RootFormedMatrix, FormerFailureOnRankZeroIsEveryRanksFailure) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  const int n = 20;
  DistributedMatrix a(g, {n, n, 4, 4});
  a.fill([](long, long) { return 7.0; });
  const std::vector<double> before = a.local;
  std::vector<double> w{1.0};
  std::string why;
  const bench::SpectrumFormer<double> refuses = [](const std::vector<double>&,
                                                   unsigned) -> std::vector<double> {
    throw std::runtime_error("the device lacks the memory");
  };
  EXPECT_FALSE(bench::generate_test_matrix("uniform", 1, g, a, w, &why, refuses));
  EXPECT_EQ(why, "the device lacks the memory");
  EXPECT_TRUE(w.empty());
  EXPECT_TRUE(bitwise_equal(a.local, before));
  // A former that returns the wrong size is a failure too, not a short broadcast.
  const bench::SpectrumFormer<double> short_one = [](const std::vector<double>&, unsigned) {
    return std::vector<double>(3, 0.0);
  };
  why.clear();
  EXPECT_FALSE(bench::generate_test_matrix("uniform", 1, g, a, w, &why, short_one));
  EXPECT_NE(why.find("3 elements"), std::string::npos) << why;
}

TEST(RootFormedMatrix, SpectrumNames) {
  EXPECT_TRUE(bench::is_prescribed_spectrum("cluster0"));
  EXPECT_TRUE(bench::is_prescribed_spectrum("uniform"));
  EXPECT_FALSE(bench::is_prescribed_spectrum("random"));
  EXPECT_FALSE(bench::is_prescribed_spectrum("cluster9"));
}

TEST(Broadcast, DoublesInChunksAndAString) {
  const int root = world_size() - 1;  // not only rank 0
  for (std::size_t chunk :
       {std::size_t{1}, std::size_t{7}, std::size_t{100}, bench::kBroadcastChunk}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    std::vector<double> x(100, -1.0), want(100);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = 0.5 + static_cast<double>(i);
    if (world_rank() == root) x = want;
    bench::broadcast_doubles(x.data(), x.size(), root, MPI_COMM_WORLD, chunk);
    EXPECT_TRUE(bitwise_equal(x, want));
  }
  for (const std::string& sent : {std::string(), std::string("no CUDA device visible")}) {
    std::string s = world_rank() == root ? sent : std::string("stale");
    bench::broadcast_string(s, root, MPI_COMM_WORLD);
    EXPECT_EQ(s, sent);
  }
}

}  // namespace
}  // namespace pipevd::test
