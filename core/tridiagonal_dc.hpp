// Stage 3 by divide and conquer with the merges' GEMMs on the engine's backend (Cuppen's tearing,
// Gu-Eisenstat's eigenvectors): the O(n^3) part, Q_new = diag(Q1, Q2) M, runs through
// EngineBackend::gemm (cuBLAS on the GPU); the O(n^2) scalar parts (leaves, deflation, secular
// roots, the merge matrix M) run on the host in a thread pool.
#pragma once
#include <vector>

#include "core/backend.hpp"

namespace pipevd {

// interface/engine_options fills these from the policy (PIPEVD_DC_THREADS, PIPEVD_VERBOSE,
// PIPEVD_DC_DEVICE_MERGE, PIPEVD_DC_PINNED); nothing here reads the environment.
struct DcOptions {
  long leaf = 128;       // largest leaf, solved on the host by LAPACK's dsteqr
  long panel = 2048;     // columns of M uploaded at once (device memory: k * panel doubles)
  int threads = 0;       // host threads; 0: every CPU of the node
  bool verbose = false;  // stage times to stderr
  // Secular roots and M made by the backend (EngineBackend::secular_merge) for merges of order
  // >= device_merge_min: -1 on device backends (a merge's roots and M are O(k^2) independent work,
  // far faster on the device than on the host's cores) and off on the host backend, 0 never
  // (roots by LAPACK's dlaed4, M built on the host and uploaded), 1 wherever the backend offers it
  // (the host backend runs the same per-root code serially).
  int merge_on_device = -1;
  long device_merge_min = 512;
  // M's panels built in page-locked memory and uploaded asynchronously, double-buffered: 1 on,
  // otherwise off (the device merge leaves little to upload).
  int pinned_staging = -1;
};

// Seconds per part of one tridiagonal_dc (or tridiagonal_dc_fold) call (host clock). Asking for
// them (stats != nullptr) synchronises the backend at each part's end, which stops host work
// overlapping the GEMMs. upload: host time issuing the merge matrices' uploads from pinned staging
// and waiting for a staging panel to be read again (untimed, the uploads overlap building the next
// panel); panels: how many M panels crossed to the backend. device_merge: time of the merges on the
// backend's SecularMerge (their host deflation, then roots, z-hat and M panels: timed, the kernels'
// time) and device_merges how many took that path. gemm: the merges' GEMMs (folded: the top merges'
// M placed instead of multiplied).
struct DcStats {
  double leaves = 0, host_merge = 0, upload = 0, device_merge = 0, gemm = 0, total = 0;
  long merges = 0, deflated = 0, threads = 0, panels = 0, device_merges = 0;
};

// T = Q diag(d) Q^T for the symmetric tridiagonal T (diagonal d, off-diagonal e, n - 1 entries).
// On return d holds the eigenvalues ascending and q (backend memory, n x n, leading dimension
// ldq >= n) the eigenvectors; e is not modified. Uses up to about 2 n * ldq doubles of backend
// memory (q and one work buffer) plus k * panel. Returns 0, or > 0 where a secular equation
// failed to converge (dlaed4's INFO).
int tridiagonal_dc(EngineBackend& be, long n, double* d, const double* e, double* q, long ldq,
                   const DcOptions& opt = DcOptions{}, DcStats* stats = nullptr);

// The D&C with its top merges' GEMMs left to the caller: Q_d = Q_pre M exactly as tridiagonal_dc
// forms it. Q_pre is block diagonal: for each unreduced block of T with a top merge, that merge's
// children Q1 and Q2; for the others (leaf-sized, or diagonal), their whole eigenvectors. M is
// dense, n x n: each top merge's merge matrix on its block's diagonal (the identity for the other
// blocks), its columns permuted into the ascending order of the eigenvalues across the blocks.
// The engine multiplies X Q_pre M on every rank, so that the top merge's O(n^3) GEMM, the bulk of
// the D&C, leaves engine rank 0's critical path.
struct DcFold {
  // False where no unreduced block reaches a merge, so that nothing folds: m holds Q_d itself and
  // orders and q_pre are empty.
  bool folded = false;
  std::vector<long> orders;  // Q_pre's diagonal blocks' orders, from (0, 0) on (their sum is n)
  DeviceBuffer q_pre;        // those blocks packed at its start (core/block_diagonal.hpp)
  DeviceBuffer m;            // n x n, leading dimension n: M, or Q_d where not folded
};

// As tridiagonal_dc (d becomes the eigenvalues, ascending; e is not modified), into `out`, whose
// buffers come from `be`: about 2 n^2 doubles of backend memory, as tridiagonal_dc. Returns 0, or
// > 0 as tridiagonal_dc (out then empty).
int tridiagonal_dc_fold(EngineBackend& be, long n, double* d, const double* e, DcFold& out,
                        const DcOptions& opt = DcOptions{}, DcStats* stats = nullptr);

}  // namespace pipevd
