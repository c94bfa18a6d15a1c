// The large host buffers kept between calls (redistribute/kept_buffer.hpp): a fresh one asked to
// be populated is resident before anything writes it, one not asked is not (the unpack's writes
// would fault it in page by page), a kept one comes back with its contents' pages, and
// release_kept_buffers hands the memory back.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "redistribute/kept_buffer.hpp"

namespace pipevd {
namespace {

constexpr std::size_t kElements = std::size_t(48) << 17;  // 48 MiB of doubles

// The share of the pages of [p, p + bytes) that are resident in this process.
double resident_share(const double* p, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(p) + bytes;
  const std::size_t pages = (end - begin + page - 1) / page;
  std::vector<unsigned char> in(pages);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, in.data()), 0);
  std::size_t resident = 0;
  for (unsigned char c : in) resident += c & 1;
  return static_cast<double>(resident) / static_cast<double>(pages);
}

TEST(KeptBufferTest, FreshBufferIsPopulatedOnlyWhenAsked) {
  release_kept_buffers();
  {
    KeptBuffer lazy(kElements);
    ASSERT_NE(lazy.data(), nullptr);
    EXPECT_LT(resident_share(lazy.data(), kElements * sizeof(double)), 0.5);
  }
  release_kept_buffers();
  EXPECT_EQ(kept_bytes(), 0u);
  for (int threads : {1, 3}) {
    KeptBuffer backed(kElements, threads);
    ASSERT_NE(backed.data(), nullptr);
    EXPECT_EQ(resident_share(backed.data(), kElements * sizeof(double)), 1.0) << threads;
    // Populated pages read as zeros (fresh anonymous memory), and are writable.
    EXPECT_EQ(backed.data()[0], 0.0);
    EXPECT_EQ(backed.data()[kElements - 1], 0.0);
    backed.data()[kElements / 2] = 1.5;
    backed.release();
    release_kept_buffers();
  }
}

TEST(KeptBufferTest, KeptMemoryComesBackWithItsPages) {
  release_kept_buffers();
  double* first = nullptr;
  {
    KeptBuffer a(kElements, 2);
    first = a.data();
    a.data()[7] = 3.25;
  }
  EXPECT_GE(kept_bytes(), kElements * sizeof(double));
  KeptBuffer again(kElements / 2, 2);  // fits the kept slot: the same memory, not remapped
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.data()[7], 3.25);
  EXPECT_EQ(resident_share(again.data(), kElements / 2 * sizeof(double)), 1.0);
  again.release();
  release_kept_buffers();
  EXPECT_EQ(kept_bytes(), 0u);
}

}  // namespace
}  // namespace pipevd
