// ELPA, 1-stage and 2-stage, on the CPU and (PIPEVD_SOLVERS_HAVE_ELPA_GPU) on NVIDIA GPUs.
//
// elpa1 / elpa2: ELPA on the CPU, on the caller's BLACS grid and block-cyclic layout as they are:
// ELPA takes ScaLAPACK's distribution when the blocks are square and start at process (0, 0). The
// library is Debian's libelpa, or, where the build has PIPEVD_ELPA_GPU_DIR, the GPU build of
// bench/elpa/build_elpa_gpu.sh with its GPU left off (the two libraries cannot both be linked).
//
// elpa1-gpu / elpa2-gpu: the GPU build with "nvidia-gpu" = 1 and every sub-step that ELPA can run
// on the GPU set to it by name (1-stage: gpu_tridiag, gpu_solve_tridi, gpu_trans_ev; 2-stage:
// gpu_bandred, gpu_solve_tridi, gpu_trans_ev_tridi_to_band with the NVIDIA kernel,
// gpu_trans_ev_band_to_full). They are ELPA's defaults once the GPU is on, said explicitly so that
// an ELPA_DEFAULT_* variable of the environment cannot move a step to the CPU unseen. The
// band-to-tridiagonal step of 2-stage has no GPU version in this ELPA (no gpu_tridiag_band key;
// elpa2_template.F90 keeps do_useGPU_tridiag_band false): it runs on the CPU, one thread per rank
// (the build has no OpenMP), and costs O(n^2 nbw), so more ranks per GPU speed it up.
// Each rank takes GPU (node-local rank mod GPUs): one rank per GPU, or the same number of ranks on
// every GPU as ELPA's PERFORMANCE_TUNING.md asks (with NVIDIA MPS, which it says improves such runs
// "quite dramatically"). ELPA uses NCCL only where a node has as many ranks as visible GPUs, MPI
// through the host otherwise.
//
// The keys are those of the release built (2026.02.001's src/elpa_index.c): "nvidia-gpu" (the
// older "gpu" is deprecated and copied into it with a warning, helpers/mod_query_gpu_settings.F90),
// the sub-step keys valid only once the GPU is on and the solver set, and elpa_setup_gpu after
// them, in the order of ELPA's test/C/test.c. No setup or autotuning call beyond these is needed:
// autotuning (USERS_GUIDE.md VI) only picks among such keys over repeated calls. The arrays go to
// ELPA on the host (elpa_eigenvectors_a_h_a_d) and ELPA copies them to the GPU itself (device
// pointers are an option since 2021.11, Changelog).
//
// Threads: ELPA's CPU steps (2-stage's band-to-tridiagonal above) use OpenMP only where ELPA was
// built with it; its guide asks for "omp_threads" to be set (USERS_GUIDE.md IV). ELPA's configure
// refuses OpenMP together with NCCL (--enable-gpu-ccl=nccl), so the default build has none;
// build_elpa_gpu.sh's ELPA_OPENMP=1 makes the other one. The adapter sets omp_threads to
// OMP_NUM_THREADS (the device scripts give each rank cores / ranks); a library without OpenMP
// accepts only 1 and keeps it.
//
// What ran is recorded in the result's "path" (read back from ELPA's keys after every setting,
// PIPEVD_ELPA_KEYS and ELPA_DEFAULT_* included): e.g. "nvidia-gpu nblk=16 nbw=64
// kernel=nvidia_sm80_gpu gpu=bandred,solve_tridi,trans_ev_tridi_to_band,trans_ev_band_to_full
// cpu=band_to_tridi omp_threads=1 use_ccl=1".
//
// Block size: the matrix goes to ELPA at nblk = 16, the block size of ELPA's documented GPU run
// (PERFORMANCE_TUNING.md) and its test programs' default; 2-stage's GPU kernel needs nblk = 2^k
// (k = 1..10), else ELPA runs that back transformation on the CPU with a warning. 2-stage reduces
// to the band nbw = (63 / nblk + 1) nblk (real case): 64 for every nblk <= 64, nblk above it, so
// nblk = 128 or 256 widens the band the CPU step above chases (2x, 4x its work); the
// intermediate_bandwidth key sets nbw (a multiple of nblk). Where the caller's layout differs from
// ELPA's, PDGEMR2D redistributes A in and Z back, timed as stages of their own; a caller at nb =
// ELPA's nblk (pipevd-bench --nb 16) is passed as it is. The handle (elpa_setup_gpu: cuBLAS
// handles, streams, NCCL communicators) is made on the first call for a problem shape and kept.
//
// Environment, read when the solver is made (so one process holds one setting; the device scripts
// pass every PIPEVD_ELPA_* and ELPA_DEFAULT_* variable to the ranks):
//   PIPEVD_ELPA_GPU_NB=k       ELPA's nblk on the GPU (default 16; 0: the caller's nb as it is).
//   PIPEVD_ELPA_GPU_KERNEL=nvidia_gpu   2-stage's plain CUDA kernel instead of the SM80 one (ELPA's
//                              own pick on an sm_80+ build; its Changelog says the SM80 kernel
//                              gains where a rank holds more than about 20000 eigenvectors).
//   PIPEVD_ELPA_GPU_CCL=0|1    ELPA's use_ccl (default: ELPA's, on where built with NCCL).
//   PIPEVD_ELPA_OMP_THREADS=k  ELPA's omp_threads (default OMP_NUM_THREADS, else 1).
//   PIPEVD_ELPA_KEYS="key=v,key=v"   further integer keys of ELPA, set last (after the adapter's
//                              own, before elpa_setup_gpu), CPU and GPU runs alike, e.g.
//                              intermediate_bandwidth=128, gpu_bandred=0, min_tile_size=1024,
//                              stripewidth_real=64, blocking_in_band_to_full=4, debug=1. A key
//                              that ELPA refuses fails the run with its name (2026.02.001's
//                              check of intermediate_bandwidth, elpa_index.c, ends without a
//                              return for a valid 2-stage value, so it may refuse one).
//   PIPEVD_ELPA_TIMINGS=1      ELPA's own timers (its "timings" key; GPU build only): after each
//                              call, rank 0 prints ELPA's tree of stage times (2-stage:
//                              full_to_band, band_to_tridi, solve, tridi_to_band, band_to_full;
//                              1-stage: forward, solve, back) to stdout.
#include <elpa/elpa.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/scalapack_api.hpp"
#include "bench/peers/solver.hpp"
#include "bench/peers/stage_clock.hpp"
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
#include "bench/peers/gpu_status.hpp"
#endif

namespace pipevd::solvers {
namespace {

using scalapack::CSRC_;
using scalapack::LLD_;
using scalapack::MB_;
using scalapack::NB_;
using scalapack::RSRC_;

// ELPA's recommended block size for its GPU runs (see the top of the file).
constexpr int kElpaGpuNb = 16;
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
// The sub-steps ELPA can run on the GPU, by their keys: 1-stage, 2-stage.
constexpr const char* kSteps1[] = {"gpu_tridiag", "gpu_solve_tridi", "gpu_trans_ev"};
constexpr const char* kSteps2[] = {"gpu_bandred", "gpu_solve_tridi", "gpu_trans_ev_tridi_to_band",
                                   "gpu_trans_ev_band_to_full"};
#endif

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// ELPA's name of a 2-stage real kernel in the form of its configure summary ("nvidia_sm80_gpu"),
// from its constants' list; the number where the list lacks it.
std::string real_kernel_name(int kernel) {
  std::string name = std::to_string(kernel);
#define PIPEVD_ELPA_KERNEL_NAME(constant, value, ...) \
  if (kernel == (value)) name = #constant;
  ELPA_FOR_ALL_2STAGE_REAL_KERNELS(PIPEVD_ELPA_KERNEL_NAME, unused)
#undef PIPEVD_ELPA_KERNEL_NAME
  const std::string prefix = "ELPA_2STAGE_REAL_";
  if (name.compare(0, prefix.size(), prefix) == 0) name.erase(0, prefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// PIPEVD_ELPA_KEYS: "key=value" entries separated by commas or blanks. An entry that is not
// key=integer is kept with `bad` set, so that the run fails naming it rather than running
// with the key silently left out.
struct ElpaKey {
  std::string key;
  int value = 0;
  bool bad = false;
};
std::vector<ElpaKey> env_keys(const char* name) {
  std::vector<ElpaKey> keys;
  const char* v = std::getenv(name);
  const std::string text = v ? v : "";
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = text.find_first_of(", \t", i);
    const std::string entry = text.substr(i, end == std::string::npos ? end : end - i);
    i = end == std::string::npos ? text.size() : end + 1;
    if (entry.empty()) continue;
    ElpaKey k;
    const size_t eq = entry.find('=');
    k.key = entry.substr(0, eq);
    char* stop = nullptr;
    const std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    const long n = std::strtol(value.c_str(), &stop, 10);
    k.bad = eq == 0 || value.empty() || *stop != '\0' || n < -2147483647L || n > 2147483647L;
    k.value = static_cast<int>(n);
    if (k.bad) k.key = entry;
    keys.push_back(k);
  }
  return keys;
}

// The block-cyclic layout ELPA works on: the caller's, or the same grid at another block size.
struct Layout {
  int nb = 0;
  long rows = 0, cols = 0;  // local; the leading dimension is `rows` (ELPA's local_nrows)
  int desc[9] = {};
};

class ElpaSolver final : public Solver {
 public:
  ElpaSolver(int stages, bool gpu) : stages_(stages), gpu_(gpu) {
    // elpa_init once per process; ELPA keeps no state between handles that needs uninit here.
    static std::once_flag once;
    std::call_once(once, [] { init_error() = elpa_init(ELPA_API_VERSION) != ELPA_OK; });
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
    if (gpu_) {
      const NodeGpu g = node_gpu();
      ngpu_ = g.gpus;
      device_id_ = g.device;
      device_ = gpu_name(std::max(0, device_id_));
      // GPUs in use: on each node min(ranks there, GPUs there), summed over the nodes' first ranks.
      int mine = g.local_rank == 0 ? std::min(g.local_size, ngpu_) : 0;
      MPI_Allreduce(&mine, &gpus_used_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      nb_ = env_int("PIPEVD_ELPA_GPU_NB", kElpaGpuNb);
      const char* k = std::getenv("PIPEVD_ELPA_GPU_KERNEL");
      plain_kernel_ = k && std::string(k) == "nvidia_gpu";
      ccl_ = env_int("PIPEVD_ELPA_GPU_CCL", -1);
    }
    timings_ = env_int("PIPEVD_ELPA_TIMINGS", 0) != 0;
#endif
    omp_threads_ = env_int("PIPEVD_ELPA_OMP_THREADS", env_int("OMP_NUM_THREADS", 1));
    keys_ = env_keys("PIPEVD_ELPA_KEYS");
  }
  ~ElpaSolver() override { release(); }
  ElpaSolver(const ElpaSolver&) = delete;
  ElpaSolver& operator=(const ElpaSolver&) = delete;
  std::string name() const override {
    return std::string(stages_ == 1 ? "elpa1" : "elpa2") + (gpu_ ? "-gpu" : "");
  }
  std::string device() const override { return gpu_ ? device_ : "cpu"; }
  int gpus(const Problem&) const override { return gpu_ ? gpus_used_ : 0; }

  std::string unsupported(const Problem& p) const override {
    if (init_error()) return "elpa_init(" + std::to_string(ELPA_API_VERSION) + ") failed";
    std::string why;
    const bool own = redistributes(p);
    const int nb = elpa_nb(p);
    if (gpu_ && ngpu_ == 0) {
      why = "no CUDA device visible";
    } else if (gpu_ && stages_ == 2 && (nb < 2 || nb > 1024 || (nb & (nb - 1)) != 0)) {
      // Otherwise ELPA runs the back transformation's kernel on the CPU (a warning, no error).
      why = "ELPA's 2-stage GPU kernel needs nb = 2^k <= 1024 (nb = " + std::to_string(nb) + ")";
    } else if (!own && p.desc[MB_] != p.desc[NB_] && (!gpu_ || p.nprow * p.npcol > 1)) {
      why = "ELPA needs square blocks (MB = NB)";
    } else if (!own && (p.desc[RSRC_] != 0 || p.desc[CSRC_] != 0)) {
      why = "ELPA needs RSRC = CSRC = 0";
    }
    // ELPA's local arrays have leading dimension local_nrows: a padded LLD is not supported.
    // A process without a block of the matrix makes ELPA stop the job (seen with 2022.11); the
    // GPU build also turns its GPU off, or stops where the GPU kernel was set, once
    // nb (max(P, Q) - 1) >= n, which is the same condition.
    int bad = !why.empty(), bad_lld = !own && p.desc[LLD_] != std::max<long>(1, p.local_rows),
        empty = static_cast<long>(nb) * (std::max(p.nprow, p.npcol) - 1) >= p.n;
    int flags[3] = {bad, bad_lld, empty};
    MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MAX, p.comm);
    if (!why.empty()) return why;
    if (flags[0]) return "another rank cannot run " + name();
    if (flags[1]) return "ELPA needs LLD = local rows";
    if (flags[2])
      return "ELPA needs a block of the matrix on every process (n > nb * (max(P, Q) - 1), nb = " +
             std::to_string(nb) + ")";
    return {};
  }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    Outcome out;
    double t = MPI_Wtime();
    // ELPA's layout: the caller's arrays, or copies at ELPA's block size.
    Layout lay = caller_layout(p);
    lay.nb = elpa_nb(p);
    std::vector<double> a_own, z_own;
    double *ea = a, *ez = z;
    const bool own = redistributes(p);
    if (own) {
      lay = layout_at(p, nb_);
      const size_t size = static_cast<size_t>(std::max(1L, lay.rows)) * std::max(1L, lay.cols);
      a_own.resize(size);
      if (jobz == 'V') z_own.resize(size);
      ea = a_own.data();
      ez = jobz == 'V' ? z_own.data() : nullptr;
      redistribute(p, a, p.desc, ea, lay.desc);
      lap(out, ("redistribute_to_nb" + std::to_string(nb_)).c_str(), t);
    }

    bool made = false;
    if (!prepare(p, lay, out, made)) return out;
    if (made) lap(out, "elpa_setup", t);
    out.path = config_;
    t = MPI_Wtime();
    int err = ELPA_OK;
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
    // ELPA's timers nest its stages under the region open at the call; one name per call, as
    // its timer adds up the calls of a region.
    std::string region = name() + " call " + std::to_string(++calls_);
    if (timings_) elpa_timer_start(handle_, region.data());
#endif
    if (jobz == 'V')
      elpa_eigenvectors_a_h_a_d(handle_, ea, w, ez, &err);
    else
      elpa_eigenvalues_a_h_a_d(handle_, ea, w, &err);
    lap(out, "elpa", t);
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
    if (timings_) {
      elpa_timer_stop(handle_, region.data());
      int rank = 0;
      MPI_Comm_rank(p.comm, &rank);
      if (rank == 0) {
        std::printf("ELPA timings, rank 0, %s, n = %d, nblk = %d:\n", region.c_str(), p.n, lay.nb);
        std::fflush(stdout);
        elpa_print_times(handle_, region.data());
      }
    }
#endif
    if (err != ELPA_OK) return fail(out, "elpa_eigen*", err);
    if (own && jobz == 'V') {
      redistribute(p, ez, lay.desc, z, p.desc);
      lap(out, "redistribute_back", t);
    }
    return out;
  }

 private:
  // The ELPA handle for this problem's shape, layout and grid: made (elpa_setup, and on the GPU
  // elpa_setup_gpu with its cuBLAS handles, streams and NCCL communicators) on the first call
  // for them, `made` then true and the stage "elpa_setup" timed, and kept, as an application
  // keeps its handle across solves (pipevd-bench --warmup 1 leaves the setup out of the timed
  // calls); false (out.error set) where ELPA refused a setting.
  bool prepare(const Problem& p, const Layout& lay, Outcome& out, bool& made) {
    const Key key{p.n, lay.nb, lay.rows, lay.cols, p.ictxt, p.comm};
    if (handle_ && key == key_) return true;
    release();
    made = true;
    int err = ELPA_OK;
    handle_ = elpa_allocate(&err);
    if (err != ELPA_OK) {
      handle_ = nullptr;
      return refuse(out, "elpa_allocate", err);
    }
    // "timings" before elpa_setup, which turns ELPA's timer on from it.
    if (timings_) {
      elpa_set_integer(handle_, "timings", 1, &err);
      if (err != ELPA_OK) return refuse(out, "elpa_set timings", err);
    }
    const struct {
      const char* key;
      int value;
    } settings[] = {{"na", p.n},
                    {"nev", p.n},
                    {"local_nrows", static_cast<int>(lay.rows)},
                    {"local_ncols", static_cast<int>(lay.cols)},
                    {"nblk", lay.nb},
                    {"mpi_comm_parent", static_cast<int>(MPI_Comm_c2f(p.comm))},
                    {"process_row", p.myrow},
                    {"process_col", p.mycol},
                    {"blacs_context", p.ictxt}};
    for (const auto& s : settings) {
      elpa_set_integer(handle_, s.key, s.value, &err);
      if (err != ELPA_OK) return refuse(out, std::string("elpa_set ") + s.key, err);
    }
    if (elpa_setup(handle_) != ELPA_OK) return refuse(out, "elpa_setup", ELPA_ERROR);
    elpa_set_integer(handle_, "solver", stages_ == 1 ? ELPA_SOLVER_1STAGE : ELPA_SOLVER_2STAGE,
                     &err);
    if (err != ELPA_OK) return refuse(out, "elpa_set solver", err);
    // A library without OpenMP refuses any value but 1: it keeps its 1 (see the top of the file).
    int refused = ELPA_OK;
    if (omp_threads_ > 1) elpa_set_integer(handle_, "omp_threads", omp_threads_, &refused);
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
    if (gpu_ && !set_gpu_keys(out)) return false;
#endif
    if (!set_env_keys(out)) return false;
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
    if (gpu_ && elpa_setup_gpu(handle_) != ELPA_OK)
      return refuse(out, "elpa_setup_gpu", ELPA_ERROR);
#endif
    config_ = describe(lay.nb);
    key_ = key;
    return true;
  }
  // The settings ELPA holds once every key is set, read back from it (so PIPEVD_ELPA_KEYS and
  // ELPA_DEFAULT_* show), for the result's "path"; a key this ELPA lacks is left out.
  std::string describe(int nblk) const {
    const auto get = [&](const char* key) {
      int value = 0, err = ELPA_OK;
      elpa_get_integer(handle_, key, &value, &err);
      return err == ELPA_OK ? value : -1;
    };
    std::string s = std::string(gpu_ ? "nvidia-gpu" : "cpu") + " nblk=" + std::to_string(nblk);
    if (stages_ == 2) {
      // 0: ELPA's own band, (63 / nblk + 1) nblk for a real matrix (elpa2_template.F90).
      int nbw = get("intermediate_bandwidth");
      if (nbw == 0) nbw = (63 / nblk + 1) * nblk;
      if (nbw > 0) s += " nbw=" + std::to_string(nbw);
      const int kernel = get("real_kernel");
      if (kernel >= 0) s += " kernel=" + real_kernel_name(kernel);
    }
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
    if (gpu_) {
      std::string on, off = stages_ == 2 ? "band_to_tridi" : "";  // no GPU version in ELPA
      const auto sort = [&](const auto& steps) {
        for (const std::string step : steps) {
          std::string& list = get(step.c_str()) == 1 ? on : off;
          list += (list.empty() ? "" : ",") + step.substr(4);  // without "gpu_"
        }
      };
      if (stages_ == 1)
        sort(kSteps1);
      else
        sort(kSteps2);
      s += " gpu=" + (on.empty() ? "none" : on);
      if (!off.empty()) s += " cpu=" + off;
      const int ccl = get("use_ccl");
      if (ccl >= 0) s += " use_ccl=" + std::to_string(ccl);
    }
#endif
    const int threads = get("omp_threads");
    if (threads > 0) s += " omp_threads=" + std::to_string(threads);
    return s;
  }
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
  // The GPU's keys, once the solver is set: "nvidia-gpu" (the release's name; "gpu" is its older
  // alias), then the sub-steps' keys and the 2-stage kernel (valid only once the GPU is on and the
  // solver set), the device and NCCL; prepare's elpa_setup_gpu comes after them, in the order of
  // ELPA's own C test. The SM80 kernel (tensor-core DGEMM, built for sm_80 and up) is what ELPA
  // itself picks for a GPU run when no kernel is set.
  bool set_gpu_keys(Outcome& out) {
    int err = ELPA_OK;
    elpa_set_integer(handle_, "nvidia-gpu", 1, &err);
    if (err != ELPA_OK) return refuse(out, "elpa_set nvidia-gpu", err);
    const auto set_steps = [&](const auto& steps) {
      for (const char* step : steps) {
        elpa_set_integer(handle_, step, 1, &err);
        if (err != ELPA_OK) return refuse(out, std::string("elpa_set ") + step, err);
      }
      return true;
    };
    if (!(stages_ == 1 ? set_steps(kSteps1) : set_steps(kSteps2))) return false;
    if (stages_ == 2) {
      elpa_set_integer(
          handle_, "real_kernel",
          plain_kernel_ ? ELPA_2STAGE_REAL_NVIDIA_GPU : ELPA_2STAGE_REAL_NVIDIA_SM80_GPU, &err);
      if (err != ELPA_OK) return refuse(out, "elpa_set real_kernel", err);
    }
    elpa_set_integer(handle_, "use_gpu_id", device_id_, &err);
    if (err != ELPA_OK) return refuse(out, "elpa_set use_gpu_id", err);
    // NCCL between the ranks' GPUs: ELPA's default (on with one rank per GPU, where it was
    // built with NCCL); PIPEVD_ELPA_GPU_CCL=0 turns it off.
    if (ccl_ >= 0) {
      elpa_set_integer(handle_, "use_ccl", ccl_, &err);
      if (err != ELPA_OK) return refuse(out, "elpa_set use_ccl", err);
    }
    return true;
  }
#endif
  // PIPEVD_ELPA_KEYS, after the adapter's own settings so that they win.
  bool set_env_keys(Outcome& out) {
    for (const ElpaKey& k : keys_) {
      if (k.bad)
        return refuse(out, "PIPEVD_ELPA_KEYS: not key=integer: '" + k.key + "'", ELPA_ERROR);
      int err = ELPA_OK;
      elpa_set_integer(handle_, k.key.c_str(), k.value, &err);
      if (err != ELPA_OK)
        return refuse(out, "elpa_set " + k.key + " = " + std::to_string(k.value), err);
    }
    return true;
  }
  void release() {
    if (!handle_) return;
    int err = 0;
    elpa_deallocate(handle_, &err);
    handle_ = nullptr;
  }
  // The block size ELPA is told: its own on the GPU (PIPEVD_ELPA_GPU_NB, 0 for the caller's).
  int elpa_nb(const Problem& p) const { return gpu_ && nb_ > 0 ? nb_ : p.desc[MB_]; }
  // Whether ELPA gets copies at its own block size rather than the caller's arrays (GPU only). On
  // one process every block size gives the same local array, so only a padded LLD needs a copy.
  bool redistributes(const Problem& p) const {
    if (!gpu_ || nb_ <= 0) return false;
    const bool lld_ok = p.desc[LLD_] == std::max<long>(1, p.local_rows);
    if (p.nprow * p.npcol == 1) return !lld_ok;
    return p.desc[MB_] != nb_ || p.desc[NB_] != nb_ || p.desc[RSRC_] != 0 || p.desc[CSRC_] != 0 ||
           !lld_ok;
  }
  static Layout caller_layout(const Problem& p) {
    Layout l;
    l.nb = p.desc[MB_];
    l.rows = p.local_rows;
    l.cols = p.local_cols;
    std::copy(p.desc, p.desc + 9, l.desc);
    return l;
  }
  static Layout layout_at(const Problem& p, int nb) {
    Layout l;
    l.nb = nb;
    const int zero = 0;
    l.rows = numroc_(&p.n, &nb, &p.myrow, &zero, &p.nprow);
    l.cols = numroc_(&p.n, &nb, &p.mycol, &zero, &p.npcol);
    const int lld = static_cast<int>(std::max(1L, l.rows));
    int info = 0;
    descinit_(l.desc, &p.n, &p.n, &nb, &nb, &zero, &zero, &p.ictxt, &lld, &info);
    return l;
  }
  // from (desc_from) -> to (desc_to), both n x n on the caller's grid, by PDGEMR2D in panels of
  // columns (its buffers are sized in int bytes, see root_copy.hpp).
  static void redistribute(const Problem& p, const double* from, const int* desc_from, double* to,
                           const int* desc_to) {
    const int one = 1;
    const int step = static_cast<int>(
        std::clamp((1L << 26) / std::max(1, p.n), 1L, static_cast<long>(std::max(1, p.n))));
    for (int j = 0; j < p.n; j += step) {
      int jc = j + 1, width = std::min(step, p.n - j);
      pdgemr2d_(&p.n, &width, from, &one, &jc, desc_from, to, &one, &jc, desc_to, &p.ictxt);
    }
  }
  static bool& init_error() {
    static bool e = false;
    return e;
  }
  bool refuse(Outcome& out, const std::string& what, int err) {
    fail(out, what, err);
    return false;
  }
  // Records the failure and drops the handle (the next call makes a new one).
  Outcome& fail(Outcome& out, const std::string& what, int err) {
    out.info = err == ELPA_OK ? -1 : err;
    // Debian's elpa.h (2022.11) declares elpa_strerr without C linkage, so C++ cannot call it
    // there: report the code.
    out.error = what + ": ELPA error " + std::to_string(err);
    release();
    return out;
  }
  struct Key {
    int n = 0, nb = 0;
    long rows = 0, cols = 0;
    int ictxt = -1;
    MPI_Comm comm = MPI_COMM_NULL;
    bool operator==(const Key& o) const {
      return n == o.n && nb == o.nb && rows == o.rows && cols == o.cols && ictxt == o.ictxt &&
             comm == o.comm;
    }
  };
  int stages_;
  bool gpu_;
  elpa_t handle_ = nullptr;
  Key key_;
  int ngpu_ = 0, device_id_ = -1, gpus_used_ = 0, nb_ = 0, ccl_ = -1, calls_ = 0, omp_threads_ = 1;
  bool plain_kernel_ = false, timings_ = false;
  std::vector<ElpaKey> keys_;
  std::string device_;
  std::string config_;  // describe()'s, for the handle in use
};

}  // namespace

std::unique_ptr<Solver> make_elpa1_solver() { return std::make_unique<ElpaSolver>(1, false); }
std::unique_ptr<Solver> make_elpa2_solver() { return std::make_unique<ElpaSolver>(2, false); }
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
std::unique_ptr<Solver> make_elpa1_gpu_solver() { return std::make_unique<ElpaSolver>(1, true); }
std::unique_ptr<Solver> make_elpa2_gpu_solver() { return std::make_unique<ElpaSolver>(2, true); }
#endif

}  // namespace pipevd::solvers
