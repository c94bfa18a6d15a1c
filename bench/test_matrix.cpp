#include "bench/test_matrix.hpp"

namespace pipevd::bench {

std::vector<std::string> available_spectra() { return {"random"}; }

bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::DistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why) {
  (void)grid;
  exact_eigenvalues.clear();
  if (spectrum == "random") {
    a.fill([seed](long i, long j) { return test::random_symmetric_entry(i, j, seed); });
    return true;
  }
  if (why)
    *why = "spectrum '" + spectrum +
           "' is not available (only 'random' until tests/support/spectra lands)";
  return false;
}

}  // namespace pipevd::bench
