// Page-locked host staging kept between calls, per process. A backend lives for one call, and a
// pageable copy of a matrix goes through two pinned chunks of up to 64 MiB: pinning them anew each
// call (cudaHostAlloc, then cudaFreeHost) is a fixed cost of every repeated call that the copy
// itself does not need. Blocks come back here when their backend goes; release_pinned_staging()
// hands them to the driver (pipevd_release(), and the end of a call that keeps no memory).
#pragma once
#include <cstddef>

namespace pipevd::gpu {

// A block of at least `count` doubles (a kept one at most twice as large, else a new one, portable
// to every device's context); *got: its size in doubles. nullptr where the driver refuses (its
// error cleared), after dropping the kept blocks and trying once more.
double* take_pinned_staging(long count, long* got);
// `p` (of `count` doubles, from take_pinned_staging) kept for a later take.
void keep_pinned_staging(double* p, long count);
// Frees every kept block; blocks taken and not yet kept stay theirs.
void release_pinned_staging();
// Bytes kept now.
std::size_t pinned_staging_bytes();

}  // namespace pipevd::gpu
