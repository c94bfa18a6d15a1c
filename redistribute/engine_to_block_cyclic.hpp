// The engine's row blocks of Z -> the caller's block-cyclic Z (any grid, MB/NB, RSRC/CSRC, IZ/JZ).
#pragma once
#include <complex>

#include "base/engine_layout.hpp"
#include "redistribute/exchange.hpp"

namespace pipevd {

// Collective over comm.caller (every process of the grid of descz). On engine rank e, z_rows holds
// rows [row_begin[e], row_begin[e+1]) of the n x n matrix, all n columns, leading dimension
// max(1, height(e)); other ranks pass nullptr. Writes Z(iz:iz+n-1, jz:jz+n-1) (1-based) and
// nothing else of z.
void engine_to_block_cyclic(long n, const double* z_rows, const EngineLayout& layout,
                            const EngineComm& comm, double* z, long iz, long jz, const int* descz,
                            const ExchangeOptions& options = {}, PhaseTimes* times = nullptr);
// The same for complex Z (PZHEEVD).
void engine_to_block_cyclic(long n, const std::complex<double>* z_rows, const EngineLayout& layout,
                            const EngineComm& comm, std::complex<double>* z, long iz, long jz,
                            const int* descz, const ExchangeOptions& options = {},
                            PhaseTimes* times = nullptr);

}  // namespace pipevd
