// Declarations of the BLACS / ScaLAPACK / LAPACK routines pipevd calls (Fortran ABI, gfortran's
// hidden character lengths as size_t). One place, so every file agrees on the prototypes.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace pipevd::scalapack {
// Indices into a BLACS descriptor (0-based for C; ScaLAPACK's DTYPE_=1 ... LLD_=9).
enum Desc : int {
  DTYPE_ = 0,
  CTXT_ = 1,
  M_ = 2,
  N_ = 3,
  MB_ = 4,
  NB_ = 5,
  RSRC_ = 6,
  CSRC_ = 7,
  LLD_ = 8
};
constexpr int kDescLen = 9;
}  // namespace pipevd::scalapack

extern "C" {
// BLACS
void blacs_gridinfo_(const int* ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void blacs_get_(const int* ictxt, const int* what, int* val);
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_pinfo(int* mypnum, int* nprocs);
int Cblacs_pnum(int ictxt, int prow, int pcol);
MPI_Comm Cblacs2sys_handle(int sysctxt);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void igamx2d_(const int* ictxt, const char* scope, const char* top, const int* m, const int* n,
              int* a, const int* lda, int* rra, int* rca, const int* rcflag, const int* rdest,
              const int* cdest, std::size_t scope_len, std::size_t top_len);

// ScaLAPACK tools
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void pxerbla_(const int* ictxt, const char* srname, const int* info, std::size_t srname_len);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja,
               const int* desca, double* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);
// Complex*16 arguments as double[2] per element (std::complex<double>'s layout).
void pzgemr2d_(const int* m, const int* n, const void* a, const int* ia, const int* ja,
               const int* desca, void* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);

// The signature of PDSYEVD (Fortran, with gfortran's hidden lengths of JOBZ and UPLO).
using pdsyevd_fn = void (*)(const char* jobz, const char* uplo, const int* n, double* a,
                            const int* ia, const int* ja, const int* desca, double* w, double* z,
                            const int* iz, const int* jz, const int* descz, double* work,
                            const int* lwork, int* iwork, const int* liwork, int* info,
                            std::size_t jobz_len, std::size_t uplo_len);
// PZHEEVD's (COMPLEX*16 A, Z and WORK as std::complex<double>, the real RWORK after LWORK).
using pzheevd_fn = void (*)(const char* jobz, const char* uplo, const int* n, void* a,
                            const int* ia, const int* ja, const int* desca, double* w, void* z,
                            const int* iz, const int* jz, const int* descz, void* work,
                            const int* lwork, double* rwork, const int* lrwork, int* iwork,
                            const int* liwork, int* info, std::size_t jobz_len,
                            std::size_t uplo_len);
}

extern "C" {
// BLACS collectives on integers (C interface), used for ScaLAPACK's global argument check.
void Cigebs2d(int ictxt, const char* scope, const char* top, int m, int n, int* a, int lda);
void Cigebr2d(int ictxt, const char* scope, const char* top, int m, int n, int* a, int lda,
              int rsrc, int csrc);
void Cigamn2d(int ictxt, const char* scope, const char* top, int m, int n, int* a, int lda, int* ra,
              int* ca, int ldia, int rdest, int cdest);
}
