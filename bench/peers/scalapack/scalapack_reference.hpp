// ScaLAPACK's own PDSYEVD (and PZHEEVD), reached through its library file so that pipevd's
// interposed pdsyevd_ is bypassed: the oracle that pipevd's answers are compared with.
#pragma once
#include <complex>

#include "base/scalapack_api.hpp"

namespace pipevd::test {

pdsyevd_fn scalapack_pdsyevd();

// Calls ScaLAPACK's PDSYEVD with a workspace query first; returns INFO.
int call_scalapack_pdsyevd(char jobz, char uplo, int n, double* a, int ia, int ja, const int* desca,
                           double* w, double* z, int iz, int jz, const int* descz);

pzheevd_fn scalapack_pzheevd();

// Calls ScaLAPACK's PZHEEVD with a workspace query first; returns INFO.
int call_scalapack_pzheevd(char jobz, char uplo, int n, std::complex<double>* a, int ia, int ja,
                           const int* desca, double* w, std::complex<double>* z, int iz, int jz,
                           const int* descz);

}  // namespace pipevd::test
