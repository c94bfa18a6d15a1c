#include "interface/engine_route.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "base/errors.hpp"
#include "base/joining_thread.hpp"
#include "core/backend_factory.hpp"
#include "core/call_plan.hpp"
#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_path.hpp"
#include "core/failure_agreement.hpp"
#include "core/fault_injection.hpp"
#include "core/load_balance_report.hpp"
#include "core/memory_check.hpp"
#include "core/memory_plan.hpp"
#include "core/one_stage.hpp"
#include "core/pool_growth.hpp"
#include "core/sbr_back.hpp"
#include "core/scalar.hpp"
#include "core/timeline.hpp"
#include "interface/device_preparation.hpp"
#include "interface/engine_options.hpp"
#include "interface/grid_preparation.hpp"
#include "interface/route_engine_comm.hpp"
#include "redistribute/block_cyclic_to_engine.hpp"
#include "redistribute/destination_population.hpp"
#include "redistribute/element.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_to_block_cyclic.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"

extern "C" double dlamch_(const char*, std::size_t);

namespace pipevd {
namespace {

using namespace scalapack;

// PDSYEVD's scaling (ScaLAPACK 2.2): A is scaled by sigma when its max-norm is below
// sqrt(smlnum) or above min(sqrt(bignum), 1/sqrt(sqrt(safmin))); W is scaled back.
double scaling_factor(double anrm) {
  const double safmin = dlamch_("S", 1), eps = dlamch_("P", 1);
  const double smlnum = safmin / eps, bignum = 1 / smlnum;
  const double rmin = std::sqrt(smlnum),
               rmax = std::min(std::sqrt(bignum), 1 / std::sqrt(std::sqrt(safmin)));
  if (anrm > 0 && anrm < rmin) return rmin / anrm;
  if (anrm > rmax) return rmax / anrm;
  return 1.0;
}

// The caller's arrays as the engine works on them: the whole matrix at (1, 1) with LLD = N, and Z
// likewise where eigenvectors are asked for.
template <class S>
bool direct_shape(const EigenCall<S>& c) {
  const long n = *c.n;
  const bool vectors = std::toupper(static_cast<unsigned char>(c.jobz)) == 'V';
  return n >= 1 && *c.ia == 1 && *c.ja == 1 && c.desca[LLD_] == n &&
         (!vectors || (*c.iz == 1 && *c.jz == 1 && c.descz[LLD_] == n));
}

// The engine path (core/engine_path.hpp) of a call whose two-stage engine would have `gpus`
// engine ranks on GPUs (0: the host engine), from rank 0's PIPEVD_ENGINE_PATH.
template <class S>
EnginePathChoice path_of(const EigenCall<S>& c, const Policy& policy, int gpus) {
  const EnginePathSetting setting = engine_path_setting(policy.engine_path);
  const bool vectors = std::toupper(static_cast<unsigned char>(c.jobz)) == 'V';
  return std::is_same_v<S, double> ? choose_engine_path(*c.n, vectors, gpus, setting)
                                   : choose_hermitian_engine_path(*c.n, vectors, gpus, setting);
}

// entry_scan_at_upload (engine_route.hpp). A grid of one rank is one caller rank, which is its
// one engine rank (on the GPU route it sees a GPU, or the route fails before the upload): the
// direct path's tests but the scaling, which the scan itself decides.
template <class S>
bool scan_at_upload(const EigenCall<S>& c, const Policy& policy, bool on_gpu, int grid_ranks) {
  return grid_ranks == 1 && direct_shape(c) &&
         path_of(c, policy, on_gpu ? 1 : 0).path == EnginePath::OneStage;
}

// The one-stage path's communicators: one engine rank for the whole grid (on the GPU route, one
// that drives a GPU).
const EngineComm& one_engine_comm(int ictxt, bool on_gpu) {
  if (!on_gpu) return engine_comm_for_one(ictxt, nullptr);
  const std::vector<GpuUuid> visible = gpu_visible_uuids();
  return engine_comm_for_one(ictxt, &visible);
}

// One call along the route: what the steps below decide and the later ones read. S: the call's
// scalar, double (PDSYEVD) or std::complex<double> (PZHEEVD), either path on either engine.
template <class S>
struct RouteCall {
  RouteCall(const EigenCall<S>& call, const Policy& pol, bool gpu, int devices, double norm,
            UploadScan* scan, double begin)
      : c(call),
        policy(pol),
        on_gpu(gpu),
        gpu_devices(devices),
        max_abs(norm),
        upload_scan(scan),
        call_begin(begin) {}
  const EigenCall<S>& c;
  const Policy& policy;
  const bool on_gpu;
  const int gpu_devices;  // the fewest any caller rank sees, agreed over the grid
  const double max_abs;   // A's max-norm agreed over the grid (the non-finite scan's)
  // Where the call's entry scan is left to the upload (entry_scan_at_upload; max_abs unknown then):
  // what the upload's scan found, for dispatch.
  UploadScan* const upload_scan;
  const double call_begin;  // MPI_Wtime() at the call's entry
  long n = 0;
  bool vectors = false;
  char uplo = 'L';
  const EngineComm* ec = nullptr;
  EnginePathChoice path;  // two-stage engine or one-stage solver (core/engine_path.hpp)
  bool one_stage() const { return path.path == EnginePath::OneStage; }
  int ranks = 0;        // engine ranks
  bool engine = false;  // this caller rank is one of them
  int device = -1;      // its GPU
  EngineOptions opt;
  CallPlan plan;
  long device_free = -1;         // the free device memory the two-stage plan saw (-1: none)
  PoolGrowthRecord pool_record;  // what the device's preparation did to the pool
  long width = 0, height = 0;    // this engine rank's columns of A and rows of Z
  int threads = 1;               // host threads of the redistribution and of A's norm
  bool direct = false;           // the engine works on the caller's arrays (no redistribution)
  ExchangeOptions in_options, out_options;
  PhaseTimes in_phases, out_phases;  // verbose 2: where the redistribution's time goes
  bool timed = false;
  Timeline timeline;
  double redistribute_s = 0;
};

// The engine's side of the call: its backend, results, failure and the release of its memory.
struct EngineRun {
  std::unique_ptr<EngineBackend> backend;
  std::vector<double> w;
  int info = 0;
  EngineStats stats;
  OneStageStats one_stage_stats;
  std::optional<DbbrPartSeconds> dbbr_parts;  // verbose 2 on a GPU: DBBR's parts on the device
  std::vector<double> dbbr_blocks;            // and each outer block's seconds
  Failure failure;   // this engine rank's, for agree_on_failure (FailureKind::None: none)
  double sigma = 1;  // PDSYEVD's scaling of A
  // The backend's release runs in a thread next to W's broadcast and Z's redistribution (mostly
  // the device pool's trim), joined before the call returns.
  std::chrono::steady_clock::time_point release_begin, release_end;
  bool released_here = false;  // the release ran in the call's thread (the direct path)
  JoiningThread release;
};

// One caller rank that is the engine, with the whole matrix in its local array at leading
// dimension n (and Z likewise): the engine reads the caller's triangle (mirrored on the device)
// and writes Z straight into the caller's array; nothing to redistribute. A scaled A (PDSYEVD's
// sigma != 1, rare) takes the general path, which scales a copy, so the caller's A stays intact
// for a forward after a failure; where the upload scans A (entry_scan_at_upload), its scan stops
// such a call before the solve, and dispatch takes the route again with the norm.
template <class S>
bool direct_path(const RouteCall<S>& r) {
  int caller_size = 0;
  MPI_Comm_size(r.ec->caller, &caller_size);
  return caller_size == 1 && r.engine && direct_shape(r.c) &&
         (r.upload_scan || scaling_factor(r.max_abs) == 1);
}

// Decide: the engine ranks among the caller ranks, this one's device, the engine's options, the
// direct path.
template <class S>
void start_route(RouteCall<S>& r) {
  r.n = *r.c.n;
  r.vectors = std::toupper(static_cast<unsigned char>(r.c.jobz)) == 'V';
  r.uplo = static_cast<char>(std::toupper(static_cast<unsigned char>(r.c.uplo)));
  r.ec = &route_engine_comm(r.c.desca[CTXT_], r.policy, r.on_gpu, r.gpu_devices);
  r.ranks = static_cast<int>(r.ec->engine_to_caller.size());
  // The path from values agreed over the grid (n, JOBZ, the engine ranks, rank 0's policy), so
  // every caller rank takes it; the one-stage path then keeps one engine rank of those.
  r.path = path_of(r.c, r.policy, r.on_gpu ? r.ranks : 0);
  if (r.one_stage() && r.ranks != 1) {
    r.ec = &one_engine_comm(r.c.desca[CTXT_], r.on_gpu);
    r.ranks = static_cast<int>(r.ec->engine_to_caller.size());
  }
  r.engine = r.ec->engine_rank >= 0;
  r.opt = engine_options(r.policy, r.vectors, r.on_gpu ? r.ranks : 0);
  // Verbose 2: the stage timeline, from an origin common to all caller ranks.
  r.timed = r.policy.verbose >= 2;
  if (r.timed) {
    r.timeline.start(r.ec->caller);
    // The agreement, the entry scan (where dispatch runs it) and (first call) the communicators:
    // before the origin.
    r.timeline.add("entry", r.call_begin, MPI_Wtime());
    r.opt.timeline = &r.timeline;
  }
  if (r.engine && r.on_gpu) r.device = r.ec->device;
  r.direct = direct_path(r);
  if (r.direct) r.opt.symmetrize = r.uplo;
  // Dispatch leaves the scan to the upload of exactly this path (the same tests); were the two
  // ever to differ, the call must not run unscanned: a failure, after which dispatch scans.
  if (r.upload_scan && !(r.one_stage() && r.direct))
    throw std::logic_error("pipevd: the entry scan was left to an upload this route does not make");
}

// Several GPUs with eigenvectors: the back-transformation heights follow BC-back's waves on engine
// rank 0's device (core/engine_plan.hpp), the same numbers on every caller rank. The wave is the
// one of the kernel variant chosen for n / E rows; a height on the other side of the tunables'
// switch (gpu/bc_back.cu, 8192 rows) runs another variant, whose wave is not modelled (there the
// ranks are below one wave of either). Complex BC-back's waves (gpu/bc_back_complex) are not
// modelled: even heights. A failed query stops every caller rank alike.
template <class S>
long agreed_wave_rows(const RouteCall<S>& r) {
  if (!(std::is_same_v<S, double> && r.on_gpu && r.vectors && r.ranks > 1)) return 0;
  long wave_rows = 0;
  std::string query_error;
  if (r.ec->engine_rank == 0) {
    try {
      wave_rows = gpu_wave_rows(r.device, (r.n + r.ranks - 1) / r.ranks,
                                effective_bandwidth(r.n, r.opt.b), r.policy.bc_back_kernel);
    } catch (const std::exception& e) {
      query_error = e.what();
      wave_rows = -1;
    }
  }
  MPI_Bcast(&wave_rows, 1, MPI_LONG, r.ec->engine_to_caller[0], r.ec->caller);
  if (wave_rows < 0)
    throw std::runtime_error(
        query_error.empty() ? "engine rank 0 could not query BC-back's occupancy" : query_error);
  return wave_rows;
}

// Host threads of the redistribution and of A's norm (PIPEVD_THREADS caps them), and the exchange
// options they imply. With threads, packing every message beats datatypes both ways, and 4 chunks
// (packing overlapping the transfer) the way out; with one thread per rank the datatypes stay.
// The chunk count must agree on every rank (the chunks are collectives): the fewest threads wins.
// Callers on one node copy through a shared-memory window instead (redistribute/node_window; the
// message path where the ranks span nodes or MPI refuses the window); with one engine rank for
// several callers push is faster on the way in.
template <class S>
void plan_redistribution(RouteCall<S>& r) {
  int threads = redistribution_threads(0, ranks_on_this_node(r.ec->caller));
  if (r.policy.threads > 0) threads = std::min(threads, r.policy.threads);
  MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT, MPI_MIN, r.ec->caller);
  r.threads = threads;
  r.in_options.threads = r.out_options.threads = threads;
  if (threads > 1) {
    r.in_options.min_typed_segment = r.out_options.min_typed_segment = 1L << 40;
    r.out_options.chunks = 4;
  }
  int caller_size = 0;
  MPI_Comm_size(r.ec->caller, &caller_size);
  r.in_options.node_memory = r.ranks == 1 && caller_size > 1 ? NodeMemory::push : NodeMemory::pull;
  r.out_options.node_memory = NodeMemory::pull;
  if (r.policy.node_segment_mib > 0)  // agreed over the grid: the rounds match on every rank
    r.in_options.node_segment_bytes = r.out_options.node_segment_bytes = r.policy.node_segment_mib
                                                                         << 20;
}

// Host bytes this call adds on this caller rank: the engine rank's copy of A and Z (beyond what is
// kept from earlier calls), its part of the node's window (beyond its segment now), the host
// engine's buffers, the reflectors of bulge chasing where they are on the host (the host engine's;
// the GPU engine's complex phase: host_reflector_doubles), and a margin for the engine's
// smaller host buffers.
template <class S>
long host_bytes_needed(const RouteCall<S>& r) {
  long need = 0;
  if (r.engine && !r.direct) {
    const long part = r.n * std::max(r.width, r.vectors ? r.height : 0L);
    need += std::max(0L, static_cast<long>(sizeof(S)) * part - static_cast<long>(kept_bytes()));
  }
  if (several_on_one_node(r.ec->caller)) {
    int nprow = 0, npcol = 0, myrow = 0, mycol = 0;
    const int* d = r.c.desca;
    Cblacs_gridinfo(d[CTXT_], &nprow, &npcol, &myrow, &mycol);
    const int n = static_cast<int>(r.n);
    const long local = static_cast<long>(numroc_(&n, &d[MB_], &myrow, &d[RSRC_], &nprow)) *
                       numroc_(&n, &d[NB_], &mycol, &d[CSRC_], &npcol);
    // Segments bounded by node_segment_bytes (more in rounds).
    const long part = std::max(local, r.n * std::max(r.width, r.height));
    const long segment =
        std::min(static_cast<long>(sizeof(S)) * part,
                 std::max(r.in_options.node_segment_bytes, r.out_options.node_segment_bytes));
    need += std::max(0L, segment - 8 * node_window_segment(r.ec->caller));
  }
  if (r.engine && !r.on_gpu)
    need +=
        static_cast<long>(plan_engine_memory(r.plan.layout, r.ec->engine_rank, r.opt.b, r.opt.k,
                                             r.vectors, false, false, false, false, r.opt.dc_fold,
                                             Scalar<S>::words, r.opt.dbbr_cyclic_blocks)
                              .peak_bytes());
  if (r.engine && !r.one_stage())
    need += static_cast<long>(sizeof(double)) *
            host_reflector_doubles(r.n, r.opt.b, r.vectors, r.on_gpu, Scalar<S>::words);
  if (r.engine) need += engine_memory_margin(need);
  return need;
}

// Verbose 2: a step of the plan as an interval on a row of its own ("plan" thread) inside the
// plan's, so that a first call's plan shows which step its time goes to (device queries that wait
// for the device's context, communicators made on a first call, collectives that wait for the
// slowest caller rank).
template <class S, class F>
void plan_step(RouteCall<S>& r, const char* stage, F&& step) {
  const double t = MPI_Wtime();
  step();
  if (r.timed) r.timeline.add(stage, t, MPI_Wtime(), "plan");
}

// The one-stage path's plan: the whole matrix on its one engine rank, its predicted memory
// (core/one_stage.hpp) checked there against the free device memory and PIPEVD_GPU_MEMORY_LIMIT
// as the two-stage plan's is, agreed over the caller ranks. An allocation that still fails is an
// OutOfMemory, agreed after the engine like the engine's own.
template <class S>
CallPlan one_stage_plan(RouteCall<S>& r) {
  CallPlan p;
  p.layout.n = r.n;
  p.layout.col_begin = {0, r.n};
  p.layout.row_begin = {0, r.n};
  const long need = r.engine ? one_stage_memory_bytes(r.n, r.vectors, sizeof(S)) : -1;
  long free_bytes = -1;
  plan_step(r, "plan_device_memory", [&] {
    if (r.engine && r.on_gpu) free_bytes = gpu_free_bytes(r.device);
  });
  plan_step(r, "plan_call", [&] {
    agree_engine_memory(r.ec->caller, r.n, r.vectors, r.on_gpu, need, free_bytes,
                        r.policy.gpu_memory_limit);
  });
  if (r.on_gpu && r.engine) p.device_bytes = need;
  return p;
}

// The two-stage engine's plan (core/call_plan): layout, memory fit and overlaps.
template <class S>
void plan_two_stage(RouteCall<S>& r) {
  CallPlanInput in;
  in.n = r.n;
  in.engine_ranks = r.ranks;
  in.engine_rank = r.engine ? r.ec->engine_rank : -1;
  in.b = r.opt.b;
  in.k = r.opt.k;
  in.want_vectors = r.vectors;
  in.on_gpu = r.on_gpu;
  plan_step(r, "plan_wave_rows", [&] { in.wave_rows = agreed_wave_rows(r); });
  plan_step(r, "plan_device_memory",
            [&] { in.free_bytes = r.engine && r.on_gpu ? gpu_free_bytes(r.device) : -1; });
  // Engine ranks that share a GPU (PIPEVD_GPU_SHARING) share its free memory too.
  if (in.free_bytes > 0) in.free_bytes /= r.ec->device_sharers;
  r.device_free = in.free_bytes;
  in.memory_limit = r.policy.gpu_memory_limit;
  // The one-triangle A W kernel is real only (complex A W takes ZGEMMs).
  plan_step(r, "plan_device_kernels", [&] {
    in.symmetric_product = std::is_same_v<S, double> && r.engine && r.on_gpu && r.policy.aw_symm &&
                           gpu_symmetric_product_available(r.device);
  });
  in.dc_solver =
      resolve_tridiagonal_solver(r.opt.tridiagonal, !r.on_gpu, r.n) == TridiagonalSolver::Dc;
  in.dc_fold = dc_fold_setting(r.policy.dc_fold);
  in.sbr_back_beside = sbr_back_beside_setting(r.policy.sbr_back_beside);
  in.dc_early = dc_early_setting(r.policy.dc_early);
  in.words = Scalar<S>::words;
  in.dbbr_cyclic = r.opt.dbbr_cyclic_blocks;
  in.dbbr_cyclic_default = r.policy.dbbr_columns == DbbrColumnsSetting::Auto;
  plan_step(r, "plan_call", [&] { r.plan = plan_call(r.ec->caller, in); });
  r.opt.dbbr_cyclic_blocks = r.plan.dbbr_cyclic;
  r.opt.overlap_sbr_back = r.plan.overlap_sbr_back;
  r.opt.sbr_back_beside_dbbr = r.plan.sbr_back_beside_dbbr;
  r.opt.dc_at_sbr_back = r.plan.dc_at_sbr_back;
  r.opt.dc_fold = r.plan.dc_fold;
  r.width = r.engine ? r.plan.layout.width(r.ec->engine_rank) : 0;
  r.height = r.engine ? r.plan.layout.height(r.ec->engine_rank) : 0;
}

// Plan: the path's layout and memory fit, threads, the host memory. Verbose 2: each step's
// interval (plan_step).
template <class S>
void plan_route(RouteCall<S>& r) {
  if (r.one_stage()) {
    r.plan = one_stage_plan(r);
    r.width = r.engine ? r.n : 0;
    r.height = r.engine ? r.n : 0;
  } else {
    plan_two_stage(r);
  }
  plan_step(r, "plan_redistribution", [&] { plan_redistribution(r); });
  // The host memory a call past the memory cgroup's room would have the job killed for.
  plan_step(r, "plan_host_memory", [&] {
    agree_host_memory(r.ec->caller, node_comm_of(r.ec->caller), r.n, host_bytes_needed(r),
                      r.policy.host_memory_limit);
  });
}

// The device's preparation (interface/device_preparation) where it has time to hide behind: not
// on the direct path, which copies nothing in. Every engine rank takes these branches alike (the
// path and the policy are agreed, and the grid's creation began the communicator on every engine
// rank or on none: interface/grid_preparation.hpp); where it began it, the engine waits for it.
template <class S>
void prepare_device(const RouteCall<S>& r, DevicePreparation& p) {
  if (!r.engine || !r.on_gpu || !r.policy.gpu_prepare || r.direct) return;
  const bool nccl =
      !r.one_stage() && engine_uses_nccl(*r.ec, r.policy) && !take_nccl_begun_at_grid(*r.ec);
  p.start(r.device, nccl, r.ec->engine, r.policy.nccl_channels, r.policy.preload_kernels == "on");
}
// The pool's growth for this engine rank's plan (core/pool_growth.hpp): PIPEVD_POOL_GROWTH's
// staged growth where the plan has a DBBR stage below its peak and the device's memory leaves
// room for it, else whole.
template <class S>
PoolGrowth pool_growth_of(const RouteCall<S>& r) {
  return plan_pool_growth(r.policy.pool_growth == PoolGrowthSetting::Staged, r.plan.device_bytes,
                          r.plan.device_dbbr_bytes, r.plan.device_largest_later_bytes,
                          usable_engine_bytes(r.device_free, r.policy.gpu_memory_limit));
}
template <class S>
void finish_preparation(RouteCall<S>& r, DevicePreparation& p) {
  Timeline* const timeline = r.timed ? &r.timeline : nullptr;
  p.finish(timeline);
  // DBBR's own allocations fit the first step; a later stage's could find the second step's
  // growth still running and map memory beside it, past the peak: joined once DBBR has ended.
  if (p.growth().staged) r.opt.after_dbbr = [&p, timeline] { p.finish_rest(timeline); };
}
// The preparation's thread joined (where the engine has not joined it, or did not run) and what it
// did to the pool kept for the report.
template <class S>
void finish_preparation_rest(RouteCall<S>& r, DevicePreparation& p) {
  p.finish_rest(r.timed ? &r.timeline : nullptr);
  r.pool_record = p.pool_growth_record();
}

// Redistribute in: the caller's block-cyclic A to the engine ranks' columns (both triangles), the
// fresh buffer's population finished before the redistribution's first write into it (and, on
// a throw, as the redistribution ends). Verbose 2: the population on a row of its own.
template <class S>
void redistribute_in(RouteCall<S>& r, KeptBuffer& a_cols, DestinationPopulation& population) {
  const double t = MPI_Wtime();
  if (!r.direct)
    block_cyclic_to_engine(r.c.uplo, r.n, r.c.a, *r.c.ia, *r.c.ja, r.c.desca, r.plan.layout, *r.ec,
                           elements_in<S>(a_cols.data()), population.options_for(r.in_options),
                           r.timed ? &r.in_phases : nullptr);
  population.finish();
  r.redistribute_s = MPI_Wtime() - t;
  if (r.timed) r.timeline.add("redistribute_in", t, t + r.redistribute_s);
  const PagePopulation& p = population.population();
  if (r.timed && p.started()) r.timeline.add("a_populate", p.begin(), p.end(), "populate");
}

// PDSYEVD's scaling of this engine rank's copy of A (by the max-norm the grid agreed on).
template <class S>
double scale_engine_copy(RouteCall<S>& r, S* a_cols) {
  const double sigma = scaling_factor(r.max_abs);
  if (sigma != 1)
    parallel_for(r.width, r.threads, [&](long j) {
      for (long i = 0; i < r.n; ++i) a_cols[i + j * r.n] *= sigma;
    });
  return sigma;
}

// A Hermitian matrix's diagonal is real: the imaginary parts the caller's diagonal may hold are not
// read (as by zheevd), so this engine rank's copy drops them before the engine sees its columns.
void real_diagonal(const RouteCall<double>&, double*) {}
void real_diagonal(const RouteCall<Complex>& r, Complex* a_cols) {
  const long c0 = r.plan.layout.col_begin[r.ec->engine_rank];
  for (long j = 0; j < r.width; ++j) a_cols[c0 + j + j * r.n].imag(0.0);
}

template <class S>
std::unique_ptr<EngineBackend> make_backend(const RouteCall<S>& r) {
  if (!r.on_gpu) return make_host_backend();
  return make_gpu_backend(r.device, gpu_backend_settings(r.policy, r.threads));
}

// Set-up on this engine rank: PDSYEVD's scaling of its copy of A, and the backend. A failure is
// kept in `run` for agree_on_failure.
template <class S>
void set_up_engine(RouteCall<S>& r, KeptBuffer& a_cols, EngineRun& run) {
  run.w.assign(r.n, 0.0);
  if (!r.engine) return;
  // Verbose 2: the engine's set-up (A's scaling, the backend) and release get intervals of their
  // own.
  const double setup_begin = MPI_Wtime();
  if (!r.direct) {
    run.sigma = scale_engine_copy(r, elements_in<S>(a_cols.data()));
    real_diagonal(r, elements_in<S>(a_cols.data()));
  }
  try {
    run.backend = make_backend(r);
    inject_fault("setup", r.ec->engine_rank);
  } catch (const std::exception& e) {
    run.failure = failure_of(e);
  }
  if (r.timed) r.timeline.add("engine_setup", setup_begin, MPI_Wtime());
}

// Collective over the caller ranks, at points every one of them reaches with no collective of the
// engine pending (after the set-up, after the engine): the worst failure of any engine rank, thrown
// as its type on every caller rank alike. The caller's A is untouched (the engine scales a copy),
// so PIPEVD_BACKEND=auto can still forward the call. Verbose 2: an interval of its own, since an
// engine rank's wait here for the other caller ranks is time outside the engine's stages.
template <class S>
void agree_on_failure(RouteCall<S>& r, const EngineRun& run) {
  const double t = MPI_Wtime();
  pipevd::agree_on_failure(r.ec->caller, run.failure);
  if (r.timed) r.timeline.add("failure_agreement", t, MPI_Wtime());
}

// The two-stage engine over the call's scalar, on either backend (on GPUs, complex calls come here
// only where PIPEVD_ENGINE_PATH=two_stage forces it: core/engine_path.hpp).
template <class S>
int run_two_stage(EngineBackend& be, const RouteCall<S>& r, const S* a, S* z, EngineRun& run) {
  EngineOptions opt = r.opt;
  const std::unique_ptr<DbbrPartClock> clock =
      r.policy.verbose >= 2 ? make_gpu_dbbr_clock(be) : nullptr;
  opt.dbbr_profiler = clock.get();
  const int info = run_engine(be, r.ec->engine, r.plan.layout, a, run.w.data(), z, opt, &run.stats);
  if (clock) {
    run.dbbr_parts = clock->collect();
    run.dbbr_blocks = clock->collected_blocks();
  }
  return info;
}

// Run: the engine on this engine rank, then its memory released in a thread. A failure is kept in
// `run` for agree_on_failure. Inside run_engine each stage's end agrees on a failure over the
// engine ranks (core/failure_agreement), which covers the stages' local work and their
// synchronisation, and the buffers a stage's messages need are agreed on before them (DBBR's per
// outer block, the band's, Q_d's or Q_pre's). What remains: a failure inside a message itself
// (NCCL, MPI), or a device fault that breaks the device's later work, leaves the others waiting
// for that rank.
template <class S>
void run_on_engine(RouteCall<S>& r, KeptBuffer& a_cols, S* z_rows, EngineRun& run) {
  if (!r.engine) return;
  try {
    inject_fault("engine", r.ec->engine_rank);
    const S* a = r.direct ? r.c.a : elements_in<S>(a_cols.data());
    S* z = r.direct ? r.c.z : z_rows;
    if (r.upload_scan)  // A non-finite, or needing PDSYEVD's scaling: the solve is not run
      r.upload_scan->proceed = [](const EntryScan& found) {
        return !found.non_finite && scaling_factor(found.max_abs) == 1;
      };
    if (r.one_stage())
      run.info = run_one_stage(*run.backend, r.ec->engine, r.plan.layout, a, run.w.data(), z, r.opt,
                               &run.one_stage_stats, r.upload_scan);
    else
      run.info = run_two_stage(*run.backend, r, a, z, run);
  } catch (const std::exception& e) {
    run.failure = failure_of(e);
    return;
  }
  if (run.sigma != 1)
    for (double& v : run.w) v /= run.sigma;
  // No MPI in the thread (MPI_THREAD_SINGLE callers). The backend's device is made current there
  // first, since a new thread's current device is 0, and the backend's destructor restores the
  // device it found (on a node of several GPUs, a context on GPU 0 for every rank otherwise).
  // A's buffer holds Z now: it goes after Z's redistribution.
  auto release_all = [&run, device = r.device](std::unique_ptr<EngineBackend> be) {
    run.release_begin = std::chrono::steady_clock::now();
    gpu_make_current(device);
    be.reset();
    run.release_end = std::chrono::steady_clock::now();
  };
  if (r.direct) {
    // On the direct path nothing would run beside the thread: the backend goes here, without a
    // thread's making (its destructor gives the caller's thread its current device back).
    run.release_begin = std::chrono::steady_clock::now();
    run.backend.reset();
    run.release_end = std::chrono::steady_clock::now();
    run.released_here = true;
    return;
  }
  try {
    run.release = JoiningThread(release_all, std::move(run.backend));
  } catch (const std::system_error&) {
    // No thread to be had: the backend went with the failed start, in this thread (the
    // engine's result stands; no release interval on the timeline).
  }
}

// W and INFO from engine rank 0 to every caller rank.
template <class S>
void deliver_eigenvalues(RouteCall<S>& r, EngineRun& run) {
  const double t = MPI_Wtime();
  const int root = r.ec->engine_to_caller[0];
  MPI_Bcast(&run.info, 1, MPI_INT, root, r.ec->caller);
  MPI_Bcast(run.w.data(), static_cast<int>(r.n), MPI_DOUBLE, root, r.ec->caller);
  std::copy(run.w.begin(), run.w.end(), r.c.w);
  if (r.timed) r.timeline.add("w_broadcast", t, MPI_Wtime());
}

// Redistribute out: the engine ranks' rows of Z to the caller's DESCZ.
template <class S>
void redistribute_out(RouteCall<S>& r, const EngineRun& run, const S* z_rows) {
  const double t = MPI_Wtime();
  if (run.info == 0 && r.vectors && !r.direct)
    engine_to_block_cyclic(r.n, z_rows, r.plan.layout, *r.ec, r.c.z, *r.c.iz, *r.c.jz, r.c.descz,
                           r.out_options, r.timed ? &r.out_phases : nullptr);
  if (r.timed) r.timeline.add("redistribute_out", t, MPI_Wtime());
  r.redistribute_s += MPI_Wtime() - t;
}

// The one-stage path's line: its engine rank's parts (no load balance: one engine rank).
template <class S>
void report_one_stage(const RouteCall<S>& r, const EngineRun& run) {
  const OneStageStats& s = run.one_stage_stats;
  if (r.policy.verbose >= 1)
    std::fprintf(stderr,
                 "pipevd: %s engine rank=0/1 device=%d path=one_stage stages: redistribute=%.4f%s "
                 "upload=%.4f%s solve=%.4f download=%.4f engine=%.4f s\n",
                 r.on_gpu ? "gpu" : "host", r.device, r.redistribute_s,
                 r.direct ? " (none: caller's arrays)" : "", s.upload,
                 r.upload_scan ? " (triangle, entry scan)" : "", s.solve, s.download, s.total);
}

// DBBR's parts on this rank's device (verbose 2): where its stage time goes between the panels'
// messages (a rank's bcast includes its wait for the panel's owner).
void print_dbbr_parts(int rank, int ranks, const DbbrPartSeconds& parts) {
  std::string line =
      "pipevd: dbbr parts rank=" + std::to_string(rank) + "/" + std::to_string(ranks);
  char item[48];
  for (int p = 0; p < kDbbrParts; ++p) {
    std::snprintf(item, sizeof item, " %s=%.4f", to_string(static_cast<DbbrPart>(p)), parts[p]);
    line += item;
  }
  std::fprintf(stderr, "%s s\n", line.c_str());
}

// Each outer block's seconds on this rank's device (verbose 2), in DBBR's order (rank 0's blocks
// first, k columns each): where along the reduction the time goes.
void print_dbbr_blocks(int rank, int ranks, const std::vector<double>& blocks) {
  if (blocks.empty()) return;
  std::string line =
      "pipevd: dbbr blocks rank=" + std::to_string(rank) + "/" + std::to_string(ranks) + ":";
  char item[24];
  for (double s : blocks) {
    std::snprintf(item, sizeof item, " %.4f", s);
    line += item;
  }
  std::fprintf(stderr, "%s s\n", line.c_str());
}

// Where this engine rank ran SBR-back: beside DBBR, beside bulge chasing, or after it ("").
template <class S>
const char* sbr_back_beside_word(const RouteCall<S>& r) {
  if (!r.vectors) return "";
  if (sbr_back_beside_dbbr_applies(r.opt, r.plan.layout, r.ec->engine_rank))
    return " sbr_back_beside_dbbr";
  return r.opt.overlap_sbr_back ? " sbr_back_beside" : "";
}

// Report. Verbose 1: engine rank 0's stage times and the load balance over the engine ranks
// (collective over them); 2: every engine rank's line and the timeline file.
template <class S>
void report(RouteCall<S>& r, const EngineRun& run) {
  if (!r.engine) return;
  const int e = r.ec->engine_rank;
  const EngineStats& s = run.stats;
  if (r.one_stage())
    report_one_stage(r, run);
  else if (r.policy.verbose >= 2 || (r.policy.verbose >= 1 && e == 0))
    std::fprintf(
        stderr,
        "pipevd: %s engine rank=%d/%d device=%d cols=%ld rows=%ld b=%ld k=%ld%s%s%s stages: "
        "redistribute=%.4f%s dbbr=%.4f bc=%.4f dc=%.4f sbr_back=%.4f bc_back=%.4f "
        "gemm=%.4f engine=%.4f s\n",
        r.on_gpu ? "gpu" : "host", e, r.ranks, r.device, r.width, r.height,
        effective_bandwidth(r.n, r.opt.b), r.opt.k, sbr_back_beside_word(r),
        r.vectors && forms_q_s_from_left(r.opt.sbr_back_order, r.height, r.n) ? " sbr_left" : "",
        s.dc_folded ? " dc_fold" : "", r.redistribute_s, r.direct ? " (none: caller's arrays)" : "",
        s.dbbr, s.bulge_chasing, s.dc, s.sbr_back, s.bc_back, s.gemm, s.total);
  if (run.dbbr_parts) print_dbbr_parts(e, r.ranks, *run.dbbr_parts);
  print_dbbr_blocks(e, r.ranks, run.dbbr_blocks);
  if (r.timed)
    std::fprintf(stderr,
                 "pipevd: redistribution rank=%d/%d in: plan=%.4f pack=%.4f exchange=%.4f "
                 "unpack=%.4f out: plan=%.4f pack=%.4f exchange=%.4f unpack=%.4f bind=%.4f s\n",
                 e, r.ranks, r.in_phases.plan, r.in_phases.pack, r.in_phases.exchange,
                 r.in_phases.unpack, r.out_phases.plan, r.out_phases.pack, r.out_phases.exchange,
                 r.out_phases.unpack, s.bind);
  if (r.timed && r.pool_record.made) {
    const PoolGrowthRecord& g = r.pool_record;
    const char* why = g.growth.whole_because;
    std::fprintf(stderr,
                 "pipevd: pool growth rank=%d/%d %s first=%.3f peak=%.3f GiB, reserved %.3f -> "
                 "%.3f GiB%s%s%s\n",
                 e, r.ranks, g.growth.staged ? "staged" : "whole",
                 g.growth.first_bytes / 1073741824.0, g.growth.peak_bytes / 1073741824.0,
                 g.reserved_before / 1073741824.0, g.reserved_after / 1073741824.0,
                 *why ? " (staged asked: " : "", why, *why ? ")" : "");
  }
  if (r.timed && r.on_gpu && !r.direct) {
    const KeptPinning last = last_kept_pinning();
    std::fprintf(stderr,
                 "pipevd: kept memory rank=%d/%d pinned=%.3f GiB, last registration %.3f GiB in "
                 "%.4f s%s\n",
                 e, r.ranks, kept_pinned_bytes() / 1073741824.0, last.bytes / 1073741824.0,
                 last.seconds, last.pinned || last.bytes == 0 ? "" : " (refused)");
  }
  if (r.policy.verbose >= 1 && !r.one_stage()) {
    const LoadBalance lb = load_balance_report(r.ec->engine, r.plan.layout, s);
    if (e == 0) std::fputs(lb.text.c_str(), stderr);
  }
  if (r.timed) {
    static std::atomic<long> timed_calls{0};  // the process's, for PIPEVD_TIMELINE's %c
    r.timeline.write(r.ec->engine, Timeline::default_path(r.policy.timeline_path, ++timed_calls),
                     r.device, r.on_gpu ? "gpu" : "host", r.n);
  }
}

template <class S>
int run_route(const EigenCall<S>& c, const Policy& policy, bool on_gpu, int gpu_devices,
              EnginePathChoice* path, double max_abs, UploadScan* upload_scan, double call_begin) {
  RouteCall<S> r(c, policy, on_gpu, gpu_devices, max_abs, upload_scan, call_begin);
  start_route(r);
  if (path) *path = r.path;
  DevicePreparation prepare;
  prepare_device(r, prepare);
  const double plan_begin = MPI_Wtime();
  plan_route(r);
  prepare.give_pool_growth(pool_growth_of(r));
  if (r.timed) r.timeline.add("plan", plan_begin, MPI_Wtime());

  // Not zero-filled: the redistribution and the engine write every entry. A's columns and, once
  // the engine has copied them to its memory, Z's rows share one buffer kept from the last call
  // (redistribute/kept_buffer.hpp): fresh pages cost seconds of page faults, and one buffer for
  // both halves the host memory an engine rank holds. A fresh one is backed in bulk, in a thread
  // of its own next to the redistribution's plan (the node window's making), before the
  // redistribution's scattered writes would fault it in page by page.
  const bool copies = r.engine && !r.direct;
  const long engine_part = r.n * std::max(r.width, r.vectors ? r.height : 0L);
  // On a GPU the engine copies these columns to the device and Z's rows back: a pinned slot (one
  // kept from an earlier call) makes the copies direct DMA.
  const bool pinned = copies && r.on_gpu && r.policy.pin_memory && r.policy.keep_memory;
  KeptBuffer a_cols(
      copies ? static_cast<std::size_t>(std::max(1L, engine_part) * Element<S>::doubles) : 0,
      pinned ? KeptFor::DeviceCopies : KeptFor::Host);
  DestinationPopulation a_population(a_cols, r.threads);
  S* const z_rows = r.vectors ? elements_in<S>(a_cols.data()) : nullptr;
  EngineRun run;
  redistribute_in(r, a_cols, a_population);
  finish_preparation(r, prepare);
  set_up_engine(r, a_cols, run);
  agree_on_failure(r, run);
  run_on_engine(r, a_cols, z_rows, run);
  finish_preparation_rest(r, prepare);
  agree_on_failure(r, run);
  if (upload_scan && upload_scan->stopped) {
    // One caller rank, nothing to agree: back to dispatch with W, Z and INFO untouched.
    run.release.join();
    return 0;
  }
  deliver_eigenvalues(r, run);
  redistribute_out(r, run, z_rows);
  a_cols.release();
  if (!r.policy.keep_memory) release_node_window(r.ec->caller);

  // Joined before the return (on the direct path it ran in this thread already): the pool's trim
  // hands the call's device memory back, and the caller may allocate on the device, or exit, as
  // soon as the call returns; a trim still running then would race both. Not trimming (the next
  // call regrows the same pool) would save the trim and the regrowth, but hold the call's device
  // memory between calls, out of the caller's sight; the trim keeps only a small call's worth
  // (gpu/gpu_context.hpp, kPoolKeptBetweenCalls).
  const bool released = run.release.joinable();
  run.release.join();
  if (r.timed && (released || run.released_here))
    r.timeline.add("engine_release", run.release_begin, run.release_end,
                   run.released_here ? "main" : "release");
  report(r, run);
  *c.info = run.info;
  return run.info;
}

}  // namespace

bool entry_scan_at_upload(const PdsyevdCall& c, const Policy& policy, bool on_gpu, int grid_ranks) {
  return scan_at_upload(c, policy, on_gpu, grid_ranks);
}

bool entry_scan_at_upload(const PzheevdCall& c, const Policy& policy, bool on_gpu, int grid_ranks) {
  return scan_at_upload(c, policy, on_gpu, grid_ranks);
}

int run_engine_route(const PdsyevdCall& c, const Policy& policy, bool on_gpu, int gpu_devices,
                     double max_abs, double call_begin, EnginePathChoice* path,
                     UploadScan* upload_scan) {
  return run_route(c, policy, on_gpu, gpu_devices, path, max_abs, upload_scan, call_begin);
}

int run_engine_route(const PzheevdCall& c, const Policy& policy, bool on_gpu, int gpu_devices,
                     double max_abs, double call_begin, EnginePathChoice* path,
                     UploadScan* upload_scan) {
  return run_route(c, policy, on_gpu, gpu_devices, path, max_abs, upload_scan, call_begin);
}

}  // namespace pipevd
