#include "bench/test_matrix.hpp"

#include <algorithm>
#include <exception>
#include <type_traits>

#include "bench/broadcast.hpp"

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

bool is_prescribed_spectrum(const std::string& spectrum) {
  const std::vector<std::string> names = available_spectra();
  return spectrum != "random" && std::find(names.begin(), names.end(), spectrum) != names.end();
}

std::string unknown_spectrum(const std::string& spectrum) {
  std::string why = "spectrum '" + spectrum + "' is not one of";
  for (const auto& name : available_spectra()) why += " " + name;
  return why;
}

namespace {

// The full matrix of eigenvalues lambda on every rank: by on_root on world rank 0 and broadcast
// where given, else by `on_every_rank` on each (same seed, so the same matrix). False on every
// rank, with on_root's message, where it threw.
template <class T>
bool form_everywhere(const std::vector<double>& lambda, unsigned seed,
                     const SpectrumFormer<T>& on_root, const SpectrumFormer<T>& on_every_rank,
                     std::vector<T>& full, std::string* why) {
  if (!on_root) {
    full = on_every_rank(lambda, seed);
    return true;
  }
  std::string error;
  if (test::world_rank() == 0) {
    try {
      full = on_root(lambda, seed);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (error.empty() && full.size() != lambda.size() * lambda.size())
      error = "the former returned " + std::to_string(full.size()) + " elements";
  }
  // Every rank learns whether rank 0 has the matrix before any waits for it.
  broadcast_string(error, 0, MPI_COMM_WORLD);
  if (!error.empty()) {
    if (why) *why = error;
    return false;
  }
  full.resize(lambda.size() * lambda.size());
  static_assert(sizeof(T) % sizeof(double) == 0);
  broadcast_doubles(reinterpret_cast<double*>(full.data()),
                    full.size() * (sizeof(T) / sizeof(double)), 0, MPI_COMM_WORLD);
  return true;
}

#ifdef PIPEVD_BENCH_HAVE_SPECTRA
// LAPACK's A = Q diag(lambda) Q^T (Q^H for complex T), the same on every rank.
template <class T>
std::vector<T> formed_by_lapack(const std::vector<double>& lambda, unsigned seed) {
  if constexpr (std::is_same_v<T, double>)
    return test::matrix_with_eigenvalues(lambda, seed);
  else
    return test::hermitian_with_eigenvalues(lambda, seed);
}
#endif

// generate_test_matrix for elements T: `a` of order n, random_entry(i, j, seed) the entries of its
// random matrix.
template <class T, class Matrix>
bool generate(const std::string& spectrum, unsigned seed, [[maybe_unused]] long n, Matrix& a,
              T (*random_entry)(long, long, unsigned), std::vector<double>& exact_eigenvalues,
              std::string* why, [[maybe_unused]] const SpectrumFormer<T>& on_root, int threads) {
  exact_eigenvalues.clear();
  if (spectrum == "random") {
    a.fill([seed, random_entry](long i, long j) { return random_entry(i, j, seed); }, threads);
    return true;
  }
#ifdef PIPEVD_BENCH_HAVE_SPECTRA
  for (test::Spectrum s : test::kAllSpectra) {
    if (spectrum != test::to_string(s)) continue;
    // Formed whole (by LAPACK on every rank, or on_root's on rank 0).
    std::vector<double> lambda = test::eigenvalues_of(s, n, seed);
    std::vector<T> full;
    if (!form_everywhere<T>(lambda, seed, on_root, formed_by_lapack<T>, full, why)) return false;
    a.fill([&full, n](long i, long j) { return full[i + j * n]; }, threads);
    std::sort(lambda.begin(), lambda.end());
    exact_eigenvalues = std::move(lambda);
    return true;
  }
#endif
  if (why) *why = unknown_spectrum(spectrum);
  return false;
}

}  // namespace

bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::DistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why, const SpectrumFormer<double>& on_root, int threads) {
  (void)grid;
  return generate<double>(spectrum, seed, a.layout.n, a, test::random_symmetric_entry,
                          exact_eigenvalues, why, on_root, threads);
}

test::Complex random_hermitian_entry(long i, long j, unsigned seed) {
  // The imaginary part from a second stream, antisymmetric so that A^H = A.
  const double re = test::random_symmetric_entry(i, j, seed);
  const double im = test::random_symmetric_entry(i, j, seed ^ 0x9E3779B9u);
  return {re, i == j ? 0.0 : (i > j ? im : -im)};
}

bool generate_test_matrix(const std::string& spectrum, unsigned seed, const test::BlacsGrid& grid,
                          test::ComplexDistributedMatrix& a, std::vector<double>& exact_eigenvalues,
                          std::string* why, const SpectrumFormer<test::Complex>& on_root,
                          int threads) {
  (void)grid;
  // The complex order (the real view has 2 n rows).
  return generate<test::Complex>(spectrum, seed, a.real.layout.n, a, random_hermitian_entry,
                                 exact_eigenvalues, why, on_root, threads);
}

}  // namespace pipevd::bench
