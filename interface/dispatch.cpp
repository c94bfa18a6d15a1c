#include "interface/dispatch.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "base/errors.hpp"
#include "core/backend_factory.hpp"
#include "interface/agreement.hpp"
#include "interface/argument_checks.hpp"
#include "interface/decision.hpp"
#include "interface/engine_route.hpp"
#include "interface/forward.hpp"
#include "interface/info_codes.hpp"
#include "interface/non_finite_check.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_split.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"

namespace pipevd {
namespace {

using namespace scalapack;

// Whether this process speaks for the call on stderr: grid process (0, 0), or any process outside
// the grid (where nothing was agreed).
template <class Call>
bool speaks(const Call& c) {
  int nprow, npcol, myrow, mycol;
  const int ictxt = call_context(c);
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  return nprow < 1 || (myrow == 0 && mycol == 0);
}

// A call pipevd cannot serve as asked: INFO `info` (info_codes.hpp) on every rank that gets here
// (all of them alike, since what led here was agreed), and a message on stderr. The job goes on.
template <class Call>
void refuse(const Call& c, int info, const std::string& message) {
  if (speaks(c)) {
    std::fprintf(stderr, "pipevd: error: %s (%s returns INFO = %d)\n", message.c_str(),
                 routine_tag(c), info);
    std::fflush(stderr);
  }
  *c.info = info;
}

// A NaN or an infinity in A's referenced triangle (the entry scan's finding, interface/
// non_finite_check.hpp): nothing computed, A, W and Z untouched.
template <class Call>
void refuse_non_finite(const Call& c) {
  refuse(c, info_non_finite(*c.n),
         "A holds a NaN or an infinity in the triangle UPLO names; nothing was computed");
}

// The entry scan over the call's grid (agreed_entry_scan) on the threads the policy allows.
template <class Call>
EntryScan scan_entries(const Call& c, MPI_Comm grid, const Policy& policy) {
  return agreed_entry_scan(c, grid,
                           redistribution_threads(policy.threads, ranks_on_this_node(grid)));
}

// What the last call computed with (last_call_path): "" until a call computes something.
const char* last_path = "";

// The per-call line (PIPEVD_VERBOSE >= 1) on grid process (0, 0): the route and, on an engine,
// the path it took, each with why.
template <class Call>
void report(const Call& c, const Decision& d, double seconds,
            const EnginePathChoice* path = nullptr) {
  int nprow, npcol, myrow, mycol;
  const int ictxt = call_context(c);
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  if (myrow != 0 || mycol != 0) return;
  const std::string path_text =
      path ? std::string(" path=") + to_string(path->path) + " (" + path->reason + ")" : "";
  std::fprintf(stderr,
               "pipevd: %s route=%s (%s)%s n=%d grid=%dx%d nb=%d jobz=%c uplo=%c info=%d "
               "time=%.6f s\n",
               routine_tag(c), to_string(d.route), d.why.c_str(), path_text.c_str(), *c.n, nprow,
               npcol, c.desca[NB_], c.jobz, c.uplo, *c.info, seconds);
}

// The call's grid as a communicator where this process takes part in a call that communicates
// (N != 0, inside DESCZ's grid); MPI_COMM_NULL elsewhere, where the checks answer alone.
template <class Call>
MPI_Comm call_grid(const Call& c) {
  if (*c.n == 0) return MPI_COMM_NULL;
  int nprow, npcol, myrow, mycol;
  const int ictxt = call_context(c);
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  if (nprow < 1 || npcol < 1 || myrow < 0 || myrow >= nprow || mycol < 0 || mycol >= npcol)
    return MPI_COMM_NULL;
  return grid_comm(ictxt);
}

// ScaLAPACK's routine on the caller's arguments; false (INFO set) where it cannot be reached.
template <class Call>
bool forward(const Call& c, const ArgumentCheck& chk, const std::string& why) {
  const auto& real = real_routine(c);
  if (!real.fn) {
    refuse(c, kInfoConfiguration, why.empty() ? real.error : why + ", and " + real.error);
    return false;
  }
  forward_call(c);
  last_path = "scalapack";
  write_workspace_answers(c, chk);  // the routine's answers on exit, whatever the copy path used
  return true;
}

// PIPEVD_KEEP_MEMORY=0: what a call keeps for the next one (host buffers, pinned staging) freed.
void release_call_memory() {
  release_kept_buffers();
  gpu_release_host_staging();
}

// The engine's route. Its failures reach here on every caller rank alike (engine_route.cpp's
// agree_on_failure): auto forwards (A is intact), an explicit engine returns pipevd's INFO.
// max_abs: the entry scan's norm, or none where the scan is left to the engine's upload
// (entry_scan_at_upload), whose findings end the call as dispatch's scan would have: a non-finite
// A refused, a norm that needs PDSYEVD's scaling (rare) taken on the general path, which scales a
// copy of A.
template <class Call>
void take_engine_route(const Call& c, const ArgumentCheck& chk, const Policy& policy,
                       const Decision& d, int gpu_devices, MPI_Comm grid,
                       std::optional<double> max_abs, double t0) {
  std::string failure;
  int info = kInfoEngineFailure;
  EnginePathChoice path;
  UploadScan upload;
  try {
    run_engine_route(c, policy, d.route == Route::Gpu, gpu_devices, max_abs.value_or(0), t0, &path,
                     max_abs ? nullptr : &upload);
    if (!upload.stopped) {
      if (!policy.keep_memory) release_call_memory();
      write_workspace_answers(c, chk);
      last_path = to_string(path.path);
      if (policy.verbose >= 1) report(c, d, MPI_Wtime() - t0, &path);
      return;
    }
  } catch (const OutOfMemory& e) {
    failure = e.what();
    info = kInfoOutOfMemory;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!policy.keep_memory) release_call_memory();
  if (upload.stopped) {  // stopped by the upload's scan before the solve, nothing written
    if (upload.found.non_finite) return refuse_non_finite(c);
    if (policy.verbose >= 1)
      std::fprintf(stderr,
                   "pipevd: %s: the upload's entry scan found a norm that needs %s's scaling "
                   "(max |a_ij| = %g): the general path, which scales a copy of A\n",
                   routine_name(c), routine_name(c), upload.found.max_abs);
    return take_engine_route(c, chk, policy, d, gpu_devices, grid, upload.found.max_abs, t0);
  }
  // A non-finite A is refused before any failure is answered or the call forwarded, as on every
  // route: where the upload was to scan it and did not get to, the scan now.
  if (!max_abs && (upload.scanned ? upload.found : scan_entries(c, grid, policy)).non_finite)
    return refuse_non_finite(c);
  const std::string engine = std::string(to_string(d.route)) + " engine: " + failure;
  const bool jobz_n = c.jobz == 'N' || c.jobz == 'n';  // ScaLAPACK's routines have no 'N'
  if (policy.backend != Backend::Auto || jobz_n)
    return refuse(c, info,
                  engine + (jobz_n ? std::string("; ScaLAPACK's ") + routine_name(c) +
                                         " takes no JOBZ = 'N' to forward it to"
                                   : std::string("; PIPEVD_BACKEND=auto forwards such calls to "
                                                 "ScaLAPACK")));
  if (!forward(c, chk, engine)) return;
  if (policy.verbose >= 1) {
    Decision fwd = d;
    fwd.route = Route::Scalapack;
    fwd.why = "auto: " + failure + "; forwarded";
    report(c, fwd, MPI_Wtime() - t0);
  }
}

// decide (agreed over the grid) -> check the arguments as the routine does -> refuse non-finite A
// -> ScaLAPACK or the engine.
template <class Call>
void run(const Call& c) {
  last_path = "";
  const double t0 = MPI_Wtime();
  // One decision over the grid before any path splits (interface/agreement.hpp).
  const MPI_Comm grid = call_grid(c);
  const bool agreed = grid != MPI_COMM_NULL;
  const PolicyOrError pol = agreed ? agreed_policy(grid) : process_policy();
  if (!pol.error.empty()) return refuse(c, kInfoConfiguration, pol.error);
  if (const std::string bad = use_pretend_nodes(pol.policy.test_nodes); !bad.empty())
    return refuse(c, kInfoConfiguration, bad);
  const EngineAvailability available = agreed ? agreed_availability(grid) : engine_availability();
  const Decision d = decide(pol.policy, *c.n, available);

  const ArgumentCheck chk = check_arguments(c, d.route != Route::Scalapack);
  if (chk.quick_return) return;
  *c.info = chk.info;
  if (chk.info != 0) {
    const int code = -chk.info, ictxt = call_context(c);
    pxerbla_(&ictxt, routine_name(c), &code, 7);
    return;
  }
  if (chk.query) return;
  if (!d.error.empty()) return refuse(c, kInfoConfiguration, d.error);
  // Before any route, forwarding included (ScaLAPACK's scaling stops the job on a NaN). The checks
  // passed with N > 0, so this process is in the grid (agreed). Where the engine's upload reads
  // A's triangle anyway (entry_scan_at_upload: a grid of this one rank, nothing to agree), it
  // scans it as it copies it, before anything is computed.
  const bool on_engine = d.route != Route::Scalapack && agreed;
  int grid_ranks = 0;
  if (agreed) MPI_Comm_size(grid, &grid_ranks);
  const bool at_upload =
      on_engine && entry_scan_at_upload(c, pol.policy, d.route == Route::Gpu, grid_ranks);
  EntryScan entries;
  if (agreed && !at_upload) entries = scan_entries(c, grid, pol.policy);
  if (entries.non_finite) return refuse_non_finite(c);

  // The engine scales A by the scan's norm, which only a grid's agreement gives.
  if (on_engine)
    return take_engine_route(c, chk, pol.policy, d, available.gpu_devices, grid,
                             at_upload ? std::nullopt : std::optional<double>(entries.max_abs), t0);
  if (!forward(c, chk, "")) return;
  if (pol.policy.verbose >= 1) report(c, d, MPI_Wtime() - t0);
}

}  // namespace

const char* last_call_path() { return last_path; }

std::string use_pretend_nodes(const std::string& spec) {
  static bool set = false;
  if (set) return "";
  try {
    set_pretend_nodes(spec);
  } catch (const std::invalid_argument& e) {
    return std::string("PIPEVD_TEST_NODES: ") + e.what();
  }
  set = true;
  return "";
}

void run_pdsyevd(const PdsyevdCall& call) { run(call); }
void run_pzheevd(const PzheevdCall& call) { run(call); }

}  // namespace pipevd
