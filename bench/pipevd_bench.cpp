// pipevd-bench: runs eigensolvers (pipevd and its peers, bench/peers/) on the same generated
// matrices in one MPI job and prints one JSON line per run on rank 0. Every run's accuracy is
// measured by the same distributed code; a run that fails it is reported without a time.
//
//   mpirun -n 4 pipevd-bench --solver pipevd,scalapack,elpa2 --n 1000,2000 --nb 64 --grid 2x2
//          [--jobz V|N] [--spectrum random|cluster0|cluster1|geometric|arithmetic|normal|uniform]
//          [--scalar real|complex] [--repeat 3] [--warmup 1] [--seed 1]
//          [--reference scalapack|lapack|none] [--reference-max-n N] [--threshold 100] [--list]
//          [--lead S] [--generate auto|gpu|host] [--phase-times]
// --spectrum: 'random', or one of the Table 2 spectra where tests/support/spectra is in the tree
// (bench/test_matrix); those bring their exact eigenvalues as the reference.
// --generate: where a Table 2 spectrum's matrix Q diag(lambda) Q^T is formed (O(n^3), once per n).
// 'host': by LAPACK on every rank (tests/support/spectra, the oracle); 'gpu': by cuRAND, cuSOLVER
// and cuBLAS on rank 0's current device, then broadcast (bench/gpu_spectrum_matrix), an error where
// rank 0 sees no device or its device lacks the memory; 'auto' (default): gpu from n >= 2000 where
// rank 0 sees a device in a CUDA build, else host, and host with one line on stderr where the GPU
// formation fails (lacking memory, say). Each run line says which as "generated". The 'random'
// matrix is filled entry by entry on every rank ("generated":"host"); --generate gpu refuses it.
// The reference eigenvalues (for the eigenvalue difference) cost a CPU solve per n: above
// --reference-max-n only the residual and orthogonality are checked.
// --lead S: S seconds between the process's set-up (grid, matrix) and its first timed call, an
// application's own work before its first eigensolve: what pipevd readies at the grid's creation
// (PIPEVD_PREPARE_AT_GRID) has that long to finish. Recorded as "lead_s" in each JSON line.
// --scalar complex: complex Hermitian matrices (PZHEEVD's problem) for the peers that have a
// complex path (Solver::has_hermitian); the others are reported unsupported. Same checks, in
// complex arithmetic (Z^H Z for orthogonality), same threshold.
// --phase-times: rank 0's wall seconds per phase of the process on stderr, one line per n ("set-up"
// before the first n in the first line, "exit" on a line of its own), where a device session's
// time goes besides the timed calls.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_matrix.hpp"
#include "bench/peers/root_copy.hpp"
#include "bench/peers/solver.hpp"
#ifdef PIPEVD_BENCH_HAVE_GPU
#include "bench/gpu_accuracy.hpp"
#include "bench/gpu_device.hpp"
#include "bench/gpu_spectrum_matrix.hpp"
#endif
#include "bench/run_record.hpp"
#include "bench/test_matrix.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"

namespace {

using namespace pipevd;

struct Options {
  std::vector<std::string> solvers{"pipevd", "scalapack"};
  std::vector<int> sizes{1000};
  int nb = 64, nprow = 0, npcol = 0, repeat = 1, warmup = 0;
  double lead = 0;
  char jobz = 'V';
  bool complex = false;  // --scalar complex
  std::string spectrum = "random", reference = "scalapack";
  int reference_max_n = -1;  // above it no reference eigenvalues (-1: always)
  unsigned seed = 1;
  double threshold = test::kScalapackThreshold;
  bool list = false;
  // Test hooks: perturb Z after the solve (the accuracy check must catch it); exit with this code
  // where a requested solver is absent or cannot run here (ctest's "skipped" for GPU peers).
  bool corrupt_z = false;
  int unsupported_exit = -1;
  // The complex GPU check's panel width in columns (0: its own); small, several panels are checked.
  long check_panel = 0;
  // Residual and orthogonality by PDGEMM on the ranks' CPUs ("cpu"), or gathered to the grid's
  // process (0, 0) and computed there by cuBLAS ("gpu"); "auto": gpu from n >= 4096 where a device
  // is visible (the CPUs' PDGEMMs take longer than the solves beyond that).
  std::string check = "auto";
  // Where a prescribed spectrum's matrix is formed: "host", "gpu" or "auto" (the header says when).
  std::string generate = "auto";
  bool phase_times = false;
};

// Rank 0's wall seconds by phase (--phase-times): mark(name) books the time since the previous
// mark to `name`, summed over repeats, the names in their first order.
class PhaseTimes {
 public:
  using Clock = std::chrono::steady_clock;
  void mark(const std::string& name) {
    const Clock::time_point now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    for (auto& [n, t] : phases_)
      if (n == name) {
        t += s;
        return;
      }
    phases_.emplace_back(name, s);
  }
  // "name s name s ... total s", and a fresh start.
  std::string take() {
    std::string line;
    double total = 0;
    char buf[64];
    for (const auto& [n, t] : phases_) {
      std::snprintf(buf, sizeof buf, "%s %.3f ", n.c_str(), t);
      line += buf;
      total += t;
    }
    std::snprintf(buf, sizeof buf, "total %.3f", total);
    phases_.clear();
    return line + buf;
  }

 private:
  Clock::time_point last_ = Clock::now();
  std::vector<std::pair<std::string, double>> phases_;
};

// From the process's start (static initialization, before MPI_Init).
PhaseTimes g_phases;

// auto forms a prescribed spectrum's matrix on the GPU from this n on: below it the host's LAPACK
// formation is short next to starting the GPU's libraries.
constexpr int kGpuGenerationMinN = 2000;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

// A run that cannot go on as asked (every rank calls it).
[[noreturn]] void fail(const std::string& why) {
  if (test::world_rank() == 0) std::fprintf(stderr, "pipevd-bench: %s\n", why.c_str());
  MPI_Finalize();
  std::exit(2);
}

[[noreturn]] void usage(const std::string& why) {
  fail(why +
       "\nusage: pipevd-bench --solver a,b --n n1,n2 [--nb 64] [--grid PxQ] [--jobz V|N] "
       "[--spectrum NAME] [--scalar real|complex] [--repeat R] [--warmup W] [--lead S] [--seed S] "
       "[--reference scalapack|lapack|none] [--reference-max-n N] [--threshold T] "
       "[--generate auto|gpu|host] [--phase-times] [--list]");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--solver")
        o.solvers = split(value(), ',');
      else if (arg == "--n") {
        o.sizes.clear();
        for (const auto& s : split(value(), ',')) o.sizes.push_back(std::stoi(s));
      } else if (arg == "--nb")
        o.nb = std::stoi(value());
      else if (arg == "--grid") {
        const auto pq = split(value(), 'x');
        if (pq.size() != 2) usage("--grid takes PxQ");
        o.nprow = std::stoi(pq[0]);
        o.npcol = std::stoi(pq[1]);
      } else if (arg == "--jobz") {
        const std::string j = value();
        if (j != "V" && j != "N") usage("--jobz takes V or N");
        o.jobz = j[0];
      } else if (arg == "--spectrum")
        o.spectrum = value();
      else if (arg == "--scalar") {
        const std::string t = value();
        if (t != "real" && t != "complex") usage("--scalar takes real or complex");
        o.complex = t == "complex";
      } else if (arg == "--repeat")
        o.repeat = std::stoi(value());
      else if (arg == "--warmup")
        o.warmup = std::stoi(value());
      else if (arg == "--lead")
        o.lead = std::stod(value());
      else if (arg == "--seed")
        o.seed = static_cast<unsigned>(std::stoul(value()));
      else if (arg == "--reference")
        o.reference = value();
      else if (arg == "--reference-max-n")
        o.reference_max_n = std::stoi(value());
      else if (arg == "--threshold")
        o.threshold = std::stod(value());
      else if (arg == "--list")
        o.list = true;
      else if (arg == "--test-corrupt-z")
        o.corrupt_z = true;
      else if (arg == "--unsupported-exit")
        o.unsupported_exit = std::stoi(value());
      else if (arg == "--test-check-panel")
        o.check_panel = std::stol(value());
      else if (arg == "--check")
        o.check = value();
      else if (arg == "--generate")
        o.generate = value();
      else if (arg == "--phase-times")
        o.phase_times = true;
      else
        usage("unknown argument " + arg);
    } catch (const std::logic_error&) {
      usage("bad value for " + arg);
    }
  }
  if (o.check != "auto" && o.check != "cpu" && o.check != "gpu")
    usage("--check takes auto, cpu or gpu");
  if (o.generate != "auto" && o.generate != "gpu" && o.generate != "host")
    usage("--generate takes auto, gpu or host");
  if (o.spectrum != "random" && !bench::is_prescribed_spectrum(o.spectrum))
    usage(bench::unknown_spectrum(o.spectrum));
  if (o.generate == "gpu" && !bench::is_prescribed_spectrum(o.spectrum))
    usage("--generate gpu forms a prescribed spectrum's matrix; '" + o.spectrum +
          "' is filled entry by entry on every rank");
  if (o.reference != "scalapack" && o.reference != "lapack" && o.reference != "none")
    usage("--reference takes scalapack, lapack or none");
  if (o.nb < 1 || o.repeat < 1 || o.warmup < 0) usage("--nb and --repeat must be positive");
  for (int n : o.sizes)
    if (n < 1) usage("--n must be positive");
  return o;
}

void print(const std::string& line) {
  if (test::world_rank() == 0) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
}

// The solver's call for the element type.
solvers::Outcome call_solver(solvers::Solver& s, const solvers::Problem& p, char jobz, double* a,
                             double* w, double* z) {
  return s.solve(p, jobz, a, w, z);
}
solvers::Outcome call_solver(solvers::Solver& s, const solvers::Problem& p, char jobz,
                             solvers::Complex* a, double* w, solvers::Complex* z) {
  return s.solve_hermitian(p, jobz, a, w, z);
}

std::vector<double> lapack_values(int n, std::vector<double> full) {
  return test::lapack_eigenvalues(n, std::move(full));
}
std::vector<double> lapack_values(int n, std::vector<solvers::Complex> full) {
  return test::lapack_hermitian_eigenvalues(n, std::move(full));
}

// Eigenvalues the runs are compared with: exact where the spectrum is known, else ScaLAPACK's
// PDSYEV 'N' (PZHEEV 'N') on a copy (distributed) or LAPACK's dsyevd (zheevd) on the gathered
// matrix (small n only).
template <class T>
std::vector<double> reference_eigenvalues(const Options& o, const test::BlacsGrid& grid,
                                          const solvers::Problem& p, const bench::BenchMatrix<T>& a,
                                          const std::vector<double>& exact, std::string* name) {
  if (!exact.empty()) {
    *name = "exact";
    return exact;
  }
  const int n = p.n;
  if (o.reference_max_n >= 0 && n > o.reference_max_n) {
    *name = "none";
    return {};
  }
  std::vector<double> w(n);
  if (o.reference == "scalapack") {
    // The ScaLAPACK adapter's eigenvalues-only path, on a copy.
    bench::BenchMatrix<T> copy = a;
    std::string why;
    const auto scalapack = solvers::make_solver("scalapack", &why);
    const solvers::Outcome out = call_solver(*scalapack, p, 'N', copy.data(), w.data(), nullptr);
    *name = out.info == 0 ? "scalapack" : "none";
    return out.info == 0 ? w : std::vector<double>();
  }
  if (o.reference == "lapack") {
    *name = "lapack";
    return lapack_values(n, a.m.gather(grid));
  }
  *name = "none";
  return {};
}

// Whether this process sees a CUDA device for the bench's GPU helpers (false in a build without
// CUDA).
bool gpu_visible() {
#ifdef PIPEVD_BENCH_HAVE_GPU
  return bench::gpu_device_visible();
#else
  return false;
#endif
}

bool use_gpu_check(const Options& o, int n) {
  if (o.check == "cpu") return false;
  return gpu_visible() && (o.check == "gpu" || n >= 4096);
}

#ifdef PIPEVD_BENCH_HAVE_GPU
// The GPU check for the element type (the complex one by panels of `panel` columns).
void gpu_check(int n, const double* a, const double* z, const std::vector<double>& w,
               double* measures, long) {
  bench::gpu_residual_orthogonality(n, a, z, w, &measures[0], &measures[1]);
}
void gpu_check(int n, const solvers::Complex* a, const solvers::Complex* z,
               const std::vector<double>& w, double* measures, long panel) {
  bench::gpu_residual_orthogonality(n, a, z, w, &measures[0], &measures[1], panel);
}
#endif

// The GPU check on the root (a and z full, lda = n); a failure there makes both measures NaN (the
// run then reports no time).
template <class T>
void gpu_measures(int n, const T* a, const T* z, const std::vector<double>& w, double* measures,
                  long panel) {
#ifdef PIPEVD_BENCH_HAVE_GPU
  try {
    gpu_check(n, a, z, w, measures, panel);
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipevd-bench: %s\n", e.what());
  }
#else
  (void)n, (void)a, (void)z, (void)w, (void)panel;
#endif
  measures[0] = measures[1] = std::numeric_limits<double>::quiet_NaN();
}

// Whether rank 0, which forms a prescribed spectrum's matrix on its GPU, sees a CUDA device (false
// in a build without CUDA); the same answer on every rank.
bool root_sees_gpu() {
  int visible = test::world_rank() == 0 && gpu_visible() ? 1 : 0;
  MPI_Bcast(&visible, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return visible != 0;
}

// The GPU's formation of a prescribed spectrum's matrix for the element type (none without CUDA).
#ifdef PIPEVD_BENCH_HAVE_GPU
bench::SpectrumFormer<double> gpu_former(double*) { return bench::gpu_matrix_with_eigenvalues; }
bench::SpectrumFormer<solvers::Complex> gpu_former(solvers::Complex*) {
  return bench::gpu_hermitian_with_eigenvalues;
}
#else
template <class T>
bench::SpectrumFormer<T> gpu_former(T*) {
  return nullptr;
}
#endif

// What the runs of one job share.
struct Job {
  const Options& o;
  int threads;  // for the harness's passes over its host arrays
  const test::BlacsGrid& grid;
  std::string grid_name;
  std::vector<std::unique_ptr<solvers::Solver>>& solvers;
  bool root_gpu = false;  // rank 0 can form a prescribed spectrum's matrix on a GPU
  int worst = 0;          // 1 once a run is not ok
  bool missing = false;   // a requested solver absent or unsupported
  bool led = false;       // the lead before the process's first call is over
};

// Fills `a` with the run's matrix at this n (collective) and says where it was formed: "gpu" or
// "host" (--generate; the header says when which).
template <class T>
std::string generate(const Job& job, int n, bench::BenchMatrix<T>& a, std::vector<double>& exact) {
  const Options& o = job.o;
  std::string why;
  const bench::SpectrumFormer<T> former = gpu_former(static_cast<T*>(nullptr));
  const bool gpu =
      former && bench::is_prescribed_spectrum(o.spectrum) &&
      (o.generate == "gpu" || (o.generate == "auto" && job.root_gpu && n >= kGpuGenerationMinN));
  if (gpu) {
    if (bench::generate_test_matrix(o.spectrum, o.seed, job.grid, a.m, exact, &why, former,
                                    job.threads))
      return "gpu";
    if (o.generate == "gpu") fail("--generate gpu at n = " + std::to_string(n) + ": " + why);
    if (test::world_rank() == 0)
      std::fprintf(stderr, "pipevd-bench: n = %d: the %s matrix formed on the host instead: %s\n",
                   n, o.spectrum.c_str(), why.c_str());
  }
  if (!bench::generate_test_matrix(o.spectrum, o.seed, job.grid, a.m, exact, &why, nullptr,
                                   job.threads))
    usage(why);
  return "host";
}

// Every solver on the n x n matrix of element type T (double: real symmetric, Complex: Hermitian).
template <class T>
void run_size(Job& job, int n) {
  const Options& o = job.o;
  const test::BlacsGrid& grid = job.grid;
  bench::BenchMatrix<T> a(grid, n, o.nb);
  g_phases.mark("alloc");
  std::vector<double> exact;
  const std::string generated = generate(job, n, a, exact);
  g_phases.mark("generate");

  solvers::Problem p;
  p.n = n;
  p.desc = a.desc();
  p.ictxt = grid.ictxt;
  p.nprow = grid.nprow;
  p.npcol = grid.npcol;
  p.myrow = grid.myrow;
  p.mycol = grid.mycol;
  p.comm = MPI_COMM_WORLD;
  p.local_rows = a.local_rows();
  p.local_cols = a.local_cols();
  p.hermitian = o.complex;
  std::string ref_name;
  const std::vector<double> w_ref = reference_eigenvalues(o, grid, p, a, exact, &ref_name);
  g_phases.mark("reference");
  // The GPU accuracy check gathers A once per n (and Z after each run) to process (0, 0); on one
  // process the local arrays are the full matrices (lda = n) and are checked where they are.
  const bool gpu_check = o.jobz == 'V' && use_gpu_check(o, n);
  const bool in_place = grid.nprow * grid.npcol == 1 && a.desc()[8] == n;
  std::unique_ptr<solvers::RootCopy> root;
  std::vector<T> a_full, z_full;
  if (gpu_check) {
    root = std::make_unique<solvers::RootCopy>(p);
    if (!in_place) root->gather(a.data(), a_full);
  }
  g_phases.mark("gather_a");
  // The solvers' arrays, once per n: every call gets A afresh in `work` and a zero Z.
  bench::LocalArray<T> work(a.doubles().size()), z(a.doubles().size());

  for (auto& solver : job.solvers) {
    bench::RunRecord r;
    r.solver = solver->name();
    r.device = solver->device();
    r.spectrum = o.spectrum;
    r.generated = generated;
    r.reference = ref_name;
    r.grid = job.grid_name;
    r.ranks = test::world_size();
    r.gpus = solver->gpus(p);
    r.n = n;
    r.nb = o.nb;
    r.seed = o.seed;
    r.jobz = o.jobz;
    r.scalar = o.complex ? "complex" : "real";
    r.lead_s = o.lead;
    const std::string no = o.complex && !solver->has_hermitian()
                               ? "no complex Hermitian path in this peer"
                               : solver->unsupported(p);
    if (!no.empty()) {
      r.unsupported = true;
      r.error = no;
      job.missing = true;
      print(bench::to_json(r, o.threshold));
      continue;
    }
    for (int rep = -o.warmup; rep < o.repeat; ++rep) {
      work.copy(a.doubles(), job.threads);
      z.zero(job.threads);
      std::vector<double> w(n, 0.0);
      g_phases.mark("copies");
      MPI_Barrier(MPI_COMM_WORLD);
      if (!job.led) {
        job.led = true;
        if (o.lead > 0) {
          std::this_thread::sleep_for(std::chrono::duration<double>(o.lead));
          MPI_Barrier(MPI_COMM_WORLD);
        }
      }
      g_phases.mark("barrier");
      const double t0 = MPI_Wtime();
      solvers::Outcome out = call_solver(*solver, p, o.jobz, work.data(), w.data(), z.data());
      MPI_Barrier(MPI_COMM_WORLD);
      r.seconds = MPI_Wtime() - t0;
      g_phases.mark(rep < 0 ? "warmup_call" : "call");
      if (rep < 0) continue;
      r.repeat = rep;
      r.info = out.info;
      r.error = out.error;
      r.stages = out.stages;
      r.path = out.path;
      bench::Accuracy& acc = r.accuracy;
      acc = {};
      if (out.info == 0) {
        if (o.corrupt_z)
          for (double& x : z) x *= 1.0 + 1e-6;
        if (o.jobz == 'V') {
          acc.has_vectors = true;
          if (gpu_check) {
            if (!in_place) root->gather(z.data(), z_full);
            g_phases.mark("gather_z");
            const T* a_root = in_place ? a.data() : a_full.data();
            const T* z_root = in_place ? z.data() : z_full.data();
            double measures[2] = {0, 0};
            if (root->is_root()) gpu_measures(n, a_root, z_root, w, measures, o.check_panel);
            MPI_Bcast(measures, 2, MPI_DOUBLE, root->root_rank(), MPI_COMM_WORLD);
            acc.residual = measures[0];
            acc.orthogonality = measures[1];
          } else {
            acc.residual = test::distributed_residual(n, a.data(), z.data(), a.desc(), w);
            acc.orthogonality = test::distributed_orthogonality(n, z.data(), a.desc());
          }
        }
        if (!w_ref.empty()) {
          acc.has_reference = true;
          // The worst rank's: every rank must have received the eigenvalues.
          acc.eigenvalue_diff = test::eigenvalue_difference(w, w_ref);
          MPI_Allreduce(MPI_IN_PLACE, &acc.eigenvalue_diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
      }
      g_phases.mark("check");
      if (bench::status(r, o.threshold) != "ok") job.worst = 1;
      print(bench::to_json(r, o.threshold));
    }
  }
}

int run(const Options& o) {
  if (o.check == "gpu" && !gpu_visible()) {
    print(
        "{\"check\":\"gpu\",\"status\":\"absent\",\"error\":\"no CUDA device or no CUDA build\"}");
    return o.unsupported_exit >= 0 ? o.unsupported_exit : 2;
  }
  const bool root_gpu =
      bench::is_prescribed_spectrum(o.spectrum) && o.generate != "host" && root_sees_gpu();
  if (o.generate == "gpu" && !root_gpu) {
#ifdef PIPEVD_BENCH_HAVE_GPU
    const std::string why = "no CUDA device visible to rank 0";
#else
    const std::string why = "no CUDA in this build";
#endif
    if (o.unsupported_exit < 0) usage("--generate gpu: " + why);
    print("{\"generate\":\"gpu\",\"status\":\"absent\",\"error\":\"" + why + "\"}");
    return o.unsupported_exit;
  }
  const int ranks = test::world_size();
  int nprow = o.nprow, npcol = o.npcol;
  if (nprow == 0) {
    const test::GridShape g = test::squarest_grid(ranks);
    nprow = g.nprow;
    npcol = g.npcol;
  }
  if (nprow * npcol != ranks) usage("--grid must use every rank (" + std::to_string(ranks) + ")");
  // A process that runs only peers leaves their devices alone: pipevd readies none at the grid's
  // creation (PIPEVD_PREPARE_AT_GRID's default), unless the environment asks for it.
  if (std::find(o.solvers.begin(), o.solvers.end(), "pipevd") == o.solvers.end())
    setenv("PIPEVD_PREPARE_AT_GRID", "0", /*overwrite=*/0);
  test::BlacsGrid grid(nprow, npcol, 'R');

  // The adapters once per job, so handles and communicators are not part of any timed call.
  std::vector<std::unique_ptr<solvers::Solver>> solvers;
  Job job{o, bench::host_threads(), grid, std::to_string(nprow) + "x" + std::to_string(npcol),
          solvers};
  job.root_gpu = root_gpu;
  for (const auto& name : o.solvers) {
    std::string why;
    auto s = solvers::make_solver(name, &why);
    if (!s) {
      print("{\"solver\":\"" + name + "\",\"status\":\"absent\",\"error\":\"" + why + "\"}");
      job.missing = true;
      continue;
    }
    solvers.push_back(std::move(s));
  }

  for (int n : o.sizes) {
    g_phases.mark("set-up");
    if (o.complex)
      run_size<solvers::Complex>(job, n);
    else
      run_size<double>(job, n);
    g_phases.mark("free");
    if (o.phase_times && test::world_rank() == 0)
      std::fprintf(stderr, "pipevd-bench phases n=%d: %s\n", n, g_phases.take().c_str());
  }
  if (job.missing && o.unsupported_exit >= 0 && job.worst == 0) return o.unsupported_exit;
  return job.worst;
}

}  // namespace
int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const Options o = parse(argc, argv);
  int rc = 0;
  if (o.list) {
    for (const auto& s : solvers::known_solvers())
      print("{\"solver\":\"" + s.name + "\",\"built\":" + (s.built ? "true" : "false") +
            (s.built ? std::string() : ",\"error\":\"" + s.absent_reason + "\"") + "}");
  } else {
    rc = run(o);
  }
  const bool phase_line = o.phase_times && test::world_rank() == 0;
  g_phases.mark("return");
  MPI_Finalize();
  g_phases.mark("finalize");
  if (phase_line) std::fprintf(stderr, "pipevd-bench phases exit: %s\n", g_phases.take().c_str());
  return rc;
}
