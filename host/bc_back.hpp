// BC-back on the host: applies the bulge-chasing reflectors Q_b to a block of rows.
#pragma once

#include <complex>

#include "core/reflector_store.hpp"

namespace pipevd::host {

// X := X * Q_b for X m x n (n = U.layout.n), column-major with leading dimension ldx >= max(1,m)
// (std::invalid_argument otherwise).
// Rows of X are independent: any row block gives bitwise the rows that the whole X would.
// Reflectors are applied in the BC-back order of for_each_in_bc_back_order() with `group`
// sweeps per block (the result does not depend on `group`; group <= 0 picks b).
void apply_bc_back(const ReflectorStore& U, long m, double* x, long ldx, long group = 0);
// The Hermitian band's: X := X * Q_b * D (D = U.phase, core/reflector_store.hpp), so that X's
// columns multiply the real tridiagonal's eigenvectors.
void apply_bc_back(const ComplexReflectorStore& U, long m, std::complex<double>* x, long ldx,
                   long group = 0);

// X := Q_b * X for X n x m, ldx >= max(1, n): the conventional BC-back on the D&C eigenvectors
// (Q_b * Q_d), reflectors in the reverse of generation order.
void apply_bc_back_left(const ReflectorStore& U, long m, double* x, long ldx);

}  // namespace pipevd::host
