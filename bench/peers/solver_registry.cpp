// Which adapters this build has: each is compiled only where its library was found at configure
// time (PIPEVD_SOLVERS_HAVE_*), and the reason for an absent one is kept for the driver to say.
#include <memory>
#include <string>
#include <vector>

#include "bench/peers/solver.hpp"

namespace pipevd::solvers {

std::unique_ptr<Solver> make_pipevd_solver();
std::unique_ptr<Solver> make_scalapack_solver();
#ifdef PIPEVD_SOLVERS_HAVE_ELPA
std::unique_ptr<Solver> make_elpa1_solver();
std::unique_ptr<Solver> make_elpa2_solver();
#endif
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
std::unique_ptr<Solver> make_elpa1_gpu_solver();
std::unique_ptr<Solver> make_elpa2_gpu_solver();
#endif
#ifdef PIPEVD_SOLVERS_HAVE_CUDA
std::unique_ptr<Solver> make_cusolver_solver();
std::unique_ptr<Solver> make_cusolvermg_solver();
#endif
#ifdef PIPEVD_SOLVERS_HAVE_CUSOLVERMP
std::unique_ptr<Solver> make_cusolvermp_solver();
#endif

namespace {

struct Entry {
  const char* name;
  std::unique_ptr<Solver> (*make)();  // null where not built
  const char* absent_reason;
};

std::vector<Entry> entries() {
  const char* no_elpa =
      "not built: ELPA not found by pkg-config (elpa_openmp or elpa) nor in PIPEVD_ELPA_GPU_DIR";
  const char* no_elpa_gpu =
      "not built: no ELPA GPU build (set PIPEVD_ELPA_GPU_DIR, see bench/elpa/build_elpa_gpu.sh)";
  const char* no_cuda = "not built: no CUDA toolkit (or PIPEVD_WITH_CUDA=OFF)";
  const char* no_mp =
      "not built: cuSOLVERMp not found (set PIPEVD_CUSOLVERMP_ROOT, see "
      "scripts/fetch-cusolvermp.sh)";
  (void)no_elpa;
  (void)no_elpa_gpu;
  (void)no_cuda;
  (void)no_mp;
  return {
      {"pipevd", make_pipevd_solver, ""},         {"scalapack", make_scalapack_solver, ""},
#ifdef PIPEVD_SOLVERS_HAVE_ELPA
      {"elpa1", make_elpa1_solver, ""},           {"elpa2", make_elpa2_solver, ""},
#else
      {"elpa1", nullptr, no_elpa},         {"elpa2", nullptr, no_elpa},
#endif
#ifdef PIPEVD_SOLVERS_HAVE_ELPA_GPU
      {"elpa1-gpu", make_elpa1_gpu_solver, ""},   {"elpa2-gpu", make_elpa2_gpu_solver, ""},
#else
      {"elpa1-gpu", nullptr, no_elpa_gpu}, {"elpa2-gpu", nullptr, no_elpa_gpu},
#endif
#ifdef PIPEVD_SOLVERS_HAVE_CUDA
      {"cusolver", make_cusolver_solver, ""},     {"cusolvermg", make_cusolvermg_solver, ""},
#else
      {"cusolver", nullptr, no_cuda},      {"cusolvermg", nullptr, no_cuda},
#endif
#ifdef PIPEVD_SOLVERS_HAVE_CUSOLVERMP
      {"cusolvermp", make_cusolvermp_solver, ""},
#else
      {"cusolvermp", nullptr, no_mp},
#endif
  };
}

}  // namespace

std::vector<SolverInfo> known_solvers() {
  std::vector<SolverInfo> out;
  for (const Entry& e : entries()) out.push_back({e.name, e.make != nullptr, e.absent_reason});
  return out;
}

std::unique_ptr<Solver> make_solver(const std::string& name, std::string* why) {
  for (const Entry& e : entries()) {
    if (name != e.name) continue;
    if (!e.make && why) *why = e.absent_reason;
    return e.make ? e.make() : nullptr;
  }
  if (why) *why = "unknown solver '" + name + "'";
  return nullptr;
}

}  // namespace pipevd::solvers
