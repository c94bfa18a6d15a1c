// One redistribution test case (block-cyclic sub(A) of order n <-> the engine's layout): the
// descriptor's blocking and source process, the submatrix's place, the LLD's slack and the
// triangle named; shared by the redistribution tests (test_redistribute, test_window_rounds).
#pragma once
#include <sstream>
#include <string>

namespace pipevd::test {

struct RedistributionCase {
  long n;
  int mb, nb, rsrc, csrc;
  long ia, ja;  // 1-based
  int lld_extra;
  char uplo;
};

// The case's fields, for a test's trace.
inline std::string describe(const RedistributionCase& c) {
  std::ostringstream s;
  s << "n=" << c.n << " mb=" << c.mb << " nb=" << c.nb << " rsrc=" << c.rsrc << " csrc=" << c.csrc
    << " ia=" << c.ia << " ja=" << c.ja << " lld+" << c.lld_extra << " uplo=" << c.uplo;
  return s.str();
}

}  // namespace pipevd::test
