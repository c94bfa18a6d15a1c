// Fused Householder QR of a tall-skinny panel (DBBR's panel, issue 5) in one cooperative kernel:
// one block per SM keeps its contiguous slab of rows in shared memory for the whole factorisation,
// and every column costs one grid-wide sync (the partials of x^T x and x^T A, from which beta, tau
// and v^T A follow), plus one at the start (each column's largest entry, for an exact scaling).
// This replaces cusolverDnXgeqrf's several small kernels per column, which are latency bound on
// panels of 32 or 64 columns. Reductions run in a fixed order (no atomics): results are bitwise
// repeatable, and every block computes the same beta and tau from the same partials.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace pipevd::gpu {

// How the fused kernel would run an m x nb panel on a device; ok = false where it does not apply
// (nb > kFusedPanelQrMaxCols, a slab that does not fit in shared memory, or no cooperative launch).
struct FusedPanelQrPlan {
  bool ok = false;
  int threads = 256;
  int blocks = 0;
  long rows_per_block = 0;
  std::size_t shared_bytes = 0;
};
constexpr long kFusedPanelQrMaxCols = 64;

// One block per SM (at most max_blocks where > 0: PIPEVD_GPU_PANEL_QR_BLOCKS), at least half a
// row per thread; 256 threads per block below m = 32768, 512 from there (threads: 256, 512 or 1024
// in their place where > 0, PIPEVD_GPU_PANEL_QR_THREADS).
FusedPanelQrPlan plan_fused_panel_qr(const cudaDeviceProp& props, long m, long nb,
                                     int max_blocks = 0, int threads = 0);
// Doubles of global scratch the plan needs (partials of the grid-wide reductions, row j).
std::int64_t fused_panel_qr_scratch(const FusedPanelQrPlan& plan, long nb);

// Householder QR of the m x nb panel (column-major, ldp) as LAPACK's dgeqr2 (dlarfg's beta/tau
// convention: tau = 0 where the column below the diagonal is zero): on return the panel holds R
// with zeros below the diagonal, y (ldy) the kk = min(m, nb) reflectors as an explicit unit lower
// trapezoid (zeros above the diagonal), tau the kk scalars, t (ldt >= kk) the kk x kk upper
// triangular T of Q = H_1 ... H_kk = I - Y T Y^T as LAPACK's dlarft('F', 'C') forms it (its
// strictly lower part not touched). Columns kk..nb of y are not touched.
// Queued on `stream`; `scratch` holds fused_panel_qr_scratch doubles. False (nothing queued)
// where the device cannot hold the whole grid at once after all (e.g. SMs limited by MPS).
bool fused_panel_qr(const FusedPanelQrPlan& plan, cudaStream_t stream, long m, long nb,
                    double* panel, long ldp, double* y, long ldy, double* tau, double* t, long ldt,
                    double* scratch);

}  // namespace pipevd::gpu
