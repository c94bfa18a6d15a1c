// The call of a solver that runs in one process (cuSOLVER on one GPU, cuSOLVERMg on all GPUs of a
// process): the matrix gathered to grid process (0, 0), solved there, every rank told how it went,
// and the eigenvectors scattered back. On a 1 x 1 grid whose local array is the matrix (LLD = n)
// nothing is gathered or scattered: the solver reads A and writes Z where the caller holds them,
// as a one-process user of the library would.
#pragma once
#include <string>
#include <vector>

#include "base/scalapack_api.hpp"
#include "bench/peers/gpu_status.hpp"
#include "bench/peers/root_copy.hpp"
#include "bench/peers/solver.hpp"
#include "bench/peers/stage_clock.hpp"

namespace pipevd::solvers {

// on_root(a_full, z_full, out) solves the n x n matrix a_full (lda = n) on the root, writing its
// eigenvectors to z_full (lda = n; it may be a_full), eigenvalues and info; `library` names it in
// the error of a failed root. T: double, or Complex for a complex Hermitian problem.
template <class T, class OnRoot>
Outcome solve_at_root(const Problem& p, char jobz, const T* a, double* w, T* z, const char* library,
                      OnRoot&& on_root) {
  Outcome out;
  RootCopy copy(p);
  const bool in_place = p.nprow * p.npcol == 1 && p.desc[scalapack::LLD_] == p.n;
  std::vector<T> full;
  double t = MPI_Wtime();
  if (!in_place) {
    copy.gather(a, full);
    lap(out, "gather", t);
  }
  int failed = 0;
  if (copy.is_root()) {
    try {
      if (in_place)
        on_root(a, z, out);
      else
        on_root(full.data(), full.data(), out);
    } catch (const ::pipevd::Error& e) {  // base/errors.hpp: the checks' typed errors
      out.error = e.what();
      failed = 1;
    }
    if (!failed && out.info != 0) failed = 1;
  }
  // Every rank learns the root's result before the collective scatter.
  int info_root[2] = {failed, out.info};
  MPI_Bcast(info_root, 2, MPI_INT, copy.root_rank(), p.comm);
  if (info_root[0]) {
    out.info = info_root[1] ? info_root[1] : -1;
    if (out.error.empty()) out.error = std::string(library) + " failed on the root";
    return out;
  }
  t = MPI_Wtime();
  if (jobz == 'V' && !in_place) copy.scatter(full, z);
  copy.broadcast(w);
  if (!in_place) lap(out, "scatter", t);
  return out;
}

}  // namespace pipevd::solvers
