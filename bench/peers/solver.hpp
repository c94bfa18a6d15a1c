// The one signature every eigensolver of the comparison runs sits behind: a block-cyclic symmetric
// (or complex Hermitian) A described by a ScaLAPACK descriptor in, eigenvalues (ascending, on every
// rank) and eigenvectors (block-cyclic, same descriptor) out. The driver (bench/) and the adapter
// tests measure accuracy with the same code on what comes out, so no adapter judges itself.
#pragma once
#include <mpi.h>

#include <complex>
#include <memory>
#include <string>
#include <vector>

namespace pipevd::solvers {

using Complex = std::complex<double>;

// The caller's problem: an n x n matrix on a BLACS grid, IA = JA = 1, A and Z share `desc`.
// A holds the full symmetric (Hermitian) matrix (both triangles); adapters may overwrite it.
// For a complex Hermitian problem `desc` describes COMPLEX*16 elements (PZHEEVD's descriptor) and
// local_rows counts complex elements.
struct Problem {
  int n = 0;
  const int* desc = nullptr;  // 9 integers, ScaLAPACK's layout
  int ictxt = -1, nprow = 1, npcol = 1, myrow = -1, mycol = -1;
  MPI_Comm comm = MPI_COMM_WORLD;  // the ranks of the grid (every rank calls solve)
  long local_rows = 0, local_cols = 0;
  bool hermitian = false;  // complex Hermitian (solve_hermitian), else real symmetric (solve)
};

struct StageTime {
  std::string name;
  double seconds = 0;
};

struct Outcome {
  int info = 0;                   // 0: success; otherwise the library's own code
  std::string error;              // why it failed, where info != 0
  std::vector<StageTime> stages;  // what the adapter could time inside the call (rank 0's clock)
  std::string path;  // which of the solver's paths ran, where it has several (pipevd_last_path)
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  // "cpu" or the GPU model the adapter runs on (known after construction).
  virtual std::string device() const = 0;
  // GPUs the call uses on this run (0 for CPU solvers).
  virtual int gpus(const Problem& p) const = 0;
  // Empty where the adapter can take this problem, else why not (grid shape, blocking, rank count).
  virtual std::string unsupported(const Problem& p) const { return {}; }
  // jobz 'V' (eigenvectors into z) or 'N' (eigenvalues only; z untouched). Collective over p.comm.
  virtual Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) = 0;
  // Whether the adapter has a complex Hermitian path; the driver reports a peer without one as
  // unsupported for complex runs rather than calling it.
  virtual bool has_hermitian() const { return false; }
  // The complex Hermitian twin of solve (p.hermitian set): a and z hold COMPLEX*16 elements.
  virtual Outcome solve_hermitian(const Problem& p, char jobz, Complex* a, double* w, Complex* z) {
    (void)p, (void)jobz, (void)a, (void)w, (void)z;
    Outcome out;
    out.info = -1;
    out.error = "no complex Hermitian path in " + name();
    return out;
  }
};

// Every solver the harness knows, built or not, in a fixed order.
struct SolverInfo {
  std::string name;
  bool built = false;
  std::string absent_reason;  // where not built: which library was missing at configure time
};
std::vector<SolverInfo> known_solvers();

// A new adapter by name; nullptr with `why` set where the name is unknown or the adapter not built.
std::unique_ptr<Solver> make_solver(const std::string& name, std::string* why);

}  // namespace pipevd::solvers
