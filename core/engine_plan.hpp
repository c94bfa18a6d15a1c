// How the engine splits a problem over E ranks: column widths for the band reduction (multiples
// of b, so no panel straddles two ranks) and row heights for the back transformation from the
// load-balance model of the pipelined paper §3.4 (rank e does less of DBBR than e+1, so it takes
// more rows of SBR-back, BC-back and the final GEMM).
#pragma once
#include <vector>

#include "redistribute/engine_layout.hpp"

namespace pipevd {

// Equal column blocks in whole units of the effective bandwidth (the last rank also takes the
// n mod b remainder) and row heights from balanced_row_heights.
EngineLayout plan_engine_layout(long n, int ranks, long b, long k, double slack = 0.05);

// Work of DBBR per rank (flops, a model: A W rows, panel QR, panel and trailing updates).
std::vector<double> dbbr_flops_per_rank(long n, const std::vector<long>& col_begin, long b, long k);

// Row heights (summing to n) that equalise DBBR flops + rows * (SBR-back + BC-back + GEMM flops
// per row), each kept within (1 +- slack) of n / E as the paper does (slack 0: equal heights).
std::vector<long> balanced_row_heights(long n, const std::vector<long>& col_begin, long b, long k,
                                       double slack);

}  // namespace pipevd
