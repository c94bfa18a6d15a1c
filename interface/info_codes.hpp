// pipevd's own INFO values (README, "INFO codes"): outside every code ScaLAPACK's PDSYEVD returns
// (its argument errors are -1 .. -17 and -(100 i + j) for descriptors 7 and 12; its D&C failures
// (N+1) i + j with a 1-based j), so a caller that prints INFO can tell them apart. Every caller
// rank returns the same value, and the job goes on.
#pragma once

namespace pipevd {

// A configuration that cannot serve the call: a bad PIPEVD_* value, an engine asked for that this
// build or machine lacks, ScaLAPACK's pdsyevd_ not found for a forward.
constexpr int kInfoConfiguration = -1001;
// The engine asked for (PIPEVD_BACKEND=gpu or host) cannot fit the call in memory.
constexpr int kInfoOutOfMemory = -1002;
// The engine asked for failed (a device, communication or other error); auto forwards instead.
constexpr int kInfoEngineFailure = -1003;

// A NaN or an infinity in the referenced triangle of sub(A), whatever the route: INFO = N + 1 on
// every rank, with A, W and Z untouched. As a D&C code it would read "submatrix 0", which PDSYEVD
// never reports (its submatrix indices are 1-based), and dsterf's counts stay below N.
constexpr int info_non_finite(int n) { return n + 1; }

}  // namespace pipevd
