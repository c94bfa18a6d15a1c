// One PDSYEVD call's arguments, as the caller passed them (Fortran conventions: 1-based
// IA/JA/IZ/JZ, BLACS descriptors), bundled so the stages after the entry point take one value.
#pragma once
#include "base/scalapack_api.hpp"

namespace pipevd {

struct PdsyevdCall {
  char jobz;  // first character, as passed (case kept)
  char uplo;
  const int* n;
  double* a;
  const int* ia;
  const int* ja;
  const int* desca;
  double* w;
  double* z;
  const int* iz;
  const int* jz;
  const int* descz;
  double* work;
  const int* lwork;
  int* iwork;
  const int* liwork;
  int* info;
};

}  // namespace pipevd
