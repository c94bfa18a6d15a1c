// A test problem's size and the band reduction's blocking, with the name its traces print.
#pragma once
#include <string>

namespace pipevd::test {

struct ReductionShape {
  long n, b, k;  // the matrix's order, the bandwidth and DBBR's outer block width
};

inline std::string name(const ReductionShape& s) {
  return "n=" + std::to_string(s.n) + " b=" + std::to_string(s.b) + " k=" + std::to_string(s.k);
}

}  // namespace pipevd::test
