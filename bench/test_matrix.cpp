#include "bench/test_matrix.hpp"

#include <algorithm>

// The six spectra of the pipelined paper's Table 2 come with tests/support/spectra (branch
// `engine`); bench/CMakeLists.txt defines PIPEVD_BENCH_HAVE_SPECTRA as soon as it is in the tree.
#ifdef PIPEVD_BENCH_HAVE_SPECTRA
#include "tests/support/spectra.hpp"
#endif

namespace pipevd::bench {

std::vector<std::string> available_spectra() {
  std::vector<std::string> names{"random"};
#ifdef PIPEVD_BENCH_HAVE_SPECTRA
  for (test::Spectrum s : test::kAllSpectra) names.push_back(test::to_string(s));
#endif
  return names;
}

namespace {

std::string unknown_spectrum(const std::string& spectrum) {
  std::string why = "spectrum '" + spectrum + "' is not one of";
  for (const auto& name : available_spectra()) why += " " + name;
  return why;
}

}  // namespace

bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::DistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why) {
  (void)grid;
  exact_eigenvalues.clear();
  if (spectrum == "random") {
    a.fill([seed](long i, long j) { return test::random_symmetric_entry(i, j, seed); });
    return true;
  }
#ifdef PIPEVD_BENCH_HAVE_SPECTRA
  for (test::Spectrum s : test::kAllSpectra) {
    if (spectrum != test::to_string(s)) continue;
    // A = Q diag(lambda) Q^T formed whole on every rank (same seed, so the same matrix): simple,
    // and affordable at the sizes where a prescribed spectrum is worth its O(n^3) setup.
    const long n = a.layout.n;
    exact_eigenvalues = test::eigenvalues_of(s, n, seed);
    const std::vector<double> full = test::matrix_with_eigenvalues(exact_eigenvalues, seed);
    a.fill([&full, n](long i, long j) { return full[i + j * n]; });
    std::sort(exact_eigenvalues.begin(), exact_eigenvalues.end());
    return true;
  }
#endif
  if (why) *why = unknown_spectrum(spectrum);
  return false;
}

test::Complex random_hermitian_entry(long i, long j, unsigned seed) {
  // The imaginary part from a second stream, antisymmetric so that A^H = A.
  const double re = test::random_symmetric_entry(i, j, seed);
  const double im = test::random_symmetric_entry(i, j, seed ^ 0x9E3779B9u);
  return {re, i == j ? 0.0 : (i > j ? im : -im)};
}

bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::ComplexDistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why) {
  (void)grid;
  exact_eigenvalues.clear();
  if (spectrum == "random") {
    a.fill([seed](long i, long j) { return random_hermitian_entry(i, j, seed); });
    return true;
  }
#ifdef PIPEVD_BENCH_HAVE_SPECTRA
  for (test::Spectrum s : test::kAllSpectra) {
    if (spectrum != test::to_string(s)) continue;
    // Formed whole on every rank, as the real spectra are.
    const long n = a.real.layout.n;  // the complex order (the real view has 2 n rows)
    exact_eigenvalues = test::eigenvalues_of(s, n, seed);
    const std::vector<test::Complex> full =
        test::hermitian_with_eigenvalues(exact_eigenvalues, seed);
    a.fill([&full, n](long i, long j) { return full[i + j * n]; });
    std::sort(exact_eigenvalues.begin(), exact_eigenvalues.end());
    return true;
  }
#endif
  if (why) *why = unknown_spectrum(spectrum);
  return false;
}

}  // namespace pipevd::bench
