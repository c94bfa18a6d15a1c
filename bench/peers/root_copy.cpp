#include "bench/peers/root_copy.hpp"

#include <algorithm>

#include "base/scalapack_api.hpp"

extern "C" {
void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridexit(int ictxt);
}

namespace pipevd::solvers {
namespace {

// A 1 x 1 grid: the local array is the matrix (leading dimension LLD), copied column by column
// (PDGEMR2D took 1 s for n = 8000 here, a copy takes 0.1 s).
bool single_process(const Problem& p) { return p.nprow * p.npcol == 1; }

// f(first column (1-based), width) for panels of `step` columns.
template <class F>
void for_each_panel(int n, int step, F&& f) {
  for (int j = 0; j < n; j += step) {
    int jc = j + 1, width = std::min(step, n - j);
    f(&jc, &width);
  }
}

}  // namespace

// The root's panel from column jc (1-based) on, addressed from its first column: PDGEMR2D's offset
// (JA - 1) * LLD is an int, which n = 49152 overflows on the last panels (a segfault on 2 H200s).
// The distributed side keeps JA: its local offsets overflow the same way once one process holds
// 2^31 elements or more (n = 65536 on 2 processes), a limit left as it is.
template <class T>
T* RootCopy::root_panel(const T* full, int jc) const {
  if (!root_) return nullptr;
  return const_cast<T*>(full) + static_cast<long>(jc - 1) * p_.n;
}

RootCopy::RootCopy(const Problem& p, long panel_elements)
    : p_(p),
      panel_columns_(static_cast<int>(
          std::clamp(panel_elements / std::max(1, p.n), 1L, static_cast<long>(std::max(1, p.n))))) {
  root_ = p.myrow == 0 && p.mycol == 0;
  int me = 0, cand = -1;
  MPI_Comm_rank(p.comm, &me);
  if (root_) cand = me;
  MPI_Allreduce(&cand, &root_rank_, 1, MPI_INT, MPI_MAX, p.comm);
  // A 1 x 1 grid on process (0, 0) of the caller's grid (every grid process takes part in creating
  // it).
  int sys = 0;
  Cblacs_get(p.ictxt, 10, &sys);
  int map = Cblacs_pnum(p.ictxt, 0, 0);
  ctxt_root_ = sys;
  Cblacs_gridmap(&ctxt_root_, &map, 1, 1, 1);
  desc_root_[scalapack::CTXT_] = -1;  // processes outside the 1 x 1 grid
  if (root_) {
    const int zero = 0, lld = std::max(1, p.n);
    int info = 0;
    descinit_(desc_root_, &p.n, &p.n, &p.desc[scalapack::MB_], &p.desc[scalapack::NB_], &zero,
              &zero, &ctxt_root_, &lld, &info);
  }
}

RootCopy::~RootCopy() {
  if (root_) Cblacs_gridexit(ctxt_root_);
}

namespace {

// ScaLAPACK's redistribution for each element type.
void gemr2d(const int* m, const int* n, const double* a, const int* ia, const int* ja,
            const int* desca, double* b, const int* ib, const int* jb, const int* descb,
            const int* ictxt) {
  pdgemr2d_(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);
}
void gemr2d(const int* m, const int* n, const Complex* a, const int* ia, const int* ja,
            const int* desca, Complex* b, const int* ib, const int* jb, const int* descb,
            const int* ictxt) {
  pzgemr2d_(m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt);
}

}  // namespace

template <class T>
void RootCopy::gather_any(const T* local, std::vector<T>& full) const {
  if (root_) full.resize(static_cast<size_t>(p_.n) * p_.n);
  if (single_process(p_)) {
    const long n = p_.n, lld = p_.desc[scalapack::LLD_];
    for (long j = 0; j < n; ++j) std::copy(local + j * lld, local + j * lld + n, &full[j * n]);
    return;
  }
  for_each_panel(p_.n, panel_columns_, [&](int* jc, int* width) {
    const int one = 1;
    gemr2d(&p_.n, width, local, &one, jc, p_.desc, root_panel(full.data(), *jc), &one, &one,
           desc_root_, &p_.ictxt);
  });
}

template <class T>
void RootCopy::scatter_any(const std::vector<T>& full, T* local) const {
  if (single_process(p_)) {
    const long n = p_.n, lld = p_.desc[scalapack::LLD_];
    for (long j = 0; j < n; ++j) std::copy(&full[j * n], &full[j * n] + n, local + j * lld);
    return;
  }
  for_each_panel(p_.n, panel_columns_, [&](int* jc, int* width) {
    const int one = 1;
    gemr2d(&p_.n, width, root_panel(full.data(), *jc), &one, &one, desc_root_, local, &one, jc,
           p_.desc, &p_.ictxt);
  });
}

void RootCopy::gather(const double* local, std::vector<double>& full) const {
  gather_any(local, full);
}
void RootCopy::scatter(const std::vector<double>& full, double* local) const {
  scatter_any(full, local);
}
void RootCopy::gather(const Complex* local, std::vector<Complex>& full) const {
  gather_any(local, full);
}
void RootCopy::scatter(const std::vector<Complex>& full, Complex* local) const {
  scatter_any(full, local);
}

void RootCopy::broadcast(double* w) const { MPI_Bcast(w, p_.n, MPI_DOUBLE, root_rank_, p_.comm); }

}  // namespace pipevd::solvers
