#include "interface/dispatch.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "adapters/scalapack/forward.hpp"
#include "core/memory_check.hpp"
#include "interface/agreement.hpp"
#include "interface/argument_checks.hpp"
#include "interface/decision.hpp"
#include "interface/engine_route.hpp"
#include "redistribute/engine_comm.hpp"

namespace pipevd {
namespace {

using namespace scalapack;

// Configuration errors (bad environment, missing ScaLAPACK) cannot be told through INFO: stop the
// job with a message that names the problem rather than run something the user did not ask for.
[[noreturn]] void fatal(const std::string& message) {
  std::fprintf(stderr, "pipevd: error: %s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void report(const PdsyevdCall& c, const Decision& d, double seconds) {
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&c.descz[CTXT_], &nprow, &npcol, &myrow, &mycol);
  if (myrow != 0 || mycol != 0) return;
  std::fprintf(
      stderr,
      "pipevd: pdsyevd route=%s (%s) n=%d grid=%dx%d nb=%d jobz=%c uplo=%c info=%d time=%.6f s\n",
      to_string(d.route), d.why.c_str(), *c.n, nprow, npcol, c.desca[NB_], c.jobz, c.uplo, *c.info,
      seconds);
}

// The call's grid as a communicator where this process takes part in a call that communicates
// (N != 0, inside DESCZ's grid); MPI_COMM_NULL elsewhere, where the checks answer alone.
MPI_Comm call_grid(const PdsyevdCall& c) {
  if (*c.n == 0) return MPI_COMM_NULL;
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&c.descz[CTXT_], &nprow, &npcol, &myrow, &mycol);
  if (nprow < 1 || npcol < 1 || myrow < 0 || myrow >= nprow || mycol < 0 || mycol >= npcol)
    return MPI_COMM_NULL;
  return grid_comm(c.descz[CTXT_]);
}

}  // namespace

void run_pdsyevd(const PdsyevdCall& c) {
  // One decision over the grid before any path splits (interface/agreement.hpp).
  const MPI_Comm grid = call_grid(c);
  const bool agreed = grid != MPI_COMM_NULL;
  const PolicyOrError pol = agreed ? agreed_policy(grid) : process_policy();
  if (!pol.error.empty()) fatal(pol.error);
  const double t0 = MPI_Wtime();
  const EngineAvailability available = agreed ? agreed_availability(grid) : engine_availability();
  const Decision d = decide(pol.policy, *c.n, available);

  const PdsyevdCheck chk = check_pdsyevd_arguments(c, d.route != Route::Scalapack);
  if (chk.quick_return) return;
  *c.info = chk.info;
  if (chk.info != 0) {
    const int code = -chk.info;
    pxerbla_(&c.descz[CTXT_], "PDSYEVD", &code, 7);
    return;
  }
  if (chk.query) return;
  if (!d.error.empty()) fatal(d.error);

  switch (d.route) {
    case Route::Scalapack: {
      const RealPdsyevd& real = real_pdsyevd();
      if (!real.fn) fatal(real.error);
      forward_pdsyevd(c);
      c.work[0] = chk.lwmin;  // PDSYEVD's WORK(1) on exit, whatever the copy path used
      c.iwork[0] = chk.liwmin;
      break;
    }
    case Route::Host:
    case Route::Gpu:
      try {
        run_engine_route(c, pol.policy, d.route == Route::Gpu, available.gpu_devices);
      } catch (const EngineMemoryShortage& e) {
        // Every caller rank is here alike (memory_check.hpp): auto forwards, an explicit engine
        // stops with the bytes required and usable.
        const bool jobz_n = c.jobz == 'N' || c.jobz == 'n';  // ScaLAPACK's PDSYEVD has no 'N'
        if (pol.policy.backend != Backend::Auto || jobz_n)
          fatal(std::string(to_string(d.route)) + " engine: " + e.what() +
                (jobz_n ? "; ScaLAPACK's PDSYEVD takes no JOBZ = 'N' to forward it to"
                        : "; PIPEVD_BACKEND=auto forwards such calls to ScaLAPACK"));
        const RealPdsyevd& real = real_pdsyevd();
        if (!real.fn) fatal(std::string(e.what()) + ", and " + real.error);
        Decision fwd = d;
        fwd.route = Route::Scalapack;
        fwd.why = std::string("auto: ") + e.what() + "; forwarded";
        forward_pdsyevd(c);
        c.work[0] = chk.lwmin;
        c.iwork[0] = chk.liwmin;
        if (pol.policy.verbose >= 1) report(c, fwd, MPI_Wtime() - t0);
        return;
      } catch (const std::exception& e) {
        fatal(std::string(to_string(d.route)) + " engine: " + e.what());
      }
      c.work[0] = chk.lwmin;
      c.iwork[0] = chk.liwmin;
      break;
  }
  if (pol.policy.verbose >= 1) report(c, d, MPI_Wtime() - t0);
}

}  // namespace pipevd
