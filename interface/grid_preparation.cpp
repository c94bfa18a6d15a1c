#include "interface/grid_preparation.hpp"

#include <mpi.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/at_mpi_finalize.hpp"
#include "base/joining_thread.hpp"
#include "base/scalapack_api.hpp"
#include "core/backend_factory.hpp"
#include "interface/agreement.hpp"
#include "interface/call_scope.hpp"
#include "interface/decision.hpp"
#include "interface/dispatch.hpp"
#include "interface/route_engine_comm.hpp"
#include "redistribute/engine_comm.hpp"

namespace pipevd {
namespace {

// The preparations' threads and the communicators they began that no call has taken yet, by
// engine communicator and device. Never destroyed (a static destructor could join a thread inside
// a CUDA runtime already torn down): finished at MPI_Finalize instead.
struct Preparations {
  std::mutex mutex;
  std::vector<JoiningThread> threads;
  std::set<std::pair<const EngineComm*, int>> begun;
  GridPreparationCounts counts;
  bool finish_at_finalize = false;
};

// Outermost grid creations outside a call that this process is in, counted where no lock is
// taken.
std::atomic<long> interposed_creations{0};

Preparations& preparations() {
  static auto* const p = new Preparations;
  return *p;
}

// At MPI_Finalize: set after the engine communicators' cache (redistribute/engine_comm.cpp), it
// runs before those communicators are freed (base/at_mpi_finalize.hpp).
void finish_at_finalize(Preparations& p) {
  if (p.finish_at_finalize) return;
  run_at_mpi_finalize(finish_grid_preparations);
  p.finish_at_finalize = true;
}

// Whether a call on this grid large enough for the engine (any n at or above PIPEVD_MIN_N) takes
// the GPU engine.
bool takes_gpu_engine(const Policy& policy, const EngineAvailability& available) {
  const Decision d = decide(policy, INT_MAX, available);
  return d.route == Route::Gpu && d.error.empty();
}

// The device readied in a thread: the CUDA context first (NCCL's set-up needs it), then the
// communicator begun, then (with `preload`) pipevd's kernels, which at the grid no longer lengthen
// a set-up the first call waits for. `p.threads` has room for one more. Where no thread can be had
// (nor the copy of make_nccl it takes), the communicator is made here, the application's current
// device kept (every engine rank must make it once the unique id has gone round), and the kernels
// are left to their first launch.
void start_thread(Preparations& p, int device, const std::function<void()>& make_nccl,
                  bool preload) noexcept {
  try {
    p.threads.emplace_back([device, make_nccl, preload] {
      gpu_prepare_context(device);
      make_nccl();
      if (preload) gpu_preload_kernels(device);
    });
  } catch (...) {
    gpu_run_on_device(device, make_nccl);
  }
}

// Whether `mine` holds on every process of the grid `ictxt`: BLACS' own combine over the new
// context, which needs no pipevd state, so processes whose settings differ still meet there.
bool on_every_process(int ictxt, bool mine) {
  int all = mine ? 1 : 0;
  Cigamn2d(ictxt, "All", " ", 1, 1, &all, 1, nullptr, nullptr, -1, -1, -1);
  return all == 1;
}

// prepare_at_grid_creation with the process's calls held off: every branch below is taken alike
// on every process of the grid (rank 0's policy, the agreed devices, the cached communicators).
void prepare(int ictxt) {
  const MPI_Comm grid = grid_comm(ictxt);
  const PolicyOrError agreed = agreed_policy(grid);
  const Policy& policy = agreed.policy;
  if (!agreed.error.empty() || !policy.prepare_at_grid) return;
  if (!use_pretend_nodes(policy.test_nodes).empty()) return;  // the first call reports it
  const EngineAvailability available = agreed_availability(grid);
  Preparations& p = preparations();
  {
    const std::lock_guard<std::mutex> lock(p.mutex);
    ++p.counts.agreed;
  }
  if (!takes_gpu_engine(policy, available) || !policy.gpu_prepare) return;
  const EngineComm& ec = route_engine_comm(ictxt, policy, true, available.gpu_devices);
  if (!engine_uses_nccl(ec, policy) || ec.engine_rank < 0) return;
  const bool preload = policy.preload_kernels != "off";
  const std::lock_guard<std::mutex> lock(p.mutex);
  const std::pair<const EngineComm*, int> key{&ec, ec.device};
  // An earlier grid of these processes began it: nothing to wait for here.
  if (p.begun.count(key)) return;
  // What may throw comes before the unique id goes round: after it, an engine rank that does not
  // make the communicator leaves its peers waiting in NCCL's set-up.
  finish_at_finalize(p);
  p.threads.reserve(p.threads.size() + 1);
  p.begun.insert(key);
  std::function<void()> make_nccl;
  try {
    make_nccl = gpu_begin_nccl(ec.engine, ec.device, policy.nccl_channels);
  } catch (...) {
    p.begun.erase(key);
    throw;
  }
  if (!make_nccl) {  // made already, by a call or an earlier grid
    p.begun.erase(key);
    return;
  }
  ++p.counts.nccl_begun;
  start_thread(p, ec.device, make_nccl, preload);
  if (policy.verbose >= 1 && ec.engine_rank == 0)
    std::fprintf(stderr,
                 "pipevd: grid context %d: the engine's NCCL communicator begun at the grid's "
                 "creation (%d engine ranks)\n",
                 ictxt, ec.engine_ranks());
}

}  // namespace

bool grid_preparation_enabled() {
  static const bool enabled = process_policy().policy.prepare_at_grid;
  return enabled;
}

void prepare_at_grid_creation(int ictxt) noexcept {
  if (ictxt < 0) return;
  // Nothing before the combine may skip it or wait: the grid's other processes are on their way
  // there.
  ++interposed_creations;
  std::unique_lock<std::mutex> calls(one_call_at_a_time(), std::defer_lock);
  bool mine = false;
  try {
    mine = grid_preparation_enabled() && calls.try_lock();
  } catch (...) {
  }
  if (!on_every_process(ictxt, mine)) return;
  try {
    try {
      prepare(ictxt);
    } catch (const std::exception& e) {
      if (process_policy().policy.verbose >= 1)
        std::fprintf(stderr,
                     "pipevd: grid context %d: not prepared (%s); the first call prepares it\n",
                     ictxt, e.what());
    }
  } catch (...) {
  }
}

bool take_nccl_begun_at_grid(const EngineComm& ec) {
  Preparations& p = preparations();
  const std::lock_guard<std::mutex> lock(p.mutex);
  return p.begun.erase({&ec, ec.device}) > 0;
}

void finish_grid_preparations() {
  Preparations& p = preparations();
  const std::lock_guard<std::mutex> lock(p.mutex);
  for (JoiningThread& t : p.threads) t.join();
  p.threads.clear();
  p.begun.clear();
}

GridPreparationCounts grid_preparation_counts() {
  Preparations& p = preparations();
  const std::lock_guard<std::mutex> lock(p.mutex);
  GridPreparationCounts counts = p.counts;
  counts.interposed = interposed_creations;
  return counts;
}

bool nccl_begun_at_grid(const EngineComm& ec) {
  Preparations& p = preparations();
  const std::lock_guard<std::mutex> lock(p.mutex);
  return p.begun.count({&ec, ec.device}) > 0;
}

}  // namespace pipevd
