// The large host buffers kept between calls (redistribute/kept_buffer.hpp) and the population of
// their fresh memory (base/page_population.hpp): a fresh buffer says so and is not resident until
// populated (the unpack's writes would fault it in page by page), a population in its own thread
// backs every page by the time finish() returns, whichever side took the pieces, and a dropped
// one joins its thread; a kept buffer comes back, not fresh, with its contents' pages, and
// release_kept_buffers hands the memory back.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "base/page_population.hpp"
#include "redistribute/kept_buffer.hpp"
#include "tests/support/resident_pages.hpp"

namespace pipevd {
namespace {

using test::resident_share;

constexpr std::size_t kElements = std::size_t(48) << 17;  // 48 MiB of doubles

TEST(KeptBufferTest, FreshBufferSaysSoAndIsNotResident) {
  release_kept_buffers();
  KeptBuffer lazy(kElements);
  ASSERT_NE(lazy.data(), nullptr);
  EXPECT_TRUE(lazy.fresh());
  EXPECT_GE(lazy.bytes(), kElements * sizeof(double));
  EXPECT_LT(resident_share(lazy.data(), kElements * sizeof(double)), 0.5);
  KeptBuffer small(1000);  // malloc's: never fresh
  EXPECT_FALSE(small.fresh());
  KeptBuffer none(0);
  EXPECT_FALSE(none.fresh());
  lazy.release();
  EXPECT_FALSE(lazy.fresh());
  release_kept_buffers();
  EXPECT_EQ(kept_bytes(), 0u);
}

TEST(KeptBufferTest, PopulationBacksEveryPageByItsFinish) {
  for (int threads : {1, 3}) {
    for (int finishers : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(finishers) +
                   " finishing");
      release_kept_buffers();
      KeptBuffer a(kElements);
      ASSERT_TRUE(a.fresh());
      PagePopulation population;
      EXPECT_FALSE(population.started());
      population.start(a.data(), static_cast<long>(a.bytes()), threads);
      EXPECT_TRUE(population.started());
      EXPECT_TRUE(population.finish(finishers));
      EXPECT_FALSE(population.running());
      EXPECT_EQ(resident_share(a.data(), a.bytes()), 1.0);
      EXPECT_GE(population.end(), population.begin());
      EXPECT_TRUE(population.finish(finishers));  // again: nothing more
      // Populated pages read as zeros (fresh anonymous memory), and are writable.
      EXPECT_EQ(a.data()[0], 0.0);
      EXPECT_EQ(a.data()[kElements - 1], 0.0);
      a.data()[kElements / 2] = 1.5;
    }
  }
  release_kept_buffers();
}

// Dropped unfinished (an exception past it): its thread is joined, whatever it backed by then.
TEST(KeptBufferTest, DroppedPopulationJoinsItsThread) {
  release_kept_buffers();
  KeptBuffer a(kElements);
  {
    PagePopulation population;
    population.start(a.data(), static_cast<long>(a.bytes()), 2);
  }
  a.data()[7] = 2.0;  // the pages not backed fault in as ever
  EXPECT_EQ(a.data()[7], 2.0);
  a.release();
  release_kept_buffers();
}

TEST(KeptBufferTest, KeptMemoryComesBackWithItsPages) {
  release_kept_buffers();
  double* first = nullptr;
  {
    KeptBuffer a(kElements);
    EXPECT_TRUE(a.fresh());
    PagePopulation population;
    population.start(a.data(), static_cast<long>(a.bytes()), 2);
    population.finish(2);
    first = a.data();
    a.data()[7] = 3.25;
  }
  EXPECT_GE(kept_bytes(), kElements * sizeof(double));
  KeptBuffer again(kElements / 2);  // fits the kept slot: the same memory, not remapped
  EXPECT_FALSE(again.fresh());
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.data()[7], 3.25);
  EXPECT_EQ(resident_share(again.data(), kElements / 2 * sizeof(double)), 1.0);
  again.release();
  release_kept_buffers();
  EXPECT_EQ(kept_bytes(), 0u);
}

}  // namespace
}  // namespace pipevd
