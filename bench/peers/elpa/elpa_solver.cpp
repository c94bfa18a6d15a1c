// ELPA (Debian's libelpa, CPU), 1-stage and 2-stage, on the caller's BLACS grid and block-cyclic
// layout as they are: ELPA takes ScaLAPACK's distribution when the blocks are square and start at
// process (0, 0).
#include <elpa/elpa.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>

#include "base/scalapack_api.hpp"
#include "bench/peers/solver.hpp"

namespace pipevd::solvers {
namespace {

using scalapack::CSRC_;
using scalapack::LLD_;
using scalapack::MB_;
using scalapack::NB_;
using scalapack::RSRC_;

class ElpaSolver final : public Solver {
 public:
  explicit ElpaSolver(int stages) : stages_(stages) {
    // elpa_init once per process; ELPA keeps no state between handles that needs uninit here.
    static std::once_flag once;
    std::call_once(once, [] { init_error() = elpa_init(ELPA_API_VERSION) != ELPA_OK; });
  }
  std::string name() const override { return stages_ == 1 ? "elpa1" : "elpa2"; }
  std::string device() const override { return "cpu"; }
  int gpus(const Problem&) const override { return 0; }

  std::string unsupported(const Problem& p) const override {
    if (init_error()) return "elpa_init(" + std::to_string(ELPA_API_VERSION) + ") failed";
    if (p.desc[MB_] != p.desc[NB_]) return "ELPA needs square blocks (MB = NB)";
    if (p.desc[RSRC_] != 0 || p.desc[CSRC_] != 0) return "ELPA needs RSRC = CSRC = 0";
    // ELPA's local arrays have leading dimension local_nrows: a padded LLD is not supported.
    // A process without a block of the matrix makes ELPA stop the job (seen with 2022.11).
    int bad_lld = p.desc[LLD_] != std::max<long>(1, p.local_rows),
        empty = p.local_rows == 0 || p.local_cols == 0;
    int flags[2] = {bad_lld, empty};
    MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, p.comm);
    if (flags[0]) return "ELPA needs LLD = local rows";
    if (flags[1]) return "ELPA needs a block of the matrix on every process (n >= nb * max(P, Q))";
    return {};
  }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    Outcome out;
    int err = ELPA_OK;
    elpa_t h = elpa_allocate(&err);
    if (err != ELPA_OK) return fail(out, "elpa_allocate", err);
    const struct {
      const char* key;
      int value;
    } settings[] = {{"na", p.n},
                    {"nev", p.n},
                    {"local_nrows", static_cast<int>(p.local_rows)},
                    {"local_ncols", static_cast<int>(p.local_cols)},
                    {"nblk", p.desc[MB_]},
                    {"mpi_comm_parent", static_cast<int>(MPI_Comm_c2f(p.comm))},
                    {"process_row", p.myrow},
                    {"process_col", p.mycol},
                    {"blacs_context", p.ictxt}};
    for (const auto& s : settings) {
      elpa_set_integer(h, s.key, s.value, &err);
      if (err != ELPA_OK) return fail(out, std::string("elpa_set ") + s.key, err, h);
    }
    if (elpa_setup(h) != ELPA_OK) return fail(out, "elpa_setup", ELPA_ERROR, h);
    elpa_set_integer(h, "solver", stages_ == 1 ? ELPA_SOLVER_1STAGE : ELPA_SOLVER_2STAGE, &err);
    if (err != ELPA_OK) return fail(out, "elpa_set solver", err, h);
    const double t0 = MPI_Wtime();
    if (jobz == 'V')
      elpa_eigenvectors_a_h_a_d(h, a, w, z, &err);
    else
      elpa_eigenvalues_a_h_a_d(h, a, w, &err);
    out.stages.push_back({"elpa", MPI_Wtime() - t0});
    if (err != ELPA_OK) return fail(out, "elpa_eigen*", err, h);
    elpa_deallocate(h, &err);
    return out;
  }

 private:
  static bool& init_error() {
    static bool e = false;
    return e;
  }
  static Outcome& fail(Outcome& out, const std::string& what, int err, elpa_t h = nullptr) {
    out.info = err == ELPA_OK ? -1 : err;
    // elpa.h declares elpa_strerr without C linkage, so C++ cannot call it: report the code.
    out.error = what + ": ELPA error " + std::to_string(err);
    if (h) {
      int e2 = 0;
      elpa_deallocate(h, &e2);
    }
    return out;
  }
  int stages_;
};

}  // namespace

std::unique_ptr<Solver> make_elpa1_solver() { return std::make_unique<ElpaSolver>(1); }
std::unique_ptr<Solver> make_elpa2_solver() { return std::make_unique<ElpaSolver>(2); }

}  // namespace pipevd::solvers
