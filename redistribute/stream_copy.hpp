// Copies whose destination is not read again soon (the engine's columns, the node window): with
// non-temporal stores, so the destination's lines are not read into the cache first (a third of
// the memory traffic of a copy) and do not evict the source's. Plain copies where the CPU has no
// SSE2 or the destination is not 16-byte aligned. Stores from a thread become visible to other
// processes only after stream_fence() (or a locked instruction) on that thread.
#pragma once

namespace pipevd {

// dst[0, len) = src[0, len).
void stream_copy(double* dst, const double* src, long len);

// As transpose_tile (tile_transpose.hpp): dst[c + r * ldd] = src[r + c * lds].
void stream_transpose_tile(const double* src, long lds, long rows, long cols, double* dst,
                           long ldd);

// Orders this thread's non-temporal stores before its later stores (sfence).
void stream_fence();

}  // namespace pipevd
