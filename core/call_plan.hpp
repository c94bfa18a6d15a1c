// The route's "plan" step: what one call runs, fixed before anything moves. The engine layout over
// the engine ranks (on several GPUs with eigenvectors the heights follow BC-back's waves, with the
// pipelined paper's load-balance slack, §3.4), the memory fit on every engine rank (agreed over the
// caller ranks, core/memory_check.hpp), the overlaps this rank's memory plan allows, and whether
// the D&C's top merge folds into the final GEMM (agreed over the caller ranks).
#pragma once
#include <mpi.h>

#include <string>

#include "base/engine_layout.hpp"

namespace pipevd {

// PIPEVD_DC_FOLD: the D&C's top merge folded into the final GEMM (EngineOptions::dc_fold) by the
// plan (auto), wherever stage 3 is dc with eigenvectors (on), or never (off).
enum class DcFoldSetting { Auto, On, Off };
// "auto", "on" or "off"; anything else throws std::invalid_argument (the policy has checked the
// value already).
DcFoldSetting dc_fold_setting(const std::string& name);

// PIPEVD_SBR_BACK_BESIDE: SBR-back next to bulge chasing (EngineOptions::overlap_sbr_back) where
// the memory plan with it fits (auto, on), or after it (off); dbbr: beside DBBR itself
// (EngineOptions::sbr_back_beside_dbbr) with several engine ranks, on the host engine too, where
// every engine rank's plan with it fits, else as on.
enum class SbrBackBesideSetting { Auto, On, Off, Dbbr };
// "auto", "on", "off" or "dbbr"; anything else throws std::invalid_argument.
SbrBackBesideSetting sbr_back_beside_setting(const std::string& name);

// PIPEVD_DC_EARLY: engine rank 0's D&C started at SBR-back instead of after it
// (EngineOptions::dc_at_sbr_back) where the memory plan with it fits: with several engine ranks
// (auto), with any number (on), or never (off).
enum class DcEarlySetting { Auto, On, Off };
// "auto", "on" or "off"; anything else throws std::invalid_argument.
DcEarlySetting dc_early_setting(const std::string& name);

struct CallPlanInput {
  long n = 0;
  int engine_ranks = 1;
  int engine_rank = -1;   // this rank's place among the engine ranks; -1: not an engine rank
  long b = 32, k = 1024;  // DBBR's bandwidth and outer block (EngineOptions)
  bool want_vectors = true;
  bool on_gpu = false;
  long wave_rows = 0;              // BC-back's rows at once on engine rank 0's device (0: unknown)
  long free_bytes = -1;            // this engine rank's free device memory (< 0: unlimited)
  long memory_limit = 0;           // PIPEVD_GPU_MEMORY_LIMIT (0: none)
  bool symmetric_product = false;  // DBBR's A W by the one-triangle kernel (its workspace counts)
  bool dc_solver =
      false;  // stage 3 by core/tridiagonal_dc (resolve_tridiagonal_solver), not dstedc
  DcFoldSetting dc_fold = DcFoldSetting::Auto;
  SbrBackBesideSetting sbr_back_beside = SbrBackBesideSetting::Auto;
  DcEarlySetting dc_early = DcEarlySetting::Auto;
  long words = 1;  // doubles per element: 2 for a complex Hermitian matrix (core/memory_plan.hpp)
  bool dbbr_cyclic = false;  // EngineOptions::dbbr_cyclic_blocks (DBBR's columns, in the plan)
  // dbbr_cyclic is a default (PIPEVD_DBBR_COLUMNS=auto), not forced: blockwise where some engine
  // rank's plan fits only without the cyclic columns' extra copy.
  bool dbbr_cyclic_default = false;
};

struct CallPlan {
  EngineLayout layout;
  // EngineOptions' overlaps, chosen where this rank's memory plan with them fits: SBR-back next
  // to bulge chasing (a GPU with eigenvectors, unless PIPEVD_SBR_BACK_BESIDE=off), and engine rank
  // 0's D&C started at SBR-back (several GPUs, or PIPEVD_DC_EARLY=on; one GPU keeps it after by
  // default, where BC-back outlasts it).
  bool overlap_sbr_back = false;
  bool dc_at_sbr_back = false;
  // EngineOptions::sbr_back_beside_dbbr, the same on every caller rank (PIPEVD_SBR_BACK_BESIDE=dbbr
  // where every engine rank's plan with it fits); overlap_sbr_back with it.
  bool sbr_back_beside_dbbr = false;
  // EngineOptions::dc_fold, the same on every caller rank: forced (PIPEVD_DC_FOLD=on), or under
  // auto with several engine ranks where every engine rank's plan with it fits; only with
  // eigenvectors and stage 3 by dc. The overlaps above are chosen with it.
  bool dc_fold = false;
  // EngineOptions::dbbr_cyclic_blocks, the same on every caller rank: the input's, or blockwise
  // where it was a default that some engine rank's plan does not fit.
  bool dbbr_cyclic = false;
  // This engine rank's planned peak of device memory with those overlaps (0: not on a GPU).
  long device_bytes = 0;
  // Of that plan (0 where device_bytes is): DBBR's stage (EngineMemoryPlan::dbbr_bytes) and the
  // largest single buffer of a later stage, in bytes, for the pool's staged growth
  // (core/pool_growth.hpp).
  long device_dbbr_bytes = 0;
  long device_largest_later_bytes = 0;
};

// Collective over `caller` (every caller rank, engine or not). Throws EngineMemoryShortage on every
// caller rank alike where some engine rank cannot fit the plan without overlaps (with the fold
// where it is forced).
CallPlan plan_call(MPI_Comm caller, const CallPlanInput& in);

}  // namespace pipevd
