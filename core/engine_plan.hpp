// How the engine splits a problem over E ranks: column widths for the band reduction (multiples
// of b, so no panel straddles two ranks) and row heights for the back transformation.
//
// The heights. The pipelined paper's §3.4 gives rank e more rows than e+1 because it finishes DBBR
// earlier and starts bulge chasing and the back transformation earlier. Here bulge chasing is
// replicated and starts once the whole band is gathered, so every rank starts the back
// transformation at the same time: DBBR's imbalance ends in a wait, not in an early start. What
// differs is engine rank 0, which also runs the D&C, whose kernels and GEMMs share its GPU: on two
// H200s at n = 32768 rank 0's BC-back took 7.27 s against rank 1's 3.53 s, with 17204 rows against
// 15564 under the paper's model (bench/RESULTS.md, 2026-11-22 night). So rank 0 takes the fewest
// rows the paper's slack allows and the others share the rest.
#pragma once
#include <vector>

#include "redistribute/engine_layout.hpp"

namespace pipevd {

// Equal column blocks in whole units of the effective bandwidth (the last rank also takes the
// n mod b remainder) and row heights from back_transformation_heights.
EngineLayout plan_engine_layout(long n, int ranks, long b, double slack = 0.05);

// Row heights summing to n: engine rank 0 (the D&C's) (1 - slack) n / E, rounded down, the other
// ranks the rest in equal shares (the first ones one more where it does not divide); slack 0 or
// one rank: equal shares.
std::vector<long> back_transformation_heights(long n, int ranks, double slack);

}  // namespace pipevd
