// The Fortran BLAS/LAPACK routines the engine calls (no CBLAS): 32-bit integers, hidden string
// lengths last. Callers check that sizes fit in int.
#pragma once
#include <cstddef>

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*, std::size_t, std::size_t);
void dtrmm_(const char*, const char*, const char*, const char*, const int*, const int*,
            const double*, const double*, const int*, double*, const int*, std::size_t, std::size_t,
            std::size_t, std::size_t);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void dlarft_(const char*, const char*, const int*, const int*, double*, const int*, const double*,
             double*, const int*, std::size_t, std::size_t);
void dlacpy_(const char*, const int*, const int*, const double*, const int*, double*, const int*,
             std::size_t);
void dlaset_(const char*, const int*, const int*, const double*, const double*, double*, const int*,
             std::size_t);
void dstedc_(const char*, const int*, double*, double*, double*, const int*, double*, const int*,
             int*, const int*, int*, std::size_t);
void dsterf_(const int*, double*, double*, int*);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*,
             const int*, int*, const int*, int*, std::size_t, std::size_t);
// COMPLEX*16 arrays as std::complex<double> (its layout is Fortran's).
void zheevd_(const char*, const char*, const int*, void*, const int*, double*, void*, const int*,
             double*, const int*, int*, const int*, int*, std::size_t, std::size_t);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
            const int*, const void*, const int*, const void*, void*, const int*, std::size_t,
            std::size_t);
void zher2k_(const char*, const char*, const int*, const int*, const void*, const void*, const int*,
             const void*, const int*, const double*, void*, const int*, std::size_t, std::size_t);
void ztrmm_(const char*, const char*, const char*, const char*, const int*, const int*, const void*,
            const void*, const int*, void*, const int*, std::size_t, std::size_t, std::size_t,
            std::size_t);
void zgeqrf_(const int*, const int*, void*, const int*, void*, void*, const int*, int*);
void zlarft_(const char*, const char*, const int*, const int*, void*, const int*, const void*,
             void*, const int*, std::size_t, std::size_t);
void zlacpy_(const char*, const int*, const int*, const void*, const int*, void*, const int*,
             std::size_t);
void zlaset_(const char*, const int*, const int*, const void*, const void*, void*, const int*,
             std::size_t);
}
extern "C" {
void dsteqr_(const char*, const int*, double*, double*, double*, const int*, double*, int*,
             std::size_t);
void dlaed4_(const int*, const int*, const double*, const double*, double*, const double*, double*,
             int*);
}
