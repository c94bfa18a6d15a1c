// One D&C merge's secular roots and merge matrix M on a backend (tridiagonal_dc's merge on the
// device): the host deflates and sends the plan (O(k)); the backend solves the k' secular roots
// (core/secular_root.hpp), forms Gu-Eisenstat's z-hat, and writes panels of M straight into its
// own memory, so M never crosses from the host. The GPU backend runs it in kernels (one warp per
// root), the host backend serially with the same per-root code (the tests' reference).
#pragma once

namespace pipevd {

// A Givens rotation of slots a < b of a merge's secular basis: new e_a = c e_a - s e_b (deflated),
// new e_b = s e_a + c e_b (kept in the secular problem).
struct MergeRotation {
  long a, b;
  double c, s;
};

// The merge's columns, as tridiagonal_dc's deflation leaves them (host arrays, copied).
struct MergeColumnPlan {
  long k = 0;                  // order of the merge
  const long* perm = nullptr;  // k: slot (poles ascending) -> row of M
  const long* nd = nullptr;    // k': secular index j -> slot
  long nrot = 0;               // rotations, applied to each column last to first
  const MergeRotation* rot = nullptr;
  const long* col = nullptr;  // k: column of M -> root (>= 0) or -(slot + 1) (deflated)
};

class SecularMerge {
 public:
  virtual ~SecularMerge() = default;
  // The kk >= 0 roots of 1 + rho sum_j zl_j^2 / (dl_j - lambda) = 0 (dl ascending and distinct,
  // zl without zeros, rho > 0; host arrays) into lambda (host, ascending); keeps the roots' shifts
  // and z-hat for build_panel. kk = 0 (the merge deflated whole) solves nothing and leaves M's
  // columns all unit vectors. Returns 0, or 1 + the first root that did not converge.
  virtual int solve(long kk, const double* dl, const double* zl, double rho, double* lambda) = 0;
  // The columns of the solved problem (kk = the plan's k').
  virtual void set_columns(const MergeColumnPlan& plan) = 0;
  // Columns [c0, c1) of M (unit eigenvectors of the secular problem, or unit vectors, rotated
  // and permuted to diag(Q1, Q2)'s rows) into m (backend memory, k x (c1 - c0), leading
  // dimension k), ordered after the backend's earlier work.
  virtual void build_panel(long c0, long c1, double* m) = 0;
};

}  // namespace pipevd
