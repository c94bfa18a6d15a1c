// How the engine splits a problem over E ranks: column widths for the band reduction (multiples
// of b, so no panel straddles two ranks) and row heights for the back transformation.
//
// The heights. The pipelined paper's §3.4 gives rank e more rows than e+1 because it finishes DBBR
// earlier and starts bulge chasing and the back transformation earlier. Here bulge chasing is
// replicated and starts once the whole band is gathered, so every rank starts the back
// transformation at the same time: DBBR's imbalance ends in a wait, not in an early start. Equal
// shares are the default: BC-back runs in waves of rows (a fixed number of resident blocks, each
// holding a fixed number of rows), so a rank a few rows over a whole wave pays for a second, nearly
// empty wave and can take twice as long as one just under it; the D&C running beside BC-back on
// rank 0's GPU does not change that. A slack > 0 gives rank 0 (the D&C's) fewer rows. Where the
// device's wave is known (the route, several GPUs), the other ranks fill their waves and rank 0
// takes the rest (back_transformation_heights).
#pragma once
#include <vector>

#include "base/engine_layout.hpp"

namespace pipevd {

// Equal column blocks in whole units of the effective bandwidth (the last rank also takes the
// n mod b remainder) and row heights from back_transformation_heights.
EngineLayout plan_engine_layout(long n, int ranks, long b, double slack = 0.0, long wave_rows = 0);

// Row heights summing to n. Without wave_rows: engine rank 0 (the D&C's) (1 - slack) n / E,
// rounded down, the other ranks the rest in equal shares (the first ones one more where it does
// not divide); slack 0 or one rank: equal shares. With wave_rows (the rows BC-back processes at
// once on the device, gpu::bc_back_wave_rows) and several ranks: the other ranks take up to
// (1 + slack) n / E rows each, or all the rows of the waves that n / E needs where that is two
// waves or more and leaves rank 0 a wave fewer (and some rows), but never more waves than n / E
// needs; rank 0 takes the rest,
// so that no rank runs an extra wave and rank 0's BC-back leaves SMs free for the D&C's kernels
// next to it.
std::vector<long> back_transformation_heights(long n, int ranks, double slack, long wave_rows = 0);

}  // namespace pipevd
