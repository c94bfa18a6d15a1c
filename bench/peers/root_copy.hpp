// For solvers that run in one process (cuSOLVER on one GPU, cuSOLVERMg on all GPUs of a process):
// the caller's block-cyclic matrix gathered to grid process (0, 0) as a full column-major n x n
// array, and eigenvectors scattered back, by ScaLAPACK's PDGEMR2D (PZGEMR2D for complex problems,
// whose descriptor counts COMPLEX*16 elements).
#pragma once
#include <vector>

#include "bench/peers/solver.hpp"

namespace pipevd::solvers {

class RootCopy {
 public:
  // panel_elements: PDGEMR2D moves panels of columns of at most this many elements (its buffers
  // are sized in int bytes: "xxmr2d: out of memory" for a whole 16384 x 16384 matrix).
  explicit RootCopy(const Problem& p, long panel_elements = 1L << 26);
  ~RootCopy();
  RootCopy(const RootCopy&) = delete;
  RootCopy& operator=(const RootCopy&) = delete;

  bool is_root() const { return root_; }
  int root_rank() const { return root_rank_; }  // rank of process (0, 0) in p.comm
  // Collective over the grid: `local` (caller's layout) -> full (on the root, lda = n), and back.
  void gather(const double* local, std::vector<double>& full) const;
  void scatter(const std::vector<double>& full, double* local) const;
  void gather(const Complex* local, std::vector<Complex>& full) const;
  void scatter(const std::vector<Complex>& full, Complex* local) const;
  // Eigenvalues from the root to every rank of p.comm.
  void broadcast(double* w) const;

 private:
  template <class T>
  void gather_any(const T* local, std::vector<T>& full) const;
  template <class T>
  void scatter_any(const std::vector<T>& full, T* local) const;
  template <class T>
  T* root_panel(const T* full, int jc) const;
  const Problem& p_;
  int ctxt_root_ = -1;  // 1 x 1 grid holding process (0, 0); -1 elsewhere
  int desc_root_[9] = {};
  bool root_ = false;
  int root_rank_ = 0;
  int panel_columns_ = 1;
};

}  // namespace pipevd::solvers
