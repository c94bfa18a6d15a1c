// One run of the comparison harness and the verdict on it: a time is reported only for a run whose
// accuracy passed, so no table or plot can show a fast wrong answer.
#pragma once
#include <string>
#include <vector>

#include "bench/peers/solver.hpp"

namespace pipevd::bench {

struct Accuracy {
  bool has_vectors = false;    // residual and orthogonality measured (JOBZ = 'V')
  bool has_reference = false;  // eigenvalue difference measured
  double residual = 0;         // ||A Z - Z diag(w)||_F / (||A||_F n eps)
  double orthogonality = 0;    // ||Z^T Z - I||_F / (n eps) (Z^H Z for complex Z)
  double eigenvalue_diff = 0;  // max |w - w_ref| / max |w_ref|
};

struct RunRecord {
  std::string solver, device, spectrum, reference, grid;
  std::string generated;  // where the matrix was formed: "gpu" or "host" (empty: not said)
  int ranks = 0, gpus = 0, n = 0, nb = 0, repeat = 0;
  unsigned seed = 0;
  char jobz = 'V';
  std::string scalar = "real";  // "real" (PDSYEVD's problem) or "complex" (PZHEEVD's)
  double seconds = 0;           // wall time of the call, barrier to barrier
  double lead_s = 0;            // --lead: the process's wait before its first call
  std::vector<solvers::StageTime> stages;
  std::string path;  // the solver's path where it has several (pipevd: two_stage, one_stage, ...)
  int info = 0;
  std::string error;  // the solver's failure, or why it cannot take the problem
  bool unsupported = false;
  Accuracy accuracy;
};

// ScaLAPACK's tester threshold (tests/support/accuracy.hpp) on residual and orthogonality, and on
// the eigenvalue difference measured in units of n eps.
bool accuracy_passed(const Accuracy& acc, int n, double threshold);

// "ok", "accuracy-failed", "solver-failed" or "unsupported".
std::string status(const RunRecord& r, double threshold);

// One JSON object on one line. "time_s" is null unless status is "ok".
std::string to_json(const RunRecord& r, double threshold);

}  // namespace pipevd::bench
