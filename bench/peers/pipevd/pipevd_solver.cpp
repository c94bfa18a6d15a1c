// pipevd itself through its public entry pipevd_pdsyevd (the call a relinked PDSYEVD code makes),
// so the comparison measures what users get: checks, policy, redistribution and the engine.
// Complex Hermitian problems go through pzheevd_, the Fortran symbol pipevd exports in place of
// ScaLAPACK's (libpipevd precedes ScaLAPACK on the link line): the call a relinked PZHEEVD code
// such as VASP's complex build makes.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

#include "bench/peers/solver.hpp"
#include "pipevd.h"

#ifdef PIPEVD_SOLVERS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

extern "C" void pzheevd_(const char* jobz, const char* uplo, const int* n, void* a, const int* ia,
                         const int* ja, const int* desca, double* w, void* z, const int* iz,
                         const int* jz, const int* descz, void* work, const int* lwork,
                         double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info,
                         std::size_t jobz_len, std::size_t uplo_len);

namespace pipevd::solvers {
namespace {

class PipevdSolver final : public Solver {
 public:
  std::string name() const override { return "pipevd"; }
  // Which backend takes the call is pipevd's own policy (PIPEVD_BACKEND); report what was asked.
  std::string device() const override {
    const char* b = std::getenv("PIPEVD_BACKEND");
    return std::string("pipevd:") + (b && *b ? b : "auto");
  }
  // One engine rank per GPU (single node): at most one GPU per rank of the call.
  int gpus(const Problem& p) const override { return std::min(gpus_on_node(), p.nprow * p.npcol); }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    Outcome out;
    const int one = 1, query = -1;
    const char uplo = 'L';
    int info = 0, iwq = 0;
    double wq = 0;
    pipevd_pdsyevd(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, &wq, &query,
                   &iwq, &query, &info);
    if (info == 0) {
      const int lwork = std::max(1, static_cast<int>(wq)), liwork = std::max(1, iwq);
      // Not zero-filled, as a caller's workspace is not (PDSYEVD's is ~2 n^2 doubles).
      const std::unique_ptr<double[]> work(new double[lwork]);
      const std::unique_ptr<int[]> iwork(new int[liwork]);
      pipevd_pdsyevd(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc,
                     work.get(), &lwork, iwork.get(), &liwork, &info);
    }
    out.info = info;
    out.path = pipevd_last_path();
    if (info != 0) out.error = "pipevd INFO = " + std::to_string(info);
    return out;
  }

  bool has_hermitian() const override { return true; }
  Outcome solve_hermitian(const Problem& p, char jobz, Complex* a, double* w, Complex* z) override {
    Outcome out;
    const int one = 1, query = -1;
    const char uplo = 'L';
    int info = 0, iwq = 0;
    Complex wq = 0;
    double rwq = 0;
    pzheevd_(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, &wq, &query, &rwq,
             &query, &iwq, &query, &info, 1, 1);
    if (info == 0) {
      const int lwork = std::max(1, static_cast<int>(wq.real()));
      const int lrwork = std::max(1, static_cast<int>(rwq)), liwork = std::max(1, iwq);
      // PZHEEVD's three workspaces, of the sizes its query answered.
      const std::unique_ptr<Complex[]> work(new Complex[lwork]);
      const std::unique_ptr<double[]> rwork(new double[lrwork]);
      const std::unique_ptr<int[]> iwork(new int[liwork]);
      pzheevd_(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, work.get(),
               &lwork, rwork.get(), &lrwork, iwork.get(), &liwork, &info, 1, 1);
    }
    out.info = info;
    out.path = pipevd_last_path();
    if (info != 0) out.error = "pipevd INFO = " + std::to_string(info);
    return out;
  }

 private:
  // The GPUs pipevd may use: one per engine rank, as many as the node shows (0 without CUDA).
  static int gpus_on_node();
};

int PipevdSolver::gpus_on_node() {
  int count = 0;
#ifdef PIPEVD_SOLVERS_HAVE_CUDA
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
#endif
  return count;
}

}  // namespace

std::unique_ptr<Solver> make_pipevd_solver() { return std::make_unique<PipevdSolver>(); }

}  // namespace pipevd::solvers
