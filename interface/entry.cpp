// The exported symbols: the C API and the Fortran names a relinked code reaches.
#include <cstddef>

#include "include/pipevd.h"
#include "interface/dispatch.hpp"

namespace {

void entry(const char* jobz, const char* uplo, const int* n, double* a, const int* ia,
           const int* ja, const int* desca, double* w, double* z, const int* iz, const int* jz,
           const int* descz, double* work, const int* lwork, int* iwork, const int* liwork,
           int* info) {
  // Like LSAME, only the first character counts; the hidden Fortran lengths are not needed.
  pipevd::run_pdsyevd(pipevd::PdsyevdCall{*jobz, *uplo, n, a, ia, ja, desca, w, z, iz, jz, descz,
                                          work, lwork, iwork, liwork, info});
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void pipevd_pdsyevd(
    const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
    const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz,
    double* work, const int* lwork, int* iwork, const int* liwork, int* info) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, liwork, info);
}

// Fortran: gfortran passes the lengths of JOBZ and UPLO after the last argument. C callers of
// pdsyevd_ often omit them; they are never read.
__attribute__((visibility("default"))) void pdsyevd_(
    const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
    const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz,
    double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
    std::size_t) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, liwork, info);
}

__attribute__((visibility("default"))) void pipevd_pdsyevd_(
    const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
    const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz,
    double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
    std::size_t) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, liwork, info);
}

__attribute__((visibility("default"))) const char* pipevd_version(void) { return PIPEVD_VERSION; }
}
