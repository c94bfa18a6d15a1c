// A seed from the system's entropy: each run of a GPU-vs-reference test draws new inputs (a result
// that only holds for one input is not trusted). Tests print it where a failure needs it again.
#pragma once
#include <cstdint>
#include <random>

namespace pipevd::test {

inline std::uint64_t fresh_seed() {
  static std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace pipevd::test
