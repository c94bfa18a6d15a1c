// The engine: one eigenproblem on E engine ranks, from the blockwise layout to eigenvalues and
// row blocks of eigenvectors, through the stages of the pipelined paper (reordered, §3.3):
//   1 DBBR (dense -> band b)            core/dbbr
//   2 bulge chasing (band -> T, U)      backend
//   3 D&C of T on rank 0, in a thread   core/tridiagonal_solver   } concurrent
//   4 Q_sb(rows_e, :) = I(rows_e, :) Q_s Q_b (SBR-back, BC-back)  }
//   5 Z(rows_e, :) = Q_sb(rows_e, :) Q_d, Q_d broadcast from rank 0   core/final_product
//     (with dc_fold: Q_d = Q_pre M, the D&C's top merges left to this product on every rank)
// Eigenvalues only (want_vectors false) stops after 2 and runs the backend's
// tridiagonal_eigenvalues (dsterf on the host, parallel bisection on the GPU).
#pragma once
#include <mpi.h>

#include <functional>

#include "base/engine_layout.hpp"
#include "core/backend.hpp"
#include "core/dbbr.hpp"
#include "core/sbr_back.hpp"
#include "core/timeline.hpp"
#include "core/tridiagonal_dc.hpp"

namespace pipevd {

// Stage 3's solver: LAPACK's dstedc on the host (n <= 46340, its 32-bit workspace), or
// core/tridiagonal_dc with the merges' GEMMs on the backend (Q_d stays in backend memory).
enum class TridiagonalSolver { Auto, Dstedc, Dc };
const char* to_string(TridiagonalSolver s);
// The solver `s` names for an n x n problem on a backend whose memory is (host_memory) or is not
// host memory: Auto as EngineOptions::tridiagonal says.
TridiagonalSolver resolve_tridiagonal_solver(TridiagonalSolver s, bool host_memory, long n);

struct EngineOptions {
  long b = 32;                   // bandwidth of DBBR
  long k = 1024;                 // DBBR's outer block and SBR-back's merged block width
  bool want_vectors = true;      // JOBZ = 'V'
  bool dc_in_thread = true;      // D&C concurrent with the back transformation on rank 0
  Timeline* timeline = nullptr;  // when set (started), each stage's interval is recorded in it
  // 'L' or 'U' (one engine rank only): a_cols holds only that triangle, the other may hold
  // anything (NaN included); the backend mirrors it after the upload (no host copy needed).
  char symmetrize = 0;
  // JOBZ = 'V': SBR-back queued on a companion backend (its own stream) before bulge chasing, so
  // its GEMMs run next to the latency-bound bulge-chasing kernel (they need only DBBR's panels),
  // which then keeps half of the SMs to itself where twice its sweeps per block fit a block
  // (EngineBackend::bulge_chase's beside_companion; b <= 32 and n / b < 2048). Bulge chasing
  // alone leaves most of the device idle, so SBR-back's GEMMs fill it; the route sets this on a
  // GPU where the memory plan with it fits (SBR-back's merged blocks are then alive during BC).
  bool overlap_sbr_back = false;
  // SBR-back beside DBBR itself (PIPEVD_SBR_BACK_BESIDE=dbbr), with several engine ranks and
  // eigenvectors: X is allocated before DBBR, and each merged block is merged and applied to it on
  // a companion's stream as soon as DBBR has made the block's panels, beside DBBR's chain of panel
  // messages, which leaves the device mostly idle; the rest runs beside bulge chasing as with
  // overlap_sbr_back. A rank forming Q_s from the left needs every block first, so it only runs
  // beside bulge chasing. X and the merged blocks are then alive during DBBR, and X's allocation
  // (agreed over the engine ranks) comes before DBBR's messages: the route sets this the same on
  // every rank, where every rank's memory plan with it fits.
  bool sbr_back_beside_dbbr = false;
  // D&C on the device (rank 0): start it before SBR-back instead of after. Its Q_d and work copy
  // (2 n^2) then sit next to SBR-back's merged blocks, so the route sets it only where the memory
  // plan with it fits. With several engine ranks each rank's back transformation is short, so a
  // D&C started after SBR-back would outlast rank 0's BC-back and hold up the final GEMM; started
  // earlier it is hidden behind SBR-back as well.
  bool dc_at_sbr_back = false;
  // SBR-back's order (PIPEVD_SBR_BACK_ORDER): Auto forms Q_s from the left on a rank that holds
  // every row (a third fewer flops); Right keeps the right-hand product there too, for A/B runs.
  // Ranks with part of the rows multiply from the right either way.
  SbrBackOrder sbr_back_order = SbrBackOrder::Auto;
  // Stage 3 by dc with eigenvectors: rank 0's D&C stops short of its top merges' GEMMs and hands
  // Q_pre and M (core/tridiagonal_dc.hpp's DcFold) to stage 5, where every rank forms
  // Z = (X Q_pre) M: the D&C shrinks to about a quarter (its two halves and the top secular
  // problem) while each rank's final product grows by h n^2 flops. Rank 0 holds its D&C's two
  // buffers through the product with Q_pre, so the route sets it, the same on every rank, only
  // with several engine ranks and where every rank's memory plan with it fits (PIPEVD_DC_FOLD).
  bool dc_fold = false;

  // Auto: dc on a device backend; dstedc on the host backend (the reference stays LAPACK), dc
  // there only where n exceeds dstedc's limit.
  TridiagonalSolver tridiagonal = TridiagonalSolver::Auto;
  DcOptions dc;                           // tridiagonal_dc's leaf, panel and threads
  DbbrProfiler* dbbr_profiler = nullptr;  // optional, not owned: DBBR's parts timed
  bool dbbr_z_on_every_rank = true;       // DbbrOptions::z_on_every_rank
  // DbbrOptions::cyclic_blocks: DBBR's outer blocks dealt out over the engine ranks in turn, the
  // uploaded columns moved there on the device (core/column_exchange); false: DBBR on the layout's
  // columns as they come (the default, as the policy's).
  bool dbbr_cyclic_blocks = false;
  // Called on every engine rank once DBBR's stage has ended, before the next stage's first
  // allocation (the two-stage engine only): the route joins the pool's second growth there
  // (interface/device_preparation), so that no later allocation maps memory beside it.
  std::function<void()> after_dbbr;
};

// Whether X is allocated before DBBR under opt on the layout (the same on every engine rank).
bool sbr_back_x_before_dbbr(const EngineOptions& opt, const EngineLayout& layout);
// Whether engine rank `rank` applies SBR-back's blocks beside DBBR: X before DBBR, and multiplied
// from the right there (forms_q_s_from_left says no).
bool sbr_back_beside_dbbr_applies(const EngineOptions& opt, const EngineLayout& layout, int rank);

// Seconds per stage on this rank (stage 3 on rank 0 only). gemm is stage 5 whole: the wait for
// rank 0, the broadcasts and the products (folded, both X Q_pre and its product with M).
struct EngineStats {
  double dbbr = 0, bulge_chasing = 0, dc = 0, sbr_back = 0, bc_back = 0, gemm = 0, total = 0;
  double bind = 0;  // of total: the backend bound to the engine ranks (NCCL made on a first call)
  double dc_wait = 0;  // of gemm: waiting for rank 0's D&C result (the load-balance report)
  // The D&C's top merges were folded into stage 5 (dc_fold, and rank 0's T reached a merge).
  bool dc_folded = false;
};

// Collective over `engine` (the rank order is the layout's). On engine rank e:
//   a_cols  (in)  columns [col_begin[e], col_begin[e+1]) of the full symmetric matrix, ld n
//                 (with opt.symmetrize one triangle of it); not modified;
//   w       (out) the n eigenvalues, ascending (every rank);
//   z_rows  (out) rows [row_begin[e], row_begin[e+1]) of the eigenvectors, ld max(1, height(e))
//                 (not referenced without want_vectors).
// Column boundaries must be multiples of effective_bandwidth(n, b) (see plan_engine_layout).
// Returns 0, or the tridiagonal solver's INFO (> 0) on every rank when it failed.
int run_engine(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout, const double* a_cols,
               double* w, double* z_rows, const EngineOptions& opt, EngineStats* stats);
// The same for a complex Hermitian matrix (PZHEEVD): a_cols its columns (with opt.symmetrize one
// triangle of it), z_rows complex; its band chases to a real tridiagonal, so stage 3 is the real
// D&C and W is real. The backend needs the complex operations (the host backend's).
int run_engine(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
               const Complex* a_cols, double* w, Complex* z_rows, const EngineOptions& opt,
               EngineStats* stats);

}  // namespace pipevd
