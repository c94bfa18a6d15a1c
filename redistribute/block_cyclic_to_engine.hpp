// Block-cyclic A (any grid, MB/NB, RSRC/CSRC, IA/JA, LLD) -> the engine's column blocks of the
// full symmetric (or Hermitian) matrix, rebuilt from the triangle UPLO names (the other one is
// never read).
#pragma once
#include <complex>

#include "base/engine_layout.hpp"
#include "redistribute/exchange.hpp"

namespace pipevd {

// Collective over comm.caller (every process of the grid of desca). ia, ja are 1-based as in
// ScaLAPACK. On engine rank e, a_cols receives columns [col_begin[e], col_begin[e+1]) of the n x n
// symmetric matrix A(ia:ia+n-1, ja:ja+n-1), all n rows, leading dimension n; other ranks (and
// ranks of width 0) may pass nullptr.
void block_cyclic_to_engine(char uplo, long n, const double* a, long ia, long ja, const int* desca,
                            const EngineLayout& layout, const EngineComm& comm, double* a_cols,
                            const ExchangeOptions& options = {}, PhaseTimes* times = nullptr);
// The same for a Hermitian A (PZHEEVD): the other triangle is the stored one's conjugate.
void block_cyclic_to_engine(char uplo, long n, const std::complex<double>* a, long ia, long ja,
                            const int* desca, const EngineLayout& layout, const EngineComm& comm,
                            std::complex<double>* a_cols, const ExchangeOptions& options = {},
                            PhaseTimes* times = nullptr);

}  // namespace pipevd
