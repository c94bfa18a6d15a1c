#include "core/call_plan.hpp"

#include <stdexcept>

#include "core/engine_plan.hpp"
#include "core/memory_check.hpp"
#include "core/memory_plan.hpp"

namespace pipevd {
namespace {

// How far above n / E the other ranks' heights may go to fill their BC-back waves, the paper's
// load-balance slack (§3.4).
constexpr double kWaveSlack = 0.05;

// This engine rank's memory plan with these overlaps and the fold (on the host engine, what goes
// through its backend), and its peak.
EngineMemoryPlan device_plan(const CallPlanInput& in, const EngineLayout& layout,
                             bool overlap_sbr_back, bool dc_at_sbr_back, bool dc_fold,
                             bool beside_dbbr = false) {
  return plan_engine_memory(layout, in.engine_rank, in.b, in.k, in.want_vectors, in.on_gpu,
                            overlap_sbr_back, dc_at_sbr_back, in.symmetric_product, dc_fold,
                            in.words, in.dbbr_cyclic, beside_dbbr);
}
long device_peak(const CallPlanInput& in, const EngineLayout& layout, bool overlap_sbr_back,
                 bool dc_at_sbr_back, bool dc_fold, bool beside_dbbr = false) {
  return static_cast<long>(
      device_plan(in, layout, overlap_sbr_back, dc_at_sbr_back, dc_fold, beside_dbbr).peak_bytes());
}

// Whether this engine rank's plan with these overlaps and the fold fits.
bool plan_fits(const CallPlanInput& in, const EngineLayout& layout, bool overlap_sbr_back,
               bool dc_at_sbr_back, bool dc_fold, bool beside_dbbr = false) {
  return engine_memory_fits(
      device_peak(in, layout, overlap_sbr_back, dc_at_sbr_back, dc_fold, beside_dbbr),
      usable_engine_bytes(in.free_bytes, in.memory_limit));
}

// Collective over `caller`: SBR-back beside DBBR where asked for (PIPEVD_SBR_BACK_BESIDE=dbbr),
// with eigenvectors on several engine ranks, and where every engine rank's plan with it fits; it
// moves X's agreed allocation before DBBR, so every rank must take it alike.
bool agree_beside_dbbr(MPI_Comm caller, const CallPlanInput& in, const EngineLayout& layout,
                       bool dc_fold) {
  if (in.sbr_back_beside != SbrBackBesideSetting::Dbbr || !in.want_vectors || in.engine_ranks < 2)
    return false;
  int fits = in.engine_rank < 0 || plan_fits(in, layout, true, false, dc_fold, true) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, caller);
  return fits == 1;
}

// SBR-back beside bulge chasing on this engine rank: beside DBBR includes it; else on a GPU with
// eigenvectors unless off, where this rank's plan with it fits (dbbr that does not fit falls back
// to it).
bool beside_chase(const CallPlanInput& in, const EngineLayout& layout, bool beside_dbbr,
                  bool dc_fold) {
  if (beside_dbbr) return true;
  if (!in.on_gpu || !in.want_vectors || in.engine_rank < 0 ||
      in.sbr_back_beside == SbrBackBesideSetting::Off)
    return false;
  return plan_fits(in, layout, true, false, dc_fold);
}

// Collective over `caller`: the fold where it applies (eigenvectors, stage 3 by dc) and is forced,
// or under auto with several engine ranks where every engine rank's plan with it (and without
// overlaps) fits.
bool agree_dc_fold(MPI_Comm caller, const CallPlanInput& in, const EngineLayout& layout) {
  if (!in.want_vectors || !in.dc_solver || in.dc_fold == DcFoldSetting::Off) return false;
  if (in.dc_fold == DcFoldSetting::On) return true;
  if (in.engine_ranks < 2) return false;
  int fits = in.engine_rank < 0 || plan_fits(in, layout, false, false, true) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, caller);
  return fits == 1;
}

// Collective over `caller`: DBBR's cyclic columns where asked for, forced, or by default where
// every engine rank's plan with them (and without overlaps, with the fold where it is forced) fits.
bool agree_dbbr_cyclic(MPI_Comm caller, const CallPlanInput& in, const EngineLayout& layout,
                       bool forced_fold) {
  if (!in.dbbr_cyclic || !in.dbbr_cyclic_default) return in.dbbr_cyclic;
  int fits = in.engine_rank < 0 || plan_fits(in, layout, false, false, forced_fold) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, caller);
  return fits == 1;
}

}  // namespace

DcFoldSetting dc_fold_setting(const std::string& name) {
  if (name == "auto") return DcFoldSetting::Auto;
  if (name == "on") return DcFoldSetting::On;
  if (name == "off") return DcFoldSetting::Off;
  throw std::invalid_argument("D&C fold '" + name + "' is not one of auto, on, off");
}

SbrBackBesideSetting sbr_back_beside_setting(const std::string& name) {
  if (name == "auto") return SbrBackBesideSetting::Auto;
  if (name == "on") return SbrBackBesideSetting::On;
  if (name == "off") return SbrBackBesideSetting::Off;
  if (name == "dbbr") return SbrBackBesideSetting::Dbbr;
  throw std::invalid_argument("SBR-back beside '" + name + "' is not one of auto, on, off, dbbr");
}

DcEarlySetting dc_early_setting(const std::string& name) {
  if (name == "auto") return DcEarlySetting::Auto;
  if (name == "on") return DcEarlySetting::On;
  if (name == "off") return DcEarlySetting::Off;
  throw std::invalid_argument("D&C early '" + name + "' is not one of auto, on, off");
}

CallPlan plan_call(MPI_Comm caller, const CallPlanInput& given) {
  CallPlan p;
  p.layout = plan_engine_layout(given.n, given.engine_ranks, given.b,
                                given.wave_rows > 0 ? kWaveSlack : 0.0, given.wave_rows);
  const bool forced_fold =
      given.dc_fold == DcFoldSetting::On && given.want_vectors && given.dc_solver;
  CallPlanInput in = given;
  in.dbbr_cyclic = p.dbbr_cyclic = agree_dbbr_cyclic(caller, given, p.layout, forced_fold);
  check_engine_memory(caller, p.layout, in.engine_rank, in.b, in.k, in.want_vectors, in.on_gpu,
                      in.free_bytes, in.memory_limit, in.symmetric_product, forced_fold, in.words,
                      in.dbbr_cyclic);
  p.dc_fold = agree_dc_fold(caller, in, p.layout);
  const bool engine = in.engine_rank >= 0;
  p.sbr_back_beside_dbbr = agree_beside_dbbr(caller, in, p.layout, p.dc_fold);
  p.overlap_sbr_back = beside_chase(in, p.layout, p.sbr_back_beside_dbbr, p.dc_fold);
  const bool dc_early = in.dc_early == DcEarlySetting::On ||
                        (in.dc_early == DcEarlySetting::Auto && in.engine_ranks > 1);
  if (in.on_gpu && in.want_vectors && dc_early && in.engine_rank == 0)
    p.dc_at_sbr_back =
        plan_fits(in, p.layout, p.overlap_sbr_back, true, p.dc_fold, p.sbr_back_beside_dbbr);
  if (in.on_gpu && engine) {
    const EngineMemoryPlan m = device_plan(in, p.layout, p.overlap_sbr_back, p.dc_at_sbr_back,
                                           p.dc_fold, p.sbr_back_beside_dbbr);
    p.device_bytes = static_cast<long>(m.peak_bytes());
    p.device_dbbr_bytes = static_cast<long>(m.dbbr_bytes());
    p.device_largest_later_bytes = static_cast<long>(sizeof(double)) * m.largest_later_buffer;
  }
  return p;
}

}  // namespace pipevd
