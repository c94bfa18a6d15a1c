#pragma once
// The largest order a kernel test runs, from PIPEVD_TEST_MAX_N (unset: no limit). The sanitizer
// runs (bench/device/sanitizer.sh) set it: compute-sanitizer slows kernels 10-100x, and the small
// orders exercise the same code paths (odd sizes, partial blocks, every bandwidth).
#include <climits>
#include <cstdlib>

namespace pipevd::test {

inline long max_test_order() {
  const char* v = std::getenv("PIPEVD_TEST_MAX_N");
  if (!v || !*v) return LONG_MAX;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n > 0 ? n : LONG_MAX;
}

inline bool over_test_order(long n) { return n > max_test_order(); }

}  // namespace pipevd::test
