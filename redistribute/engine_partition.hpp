// Column (and row) partitions of the engine layout for tests and callers until the engine's load
// balance model decides its own.
#pragma once
#include <vector>

#include "base/engine_layout.hpp"

namespace pipevd {

// Splits [0, n) over `parts` ranks in whole blocks of `block` (the first ranks get one block more
// where they do not divide evenly); the remainder n mod block goes to the last rank. Returns the
// parts+1 boundaries.
std::vector<long> even_partition(long n, int parts, long block);

// Boundaries from explicit widths (which must sum to n).
std::vector<long> partition_from_widths(const std::vector<long>& widths);

// Columns and rows both split by even_partition.
EngineLayout even_layout(long n, int engine_ranks, long block);

}  // namespace pipevd
