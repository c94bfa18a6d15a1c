#include "interface/engine_route.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "base/joining_thread.hpp"
#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/load_balance_report.hpp"
#include "core/memory_plan.hpp"
#include "core/timeline.hpp"
#include "host/host_backend.hpp"
#include "interface/engine_options.hpp"
#include "interface/memory_check.hpp"
#include "redistribute/block_cyclic_to_engine.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_to_block_cyclic.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"
#ifdef PIPEVD_HAVE_CUDA
#include "gpu/bc_back.cuh"
#include "gpu/gpu_backend.hpp"
#include "interface/gpu_options.hpp"
#endif

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

// The caller and engine communicators: on the host, PIPEVD_ENGINE_RANKS or every node-local rank
// as engine ranks; on GPUs, one engine rank per GPU the node's ranks see (redistribute/
// gpu_assignment.hpp), with EngineComm::device the GPU it drives.
const EngineComm& engine_comm(int ictxt, const Policy& policy, bool on_gpu) {
  if (!on_gpu)
    return engine_comm_for(ictxt, policy.engine_ranks > 0 ? policy.engine_ranks : INT_MAX);
#ifdef PIPEVD_HAVE_CUDA
  if (gpu::visible_device_count() > 0)
    return engine_comm_for_gpus(ictxt, gpu::visible_gpu_uuids(), policy.engine_ranks,
                                gpu::gpu_sharing_allowed());
#endif
  throw std::runtime_error("no GPU engine in this build or no visible device");
}

// The backend of this engine rank: the host's, or the GPU's on `device` (EngineComm::device), its
// settings from the policy (interface/gpu_options), `threads` host threads for its copies of the
// caller's (pageable) arrays.
std::unique_ptr<EngineBackend> make_backend(int device, bool on_gpu, const Policy& policy,
                                            int threads) {
  if (!on_gpu) return std::make_unique<HostBackend>();
#ifdef PIPEVD_HAVE_CUDA
  auto be = std::make_unique<gpu::GpuBackend>(device);
  configure_gpu_backend(*be, policy);
  be->set_host_threads(threads);
  return be;
#else
  (void)device, (void)policy, (void)threads;
  throw std::runtime_error("no GPU engine in this build");
#endif
}

// Rows BC-back (the policy's kernel) processes at once on `device` for m rows of bandwidth b (0:
// not known).
long engine_wave_rows(int device, long m, long b, const Policy& policy) {
#ifdef PIPEVD_HAVE_CUDA
  return gpu::bc_back_wave_rows(m, b, device, bc_back_kernel(policy));
#else
  (void)device, (void)m, (void)b, (void)policy;
  return 0;
#endif
}

// How far above n / E the other ranks' heights may go to fill their BC-back waves, the paper's
// load-balance slack (§3.4).
constexpr double kWaveSlack = 0.05;

// Whether this engine rank's backend runs DBBR's A W through the one-triangle kernel (its
// workspace then counts in the memory plan).
bool engine_symmetric_product(const Policy& policy, int device, bool on_gpu) {
  if (!on_gpu || !policy.aw_symm) return false;
#ifdef PIPEVD_HAVE_CUDA
  return gpu::symmetric_product_available(device);
#else
  (void)device;
  return false;
#endif
}

// Free memory of this engine rank's device (-1: unlimited, the host engine).
long engine_free_bytes(int device, bool on_gpu) {
  if (!on_gpu) return -1;
#ifdef PIPEVD_HAVE_CUDA
  return gpu::device_free_bytes(device);
#else
  (void)device;
  return -1;
#endif
}

// Max-norm of columns [0, cols) of a (leading dimension lda): rows [j, n) of column j for the
// triangle 'L', [0, j] for 'U', all n rows for 'A'. On `threads` threads, a column block each.
double max_norm(char part, long n, long cols, const double* a, long lda, int threads) {
  constexpr long kBlock = 256;
  const long blocks = (cols + kBlock - 1) / kBlock;
  std::vector<double> block_max(static_cast<std::size_t>(std::max(1L, blocks)), 0.0);
  parallel_for(blocks, threads, [&](long k) {
    double m = 0;
    for (long j = k * kBlock; j < std::min(cols, (k + 1) * kBlock); ++j)
      for (long i = part == 'L' ? j : 0, e = part == 'U' ? j + 1 : n; i < e; ++i)
        m = std::max(m, std::fabs(a[i + j * lda]));
    block_max[k] = m;
  });
  return *std::max_element(block_max.begin(), block_max.end());
}

bool is_out_of_memory(const std::exception& e) {
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
         std::string(e.what()).find("cannot allocate") != std::string::npos;
}

}  // namespace

int run_engine_route(const PdsyevdCall& c, const Policy& policy, bool on_gpu) {
  const long n = *c.n;
  const bool vectors = std::toupper(static_cast<unsigned char>(c.jobz)) == 'V';
  const EngineComm& ec = engine_comm(c.desca[CTXT_], policy, on_gpu);
  const int ranks = static_cast<int>(ec.engine_to_caller.size());

  EngineOptions opt = engine_options(policy, vectors);
  const bool engine = ec.engine_rank >= 0;

  // Verbose 2: the stage timeline, from an origin common to all caller ranks.
  Timeline timeline;
  const bool timed = policy.verbose >= 2;
  if (timed) timeline.start(ec.caller);

  const int device = engine && on_gpu ? ec.device : -1;  // this engine rank's GPU
  // Several GPUs with eigenvectors: the back-transformation heights follow BC-back's waves on
  // engine rank 0's device (core/engine_plan.hpp), the same numbers on every caller rank.
  // The wave is the one of the kernel variant chosen for n / E rows; a height on the other side of
  // the tunables' switch (gpu/bc_back.cu, 8192 rows) runs another variant, whose wave is not
  // modelled (there the ranks are below one wave of either). A failed query (-1) stops every
  // caller rank alike, not rank 0 alone.
  long wave_rows = 0;
  if (on_gpu && vectors && ranks > 1) {
    std::string query_error;
    if (ec.engine_rank == 0) {
      try {
        wave_rows = engine_wave_rows(device, (n + ranks - 1) / ranks, effective_bandwidth(n, opt.b),
                                     policy);
      } catch (const std::exception& e) {
        query_error = e.what();
        wave_rows = -1;
      }
    }
    MPI_Bcast(&wave_rows, 1, MPI_LONG, ec.engine_to_caller[0], ec.caller);
    if (wave_rows < 0)
      throw std::runtime_error(
          query_error.empty() ? "engine rank 0 could not query BC-back's occupancy" : query_error);
  }
  const EngineLayout layout =
      plan_engine_layout(n, ranks, opt.b, wave_rows > 0 ? kWaveSlack : 0.0, wave_rows);
  const long width = engine ? layout.width(ec.engine_rank) : 0;
  const long height = engine ? layout.height(ec.engine_rank) : 0;
  // Before anything moves: the engine's predicted device memory must fit on every engine rank.
  const long free_bytes = engine ? engine_free_bytes(device, on_gpu) : -1;
  const bool symm = engine && engine_symmetric_product(policy, device, on_gpu);
  check_engine_memory(ec.caller, layout, engine ? ec.engine_rank : -1, opt.b, opt.k, vectors,
                      on_gpu, free_bytes, policy.gpu_memory_limit, symm);
  // Whether this engine rank's plan with eigenvectors, with these options, fits its memory.
  auto plan_fits = [&](bool overlap_sbr_back, bool dc_at_sbr_back) {
    const long need =
        static_cast<long>(plan_engine_memory(layout, ec.engine_rank, opt.b, opt.k, true, true,
                                             overlap_sbr_back, dc_at_sbr_back, symm)
                              .peak_bytes());
    return engine_memory_fits(need, usable_engine_bytes(free_bytes, policy.gpu_memory_limit));
  };
  // JOBZ = 'V' on a GPU: SBR-back next to bulge chasing (EngineOptions::overlap_sbr_back) where
  // this rank's plan with it (DBBR's panels kept until SBR-back is done) fits.
  if (on_gpu && vectors && engine) opt.overlap_sbr_back = plan_fits(true, false);
  // Several GPUs: the D&C (engine rank 0's) starts before SBR-back where its buffers fit next to
  // SBR-back's (EngineOptions::dc_at_sbr_back). One GPU keeps it after: there BC-back outlasts it.
  if (on_gpu && vectors && ranks > 1 && ec.engine_rank == 0)
    opt.dc_at_sbr_back = plan_fits(opt.overlap_sbr_back, true);

  // Host threads of the redistribution and of A's norm (PIPEVD_THREADS caps them). Measured at
  // n = 16384 on 4 ranks of 4 cores (bench/RESULTS.md, redistribution): with threads, packing
  // every message beats datatypes both ways, and 4 chunks (packing overlapping the transfer) the
  // way out; with one thread per rank the datatypes stay (packing costs 8% there). The chunk count
  // must agree on every rank (the chunks are collectives): the fewest threads wins.
  int threads = redistribution_threads(0, ranks_on_this_node(ec.caller));
  if (policy.threads > 0) threads = std::min(threads, policy.threads);
  MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT, MPI_MIN, ec.caller);
  const bool threaded = threads > 1;

  // One caller rank that is the engine, with the whole matrix in its local array at leading
  // dimension n (and Z likewise): the engine reads the caller's triangle (mirrored on the device)
  // and writes Z straight into the caller's array; nothing to redistribute. A scaled A (PDSYEVD's
  // sigma != 1, rare) takes the general path, which scales a copy, so the caller's A stays intact
  // for a forward after a failure.
  int caller_size = 0;
  MPI_Comm_size(ec.caller, &caller_size);
  const char uplo = static_cast<char>(std::toupper(static_cast<unsigned char>(c.uplo)));
  double sigma = 1;
  bool direct = caller_size == 1 && engine && n >= 1 && *c.ia == 1 && *c.ja == 1 &&
                c.desca[LLD_] == n &&
                (!vectors || (*c.iz == 1 && *c.jz == 1 && c.descz[LLD_] == n));
  if (direct) direct = scaling_factor(max_norm(uplo, n, n, c.a, n, threads)) == 1;

  double t = MPI_Wtime();
  // Not zero-filled: the redistribution writes every entry. A's columns and, once the engine has
  // copied them to its memory, Z's rows share one buffer kept from the last call
  // (redistribute/kept_buffer.hpp): fresh pages cost seconds of page faults, and one buffer for
  // both halves the host memory the engine rank holds.
  const std::size_t engine_elements =
      engine && !direct
          ? static_cast<std::size_t>(std::max(1L, n * std::max(width, vectors ? height : 0L)))
          : 0;
  KeptBuffer a_cols(engine_elements);
  ExchangeOptions in_options, out_options;
  PhaseTimes in_phases, out_phases;  // verbose 2: where the redistribution's time goes
  in_options.threads = out_options.threads = threads;
  if (threaded) {
    in_options.min_typed_segment = out_options.min_typed_segment = 1L << 40;
    out_options.chunks = 4;
  }
  // Callers on one node copy through a shared-memory window instead (redistribute/node_window;
  // the message path above where the ranks span nodes or MPI refuses the window). Measured at
  // n = 16384 on the GPU node (bench/RESULTS.md): pull 0.58x the all-to-all both ways with 4
  // cores per rank (packed 1.82x in), 1.69x / 1.81x with one core per rank (packed 3.3x / 3.0x);
  // with one engine rank for 4 callers push is faster on the way in (1.11x against 1.66x).
  in_options.node_memory = ranks == 1 && caller_size > 1 ? NodeMemory::push : NodeMemory::pull;
  out_options.node_memory = NodeMemory::pull;
  if (!direct)
    block_cyclic_to_engine(c.uplo, n, c.a, *c.ia, *c.ja, c.desca, layout, ec, a_cols.data(),
                           in_options, timed ? &in_phases : nullptr);
  double redistribute_s = MPI_Wtime() - t;
  if (timed) timeline.add("redistribute_in", t, t + redistribute_s);

  std::vector<double> w(n, 0.0);
  double* const z_rows = vectors ? a_cols.data() : nullptr;  // A is in the engine's memory then
  EngineStats stats;
  int info = 0;
  if (timed) opt.timeline = &timeline;
  std::string failure;
  int failure_kind = 0;  // 1: out of memory, 2: another engine error (one engine rank only)
  // Verbose 2: the engine's set-up (A's norm, the backend) and release (the backend's buffers,
  // pool and pinned blocks, the engine's copy of A) get intervals of their own on the timeline.
  // The release runs in a thread next to W's broadcast and Z's redistribution (2 H200s,
  // n = 32768: 0.45 s, mostly the device pool's trim) and is joined before the call returns.
  std::chrono::steady_clock::time_point release_begin, release_end;
  JoiningThread release;
  if (engine) {
    const double setup_begin = MPI_Wtime();
    if (!direct) {
      const double local = max_norm('A', n, width, a_cols.data(), n, threads);
      double anrm = 0;
      MPI_Allreduce(&local, &anrm, 1, MPI_DOUBLE, MPI_MAX, ec.engine);
      sigma = scaling_factor(anrm);
      if (sigma != 1)
        parallel_for(width, threads, [&](long j) {
          for (long i = 0; i < n; ++i) a_cols.data()[i + j * n] *= sigma;
        });
    } else {
      opt.symmetrize = uplo;
    }
    try {
      std::unique_ptr<EngineBackend> backend = make_backend(device, on_gpu, policy, threads);
      if (timed) timeline.add("engine_setup", setup_begin, MPI_Wtime());
      info = run_engine(*backend, ec.engine, layout, direct ? c.a : a_cols.data(), w.data(),
                        direct ? c.z : z_rows, opt, &stats);
      // No MPI in the thread (MPI_THREAD_SINGLE callers). The backend's device is made current
      // there first, since a new thread's current device is 0, and the backend's destructor
      // restores the device it found (on a node of several GPUs, a context on GPU 0 for every
      // rank otherwise). A's buffer holds Z now: it goes after Z's redistribution.
      auto release_all = [&release_begin, &release_end, device](std::unique_ptr<EngineBackend> be) {
        release_begin = std::chrono::steady_clock::now();
#ifdef PIPEVD_HAVE_CUDA
        if (device >= 0) cudaSetDevice(device);
#endif
        be.reset();
        release_end = std::chrono::steady_clock::now();
      };
      try {
        release = JoiningThread(release_all, std::move(backend));
      } catch (const std::system_error&) {
        // No thread to be had: the backend went with the failed start, in this thread (the
        // engine's result stands; no release interval on the timeline).
      }
    } catch (const std::exception& e) {
      // With several engine ranks the others may wait in a collective: only a lone engine rank
      // can report its failure to the caller ranks (A is untouched, so auto may still forward).
      if (ranks > 1) throw;
      failure = e.what();
      failure_kind = is_out_of_memory(e) ? 1 : 2;
    }
    if (sigma != 1)
      for (double& v : w) v /= sigma;
  }
  if (!vectors) a_cols.release();

  // W and INFO from engine rank 0 to every caller rank.
  const int root = ec.engine_to_caller[0];
  if (ranks == 1) {
    MPI_Bcast(&failure_kind, 1, MPI_INT, root, ec.caller);
    if (failure_kind != 0) {
      char text[512] = {0};
      if (engine) failure.copy(text, sizeof text - 1);
      MPI_Bcast(text, sizeof text, MPI_CHAR, root, ec.caller);
      if (failure_kind == 1) throw EngineMemoryShortage(text);
      throw std::runtime_error(text);
    }
  }
  MPI_Bcast(&info, 1, MPI_INT, root, ec.caller);
  MPI_Bcast(w.data(), static_cast<int>(n), MPI_DOUBLE, root, ec.caller);
  std::copy(w.begin(), w.end(), c.w);
  t = MPI_Wtime();
  if (info == 0 && vectors && !direct)
    engine_to_block_cyclic(n, z_rows, layout, ec, c.z, *c.iz, *c.jz, c.descz, out_options,
                           timed ? &out_phases : nullptr);
  if (timed) timeline.add("redistribute_out", t, MPI_Wtime());
  redistribute_s += MPI_Wtime() - t;
  a_cols.release();
  const bool released = release.joinable();
  release.join();
  if (timed && released) timeline.add("engine_release", release_begin, release_end, "release");

  // Verbose 1: engine rank 0's stage times; 2: every engine rank's (with its rows and columns).
  if (engine && (policy.verbose >= 2 || (policy.verbose >= 1 && ec.engine_rank == 0)))
    std::fprintf(stderr,
                 "pipevd: %s engine rank=%d/%d device=%d cols=%ld rows=%ld b=%ld k=%ld stages: "
                 "redistribute=%.4f%s dbbr=%.4f bc=%.4f dc=%.4f sbr_back=%.4f bc_back=%.4f "
                 "gemm=%.4f engine=%.4f s\n",
                 on_gpu ? "gpu" : "host", ec.engine_rank, ranks, device, width, height,
                 effective_bandwidth(n, opt.b), opt.k, redistribute_s,
                 direct ? " (none: caller's arrays)" : "", stats.dbbr, stats.bulge_chasing,
                 stats.dc, stats.sbr_back, stats.bc_back, stats.gemm, stats.total);
  if (engine && timed)
    std::fprintf(stderr,
                 "pipevd: redistribution rank=%d/%d in: plan=%.4f pack=%.4f exchange=%.4f "
                 "unpack=%.4f out: plan=%.4f pack=%.4f exchange=%.4f unpack=%.4f bind=%.4f s\n",
                 ec.engine_rank, ranks, in_phases.plan, in_phases.pack, in_phases.exchange,
                 in_phases.unpack, out_phases.plan, out_phases.pack, out_phases.exchange,
                 out_phases.unpack, stats.bind);
  // The load balance over the engine ranks (collective over them), and the timeline file.
  if (engine && policy.verbose >= 1) {
    const LoadBalance lb = load_balance_report(ec.engine, layout, stats);
    if (ec.engine_rank == 0) std::fputs(lb.text.c_str(), stderr);
  }
  if (engine && timed)
    timeline.write(ec.engine, Timeline::default_path(), device, on_gpu ? "gpu" : "host", n);
  *c.info = info;
  return info;
}

}  // namespace pipevd
