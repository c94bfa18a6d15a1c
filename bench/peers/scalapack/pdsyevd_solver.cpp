// ScaLAPACK's PDSYEVD (CPU) as a comparison solver: the real routine, reached past pipevd's
// interposed pdsyevd_ (scalapack/scalapack_reference). JOBZ = 'N', which PDSYEVD lacks, runs
// PDSYEV 'N' (QR iteration on the tridiagonal), ScaLAPACK's eigenvalues-only path. Complex
// Hermitian problems: PZHEEVD past pipevd's pzheevd_ in the same way, and PZHEEV 'N'.
#include <algorithm>
#include <memory>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "bench/peers/solver.hpp"

extern "C" void pdsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* ia,
                        const int* ja, const int* desca, double* w, double* z, const int* iz,
                        const int* jz, const int* descz, double* work, const int* lwork, int* info,
                        std::size_t, std::size_t);
extern "C" void pzheev_(const char* jobz, const char* uplo, const int* n, void* a, const int* ia,
                        const int* ja, const int* desca, double* w, void* z, const int* iz,
                        const int* jz, const int* descz, void* work, const int* lwork,
                        double* rwork, const int* lrwork, int* info, std::size_t, std::size_t);

namespace pipevd::solvers {
namespace {

// PDSYEVD with padded workspace: ScaLAPACK 2.2's own query underestimates LWORK / LIWORK on some
// grids with few rows or columns per process (PDORMTR or PDLASRT then reject them, and PDLASRT's
// rejection hangs the other ranks). Twice the query plus one block per process is enough in every
// case of tests/test_adapters.
int pdsyevd(const Problem& p, double* a, double* w, double* z) {
  const pdsyevd_fn fn = test::scalapack_pdsyevd();
  const int one = 1, query = -1;
  const char jobz = 'V', uplo = 'L';
  int info = 0, iwq = 0;
  double wq = 0;
  fn(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, &wq, &query, &iwq, &query,
     &info, 1, 1);
  if (info != 0) return info;
  const int nb = p.desc[scalapack::NB_], procs = p.nprow * p.npcol;
  const int lwork = 2 * static_cast<int>(wq) + nb * nb * procs;
  const int liwork = 2 * iwq + nb * procs + p.n;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  fn(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, work.data(), &lwork,
     iwork.data(), &liwork, &info, 1, 1);
  return info;
}

// PZHEEVD with the same padding as pdsyevd above, for the same reason (its query shares PDSYEVD's
// structure: PZUNMTR, PDLASRT).
int pzheevd(const Problem& p, Complex* a, double* w, Complex* z) {
  const pzheevd_fn fn = test::scalapack_pzheevd();
  const int one = 1, query = -1;
  const char jobz = 'V', uplo = 'L';
  int info = 0, iwq = 0;
  Complex wq = 0;
  double rwq = 0;
  fn(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, &wq, &query, &rwq, &query,
     &iwq, &query, &info, 1, 1);
  if (info != 0) return info;
  const int nb = p.desc[scalapack::NB_], procs = p.nprow * p.npcol;
  const int lwork = 2 * static_cast<int>(wq.real()) + nb * nb * procs;
  const int lrwork = 2 * static_cast<int>(rwq) + nb * nb * procs;
  const int liwork = 2 * iwq + nb * procs + p.n;
  std::vector<Complex> work(lwork);
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(liwork);
  fn(&jobz, &uplo, &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, work.data(), &lwork,
     rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
  return info;
}

// PZHEEV 'N': eigenvalues only. Its RWORK query is not dependable in every ScaLAPACK release, so
// at least the 2 N that the routine's documentation asks for with JOBZ = 'N'.
int pzheev_values(const Problem& p, Complex* a, double* w, Complex* z) {
  const int one = 1, query = -1;
  int info = 0;
  Complex wq = 0;
  double rwq = 0;
  pzheev_("N", "L", &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, &wq, &query, &rwq,
          &query, &info, 1, 1);
  if (info != 0) return info;
  const int lwork = std::max(1, static_cast<int>(wq.real()));
  const int lrwork = std::max({1, static_cast<int>(rwq), 2 * p.n});
  std::vector<Complex> work(lwork);
  std::vector<double> rwork(lrwork);
  pzheev_("N", "L", &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, work.data(), &lwork,
          rwork.data(), &lrwork, &info, 1, 1);
  return info;
}

class ScalapackPdsyevd final : public Solver {
 public:
  std::string name() const override { return "scalapack"; }
  std::string device() const override { return "cpu"; }
  int gpus(const Problem&) const override { return 0; }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    Outcome out;
    const int one = 1;
    if (jobz == 'V') {
      out.info = pdsyevd(p, a, w, z);
    } else {
      int lwork = -1, info = 0;
      double wq = 0;
      pdsyev_("N", "L", &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, &wq, &lwork, &info,
              1, 1);
      lwork = static_cast<int>(wq);
      std::vector<double> work(std::max(1, lwork));
      pdsyev_("N", "L", &p.n, a, &one, &one, p.desc, w, z, &one, &one, p.desc, work.data(), &lwork,
              &info, 1, 1);
      out.info = info;
    }
    if (out.info != 0) out.error = "ScaLAPACK INFO = " + std::to_string(out.info);
    return out;
  }

  bool has_hermitian() const override { return true; }
  Outcome solve_hermitian(const Problem& p, char jobz, Complex* a, double* w, Complex* z) override {
    Outcome out;
    out.info = jobz == 'V' ? pzheevd(p, a, w, z) : pzheev_values(p, a, w, z);
    if (out.info != 0) out.error = "ScaLAPACK INFO = " + std::to_string(out.info);
    return out;
  }
};

}  // namespace

std::unique_ptr<Solver> make_scalapack_solver() { return std::make_unique<ScalapackPdsyevd>(); }

}  // namespace pipevd::solvers
