// core/block_diagonal on the host backend: packing a matrix's diagonal blocks in place equals
// packing them into a fresh buffer, for blocks of every shape the D&C's fold leaves (halves, odd
// halves, one block, a first block wider than half of n, many small ones, a leading dimension
// above n); the product with the packed blocks equals the dense product; small blocks join up to
// the order asked.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/block_diagonal.hpp"
#include "host/host_backend.hpp"

namespace pipevd {
namespace {

std::string name(const std::vector<long>& orders, long lda) {
  std::string s = "lda=" + std::to_string(lda) + " orders";
  for (long o : orders) s += " " + std::to_string(o);
  return s;
}

TEST(BlockDiagonal, PackInPlaceAndMultiply) {
  HostBackend be;
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<long> many(40, 3);
  many.push_back(1);
  for (const auto& [orders, extra] :
       {std::pair{std::vector<long>{50, 50}, 0L}, std::pair{std::vector<long>{50, 51}, 0L},
        std::pair{std::vector<long>{100}, 0L}, std::pair{std::vector<long>{70, 20, 10}, 0L},
        std::pair{std::vector<long>{99, 1}, 0L}, std::pair{std::vector<long>{1, 98, 1}, 0L},
        std::pair{std::vector<long>{2, 3}, 4L}, std::pair{std::vector<long>{60, 40}, 7L},
        std::pair{many, 0L}}) {
    long n = 0;
    for (long o : orders) n += o;
    const long lda = n + extra;
    SCOPED_TRACE(name(orders, lda));
    // The full matrix with random diagonal blocks (and garbage elsewhere, never packed).
    DeviceBuffer a(be, lda * n);
    for (long i = 0; i < lda * n; ++i) a.get()[i] = u(gen);
    std::vector<double> want;
    long s = 0;
    for (long o : orders) {
      for (long j = 0; j < o; ++j)
        for (long i = 0; i < o; ++i) want.push_back(a.get()[(s + i) + (s + j) * lda]);
      s += o;
    }
    ASSERT_EQ(static_cast<long>(want.size()), packed_size(orders));
    std::vector<double> dense(n * n, 0.0);  // the block-diagonal matrix, zeros off its blocks
    s = 0;
    for (long o : orders) {
      for (long j = 0; j < o; ++j)
        for (long i = 0; i < o; ++i)
          dense[(s + i) + (s + j) * n] = a.get()[(s + i) + (s + j) * lda];
      s += o;
    }
    pack_diagonal_blocks(be, a.get(), lda, orders);
    EXPECT_TRUE(std::vector<double>(a.get(), a.get() + want.size()) == want) << "packed blocks";
    for (long h : {0L, 1L, 13L}) {
      const long ld = std::max(1L, h) + 2;
      std::vector<double> x(ld * n), y(ld * n, 7.0), ref(ld * n, 7.0);
      for (double& v : x) v = u(gen);
      multiply_block_diagonal(be, h, x.data(), ld, orders, a.get(), y.data(), ld);
      if (h > 0)
        be.gemm('N', 'N', h, n, n, 1.0, x.data(), ld, dense.data(), n, 0.0, ref.data(), ld);
      double diff = 0;
      for (long i = 0; i < ld * n; ++i) diff = std::max(diff, std::fabs(y[i] - ref[i]));
      EXPECT_LE(diff, 4 * n * DBL_EPSILON) << "h=" << h;
    }
  }
}

TEST(BlockDiagonal, SmallBlocksJoinUpToTheOrder) {
  EXPECT_EQ(join_small_blocks({1, 1, 1, 300, 2, 2, 1}, 4), (std::vector<long>{3, 300, 4, 1}));
  EXPECT_EQ(join_small_blocks({128, 128, 1}, 256), (std::vector<long>{256, 1}));
  EXPECT_EQ(join_small_blocks({500, 501}, 256), (std::vector<long>{500, 501}));
  EXPECT_EQ(join_small_blocks({}, 256), std::vector<long>{});
  EXPECT_EQ(packed_size({3, 300, 4, 1}), 9 + 90000 + 16 + 1);
}

}  // namespace
}  // namespace pipevd
