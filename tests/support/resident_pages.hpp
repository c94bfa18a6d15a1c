// Which pages of a range are resident in this process (mincore), for tests of memory backed in
// bulk before it is written.
#pragma once
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipevd::test {

// The share of the pages of [p, p + bytes) that are resident in this process.
inline double resident_share(const void* p, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(p) + bytes;
  const std::size_t pages = (end - begin + page - 1) / page;
  if (pages == 0) return 1.0;
  std::vector<unsigned char> in(pages);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, in.data()), 0);
  std::size_t resident = 0;
  for (unsigned char c : in) resident += c & 1;
  return static_cast<double>(resident) / static_cast<double>(pages);
}

}  // namespace pipevd::test
