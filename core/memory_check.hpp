// Before the engine runs: does its predicted device memory (core/memory_plan.hpp) fit on every
// engine rank? Agreed over the caller's ranks, so that all of them run the engine, forward to
// ScaLAPACK (PIPEVD_BACKEND=auto) or return the same INFO (an explicit engine).
//
// PDSYEVD has no INFO value for "not enough memory" (its workspace is the caller's, checked by
// INFO = -14/-16), so under auto the call goes to ScaLAPACK (same results; a line on stderr with
// PIPEVD_VERBOSE >= 1 says why); under PIPEVD_BACKEND=gpu (or host) every rank returns pipevd's
// own INFO for it (README, "INFO codes") with a message naming the bytes required and usable.
#pragma once
#include <stdexcept>
#include <string>

#include "base/engine_layout.hpp"
#include "base/errors.hpp"
#include "core/memory_plan.hpp"

namespace pipevd {

// The engine cannot run this call with the memory at hand; thrown on every caller rank alike.
class EngineMemoryShortage : public OutOfMemory {
 public:
  using OutOfMemory::OutOfMemory;
};

// Bytes the engine may use on this rank: free device memory (a GPU) or unlimited (the host, < 0),
// capped by PIPEVD_GPU_MEMORY_LIMIT (limit > 0). Pure, for tests.
long usable_engine_bytes(long free_bytes, long limit);

// Margin kept free on the device beyond the prediction: cuBLAS/cuSOLVER workspaces, the memory
// pool's rounding, NCCL buffers: 1/32 of the prediction plus 512 MiB.
long engine_memory_margin(long predicted_bytes);

// Does `predicted` (+ margin) fit in `usable` (< 0: no limit)? Pure, for tests.
bool engine_memory_fits(long predicted_bytes, long usable_bytes);

// Collective over `caller` (every caller rank; engine_rank < 0 on ranks without an engine part).
// free_bytes: this engine rank's free device memory (< 0: unlimited, the host engine); limit:
// PIPEVD_GPU_MEMORY_LIMIT (0: none). Throws EngineMemoryShortage on every rank when some engine
// rank cannot fit its plan; the message names the worst rank's required and usable bytes.
// symmetric_product: DBBR's A W through the backend's one-triangle kernel (PIPEVD_GPU_AW, default
// symm, on a device that has it: gpu::symmetric_product_available); dc_fold: the plan with
// EngineOptions::dc_fold (where it is forced); words and dbbr_cyclic: plan_engine_memory's (2 for
// complex; DBBR's cyclic outer blocks).
void check_engine_memory(MPI_Comm caller, const EngineLayout& layout, int engine_rank, long b,
                         long k, bool want_vectors, bool on_gpu, long free_bytes, long limit,
                         bool symmetric_product = false, bool dc_fold = false, long words = 1,
                         bool dbbr_cyclic = false);

// The same agreement for a need known on each engine rank: need (bytes, < 0 on ranks that are no
// engine rank) against free_bytes capped by limit; n and want_vectors only name the call in the
// message. Collective over `caller`.
void agree_engine_memory(MPI_Comm caller, long n, bool want_vectors, bool on_gpu, long need,
                         long free_bytes, long limit);

// Host memory: `need`, the bytes this caller rank's call adds, summed over `node` (this node's
// caller ranks), against `limit` (> 0: PIPEVD_HOST_MEMORY_LIMIT) or else the memory cgroup's room
// (core/host_memory_room; none set: no check). Collective over `caller`; throws
// EngineMemoryShortage on every caller rank alike where some node falls short.
void agree_host_memory(MPI_Comm caller, MPI_Comm node, long n, long need, long limit);

}  // namespace pipevd
