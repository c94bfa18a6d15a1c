#include "core/call_plan.hpp"

#include "core/engine_plan.hpp"
#include "core/memory_check.hpp"
#include "core/memory_plan.hpp"

namespace pipevd {
namespace {

// How far above n / E the other ranks' heights may go to fill their BC-back waves, the paper's
// load-balance slack (§3.4).
constexpr double kWaveSlack = 0.05;

// Whether this engine rank's plan with eigenvectors on a GPU, with these overlaps, fits.
long device_peak(const CallPlanInput& in, const EngineLayout& layout, bool overlap_sbr_back,
                 bool dc_at_sbr_back) {
  return static_cast<long>(plan_engine_memory(layout, in.engine_rank, in.b, in.k, in.want_vectors,
                                              true, overlap_sbr_back, dc_at_sbr_back,
                                              in.symmetric_product)
                               .peak_bytes());
}

bool plan_fits(const CallPlanInput& in, const EngineLayout& layout, bool overlap_sbr_back,
               bool dc_at_sbr_back) {
  return engine_memory_fits(device_peak(in, layout, overlap_sbr_back, dc_at_sbr_back),
                            usable_engine_bytes(in.free_bytes, in.memory_limit));
}

}  // namespace

CallPlan plan_call(MPI_Comm caller, const CallPlanInput& in) {
  CallPlan p;
  p.layout = plan_engine_layout(in.n, in.engine_ranks, in.b, in.wave_rows > 0 ? kWaveSlack : 0.0,
                                in.wave_rows);
  check_engine_memory(caller, p.layout, in.engine_rank, in.b, in.k, in.want_vectors, in.on_gpu,
                      in.free_bytes, in.memory_limit, in.symmetric_product);
  const bool engine = in.engine_rank >= 0;
  if (in.on_gpu && in.want_vectors && engine)
    p.overlap_sbr_back = plan_fits(in, p.layout, true, false);
  if (in.on_gpu && in.want_vectors && in.engine_ranks > 1 && in.engine_rank == 0)
    p.dc_at_sbr_back = plan_fits(in, p.layout, p.overlap_sbr_back, true);
  if (in.on_gpu && engine)
    p.device_bytes = device_peak(in, p.layout, p.overlap_sbr_back, p.dc_at_sbr_back);
  return p;
}

}  // namespace pipevd
