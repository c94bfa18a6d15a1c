// One call's arguments, as the caller passed them (Fortran conventions: 1-based IA/JA/IZ/JZ,
// BLACS descriptors), bundled so the stages after the entry point take one value: PDSYEVD's
// (Scalar = double) or PZHEEVD's (Scalar = std::complex<double>, with its real workspace RWORK).
#pragma once
#include <complex>

#include "base/scalapack_api.hpp"

namespace pipevd {

template <class Scalar>
struct EigenCall {
  char jobz;  // first character, as passed (case kept)
  char uplo;
  const int* n;
  Scalar* a;
  const int* ia;
  const int* ja;
  const int* desca;
  double* w;
  Scalar* z;
  const int* iz;
  const int* jz;
  const int* descz;
  Scalar* work;
  const int* lwork;
  int* iwork;
  const int* liwork;
  int* info;
  double* rwork = nullptr;  // PZHEEVD only
  const int* lrwork = nullptr;
};

using PdsyevdCall = EigenCall<double>;
using PzheevdCall = EigenCall<std::complex<double>>;

// The routine's name, as its messages and PXERBLA give it.
inline const char* routine_name(const PdsyevdCall&) { return "PDSYEVD"; }
inline const char* routine_name(const PzheevdCall&) { return "PZHEEVD"; }
// pipevd's own lines ("pipevd: pdsyevd route=...").
inline const char* routine_tag(const PdsyevdCall&) { return "pdsyevd"; }
inline const char* routine_tag(const PzheevdCall&) { return "pzheevd"; }

// The context whose grid the routine's checks run on (and PXERBLA reports to): PDSYEVD takes
// DESCZ's, PZHEEVD DESCA's (the two must agree for a call to pass either's checks).
inline int call_context(const PdsyevdCall& c) { return c.descz[scalapack::CTXT_]; }
inline int call_context(const PzheevdCall& c) { return c.desca[scalapack::CTXT_]; }

}  // namespace pipevd
