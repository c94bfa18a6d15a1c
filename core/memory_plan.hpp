// The engine's device memory per rank, predicted from the problem before it starts, so that a call
// that cannot fit is told so (or forwarded) instead of failing inside the engine.
//
// Counted from run_engine (core/engine.cpp), DBBR (core/dbbr.cpp), SBR-back (core/sbr_back.cpp) and
// the GPU backend's own buffers (gpu/gpu_backend.cu: panel QR workspaces, bulge chasing's working
// band, the device copy of the reflectors U it keeps for BC-back until the backend goes). Each
// stage's live buffers are summed; the peak is the largest stage. With eigenvectors, n = 49152 on
// one rank (b = 32, k = 1024), the stages hold about (units n^2 doubles = 18 GiB):
//   DBBR     A (1) + panels W, Y (1)                                             ~ 2.0 n^2
//            (beside DBBR, several ranks: + X (h/n) + the merged W, Y (1) by its end)
//   BC       panels (1) + band + U (1/2 + 1/(2b))                                ~ 1.5 n^2
//   SBR-back merged W, Y (1) + U (0.52) + X (1)                                  ~ 2.5 n^2
//   BC-back  U (0.52) + X (1) + the D&C's Q_d and work copy (2, rank 0)          ~ 3.5 n^2
//   GEMM     X (1) + Q_d (1) + Z (1)      (U's device copy released before)      ~ 3.0 n^2
// so BC-back next to the D&C (started after SBR-back for this reason), 3.5 n^2 = 63 GiB, is the
// peak, and fits an 80 GB device at n = 49152. With the D&C started at SBR-back
// (EngineOptions::dc_at_sbr_back) its 2 n^2 come on top of SBR-back's 2.5: the route chooses that
// only where the plan with it fits.
// With the D&C's top merge folded into the final GEMM (EngineOptions::dc_fold), the D&C's two
// buffers hold Q_pre and M instead of Q_d and its work copy, and the GEMM stage is two products
// (h this rank's rows of n):
//   Y = X Q_pre  X (h/n) + Q_pre packed (~1/2; rank 0: in its D&C buffer, 1)
//                + M (rank 0 only, 1) + Y (h/n)                      ~ 2h/n + 1/2, rank 0 2h/n + 2
//   Z = Y M      Y (h/n) + M (1) + Z (h/n)   (X and Q_pre released)  ~ 2h/n + 1
// so other ranks hold no more than with Q_d whole, and rank 0 stays below its BC-back next to the
// D&C wherever h <= n/2 (several engine ranks). The route chooses the fold only where every
// rank's plan with it fits. The fold also makes the D&C's buffers count on the host engine.
#pragma once
#include <cstddef>

#include "base/engine_layout.hpp"

namespace pipevd {

// The most device workspace a backend's symmetric_product (DBBR's A W on one triangle) holds
// during a call, in doubles: 512 MiB (the GPU kernel splits its work into passes to stay below).
constexpr long kSymmetricProductWorkspace = 1L << 26;
// The GPU backend runs that kernel for panels of b <= 32 columns and at least this many rows
// (below, its GEMMs were as fast); it holds no workspace elsewhere.
constexpr long kSymmetricProductMinRows = 8192;
constexpr long kSymmetricProductMaxWidth = 32;

// gpu/syr2k's tile (its diagonal blocks are whole tiles), its defaults: the order of its diagonal
// blocks, and the largest depth k for which it packs [A B] and [B A] (one GEMM of depth 2k per
// off-diagonal block).
constexpr int kSyr2kTile = 32;
constexpr long kSyr2kDiagonalBlock = 512;
constexpr long kSyr2kPackMaxK = 1024;

// gpu/syr2k's device workspace for an n x n update of depth k, taken from the stream-ordered pool
// for one call: the diagonal blocks' products (order `diagonal_block`: diag_block rounded up to a
// multiple of kSyr2kTile, at least n / 65535, at most n rounded up) and, for k <= pack_max_k, the
// packed operands (4 n k).
struct Syr2kWorkspace {
  long diagonal_block = 0, diagonal = 0, packed = 0;
  long total() const { return diagonal + packed; }
};
Syr2kWorkspace syr2k_workspace(long n, long k, long diag_block = kSyr2kDiagonalBlock,
                               long pack_max_k = kSyr2kPackMaxK);

struct EngineMemoryPlan {
  // Doubles live at once on this rank, per stage, and their maximum.
  long dbbr = 0, bulge_chasing = 0, tridiagonal = 0, back_transformation = 0, final_gemm = 0;
  long peak = 0;
  // DBBR's device workspaces in its stage, never live together: A W's one-triangle kernel (per
  // panel) and the trailing update's syr2k (per outer block); the larger one counts.
  long symmetric_product_workspace = 0, syr2k_workspace = 0;
  // The libraries' workspaces and the pool's rounding, counted in the peak beside each stage.
  long libraries = 0;
  // The largest single buffer a stage after DBBR allocates (X, U's device copy, a merged block,
  // the D&C's or the final product's n x n matrices, bulge chasing's working band): what a pool
  // grown in two pieces may have to map anew (core/pool_growth.hpp).
  long largest_later_buffer = 0;
  std::size_t peak_bytes() const { return sizeof(double) * static_cast<std::size_t>(peak); }
  // DBBR's stage with the libraries' margin: the buffers allocated before DBBR and those it holds.
  std::size_t dbbr_bytes() const {
    return sizeof(double) * static_cast<std::size_t>(dbbr + libraries);
  }
};

// Engine rank `rank` of `layout` with DBBR bandwidth b (as given to the engine, clamped inside)
// and block width k. gpu_buffers: count the GPU backend's own workspaces and reflector cache
// (a device backend); false counts what goes through EngineBackend::allocate only.
// overlap_sbr_back: EngineOptions::overlap_sbr_back (SBR-back next to bulge chasing);
// dc_at_sbr_back: EngineOptions::dc_at_sbr_back (the D&C's device buffers during SBR-back);
// symmetric_product: DBBR's A W through the backend's symmetric_product kernel (the route passes
// whether its backend runs it: PIPEVD_GPU_AW, default symm, on a device that has the kernel);
// dc_fold: EngineOptions::dc_fold (stage 3 by tridiagonal_dc, its top merge folded into the final
// GEMM). words: doubles per element of the matrix's scalar, 2 for a complex Hermitian matrix
// (A, the panels, the band, U, X and Z count twice; the D&C's real Q_d, Q_pre and M once). The
// GPU backend's complex DBBR holds neither workspace above (its A W by ZGEMM, its trailing update
// by cublasZher2k), whatever symmetric_product says. dbbr_cyclic: EngineOptions::
// dbbr_cyclic_blocks (DBBR on its cyclic outer blocks, which with several engine ranks holds the
// uploaded columns beside them while they move there). sbr_back_beside_dbbr: EngineOptions::
// sbr_back_beside_dbbr (with several engine ranks X, the merged blocks and SBR-back's workspaces
// alive during DBBR, next to its panels and buffers, and SBR-back's rest beside bulge chasing as
// with overlap_sbr_back).
EngineMemoryPlan plan_engine_memory(const EngineLayout& layout, int rank, long b, long k,
                                    bool want_vectors, bool gpu_buffers = true,
                                    bool overlap_sbr_back = false, bool dc_at_sbr_back = false,
                                    bool symmetric_product = false, bool dc_fold = false,
                                    long words = 1, bool dbbr_cyclic = false,
                                    bool sbr_back_beside_dbbr = false);

// Host doubles the reflectors U of bulge chasing hold on each engine rank from bulge chasing to
// BC-back: the host engine's whole store (any scalar). The GPU engine's chase keeps v and tau on
// the device (plan_engine_memory counts them there); its complex chase still brings D and the
// chased subdiagonal it makes T real from (n complex each) to the host, its real one nothing.
// 0 without eigenvectors. b as given to the engine (clamped inside); on_gpu: the GPU engine; words
// as for plan_engine_memory.
long host_reflector_doubles(long n, long b, bool want_vectors, bool on_gpu, long words);

}  // namespace pipevd
