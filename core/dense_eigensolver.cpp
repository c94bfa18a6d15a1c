#include "core/dense_eigensolver.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "core/backend.hpp"
#include "core/lapack_prototypes.hpp"

namespace pipevd {

int dense_eigenpairs(bool want_vectors, long n, double* a, long lda, double* w) {
  if (n <= 0) return 0;
  // dsyevd's workspace with vectors is 1 + 6n + 2n^2 doubles, an int.
  if (n > 32767 || lda > INT_MAX)
    throw ConfigurationError("pipevd: n = " + std::to_string(n) +
                             " is too large for LAPACK dsyevd's 32-bit workspace");
  const int in = static_cast<int>(n), ilda = static_cast<int>(lda);
  const char* jobz = want_vectors ? "V" : "N";
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  double query = 0;
  dsyevd_(jobz, "L", &in, a, &ilda, w, &query, &lwork, &iquery, &liwork, &info, 1, 1);
  lwork = std::max(1, static_cast<int>(query));
  liwork = std::max(1, iquery);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  dsyevd_(jobz, "L", &in, a, &ilda, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  return info;
}

namespace {

// zheevd on a in place.
int zheevd_in_place(bool want_vectors, char uplo, long n, std::complex<double>* a, long lda,
                    double* w) {
  const int in = static_cast<int>(n), ilda = static_cast<int>(lda);
  const char* jobz = want_vectors ? "V" : "N";
  const char tri[1] = {uplo};
  int info = 0, lwork = -1, lrwork = -1, liwork = -1, iquery = 0;
  std::complex<double> query = 0;
  double rquery = 0;
  zheevd_(jobz, tri, &in, a, &ilda, w, &query, &lwork, &rquery, &lrwork, &iquery, &liwork, &info, 1,
          1);
  lwork = std::max(1, static_cast<int>(query.real()));
  lrwork = std::max(1, static_cast<int>(rquery));
  liwork = std::max(1, iquery);
  std::vector<std::complex<double>> work(static_cast<std::size_t>(lwork));
  std::vector<double> rwork(static_cast<std::size_t>(lrwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  zheevd_(jobz, tri, &in, a, &ilda, w, work.data(), &lwork, rwork.data(), &lrwork, iwork.data(),
          &liwork, &info, 1, 1);
  return info;
}

}  // namespace

int dense_hermitian_eigenpairs(bool want_vectors, char uplo, long n, std::complex<double>* a,
                               long lda, double* w) {
  if (n <= 0) return 0;
  // zheevd's real workspace with vectors is 1 + 5n + 2n^2 doubles, an int.
  if (n > 32767 || lda > INT_MAX)
    throw ConfigurationError("pipevd: n = " + std::to_string(n) +
                             " is too large for LAPACK zheevd's 32-bit workspace");
  if (uplo != 'U' && uplo != 'u') return zheevd_in_place(want_vectors, uplo, n, a, lda, w);
  // From the upper triangle zhetrd's panels (zlatrd) hand ZGEMV rows of A that end in its last
  // column, and OpenBLAS's x86_64 ZGEMV kernel for TRANS = 'N' reads one stride (lda elements)
  // past such a row where M mod 4 = 2 (OpenMathLib/OpenBLAS#4013; Debian 12's 0.3.21 has it,
  // fixed in 0.3.24): past the end of A. So zheevd runs on a copy followed by one spare column.
  std::vector<std::complex<double>> padded(static_cast<std::size_t>(lda) * (n + 1));
  std::copy(a, a + lda * n, padded.begin());
  const int info = zheevd_in_place(want_vectors, uplo, n, padded.data(), lda, w);
  std::copy(padded.begin(), padded.begin() + lda * n, a);
  return info;
}

// Host memory is solved in place; device memory through a host copy (lda kept), written back
// only with vectors (otherwise a is destroyed anyway).
int EngineBackend::symmetric_eigensolver(bool want_vectors, long n, double* a, long lda,
                                         double* w) {
  if (n <= 0) return 0;
  if (host_memory()) return dense_eigenpairs(want_vectors, n, a, lda, w);
  std::vector<double> copy(static_cast<std::size_t>(lda) * n);
  copy_to_host(a, copy.data(), lda * n);
  const int info = dense_eigenpairs(want_vectors, n, copy.data(), lda, w);
  if (want_vectors) copy_to_device(copy.data(), a, lda * n);
  return info;
}

int EngineBackend::hermitian_eigensolver(bool want_vectors, char uplo, long n,
                                         std::complex<double>* a, long lda, double* w) {
  if (n <= 0) return 0;
  if (host_memory()) return dense_hermitian_eigenpairs(want_vectors, uplo, n, a, lda, w);
  const long doubles = 2 * lda * n;
  std::vector<std::complex<double>> copy(static_cast<std::size_t>(lda) * n);
  copy_to_host(reinterpret_cast<const double*>(a), reinterpret_cast<double*>(copy.data()), doubles);
  const int info = dense_hermitian_eigenpairs(want_vectors, uplo, n, copy.data(), lda, w);
  if (want_vectors)
    copy_to_device(reinterpret_cast<const double*>(copy.data()), reinterpret_cast<double*>(a),
                   doubles);
  return info;
}

}  // namespace pipevd
