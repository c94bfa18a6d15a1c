// The engine's one-stage path: the whole symmetric (or Hermitian) matrix on ONE engine rank, one
// dense eigensolver call on its backend (EngineBackend::symmetric_eigensolver: cusolverDnXsyevd on
// a GPU, LAPACK dsyevd on the host engine; hermitian_eigensolver, with zheevd on the host, for
// PZHEEVD's complex matrices), eigenvalues and eigenvectors back in the two-stage
// engine's output layout. Where n is small the two-stage engine's fixed costs outweigh its gain
// (core/engine_path.hpp chooses); the route around it (redistribution, scaling, failure
// agreement) is the two-stage engine's, with one engine rank.
#pragma once
#include <mpi.h>

#include <complex>
#include <functional>

#include "base/engine_layout.hpp"
#include "core/backend.hpp"
#include "core/engine.hpp"

namespace pipevd {

// Seconds of the one-stage path's parts on its engine rank.
struct OneStageStats {
  double upload = 0, solve = 0, download = 0, total = 0;
};

// The entry scan left to the upload (the route's direct path, interface/engine_route.cpp): only the
// triangle opt.symmetrize names goes up (EngineBackend::upload_triangle), which scans it as it
// copies it, and the solve runs only where `proceed` accepts what the scan found.
struct UploadScan {
  std::function<bool(const EntryScan&)> proceed;
  bool scanned = false;  // out: the upload ran; `found` is its scan
  EntryScan found;
  bool stopped = false;  // out: `proceed` refused: nothing solved, w and z untouched
};

// Predicted peak bytes of the one-stage path on its engine rank: A (n^2 elements), W, and the
// solver's workspace, for which LAPACK dsyevd's 1 + 6n + 2n^2 is not enough on the GPU
// (cusolverDnXsyevd asked for about 4 n^2 doubles with eigenvectors at n = 49152), so 4 n^2
// elements are counted with eigenvectors and n^2 without. element_bytes: 8 for a real symmetric
// matrix, 16 for a complex Hermitian one. The direct path's packed triangle (half of A, freed
// before the solve) counts too: a device pool keeps what it reserved for it, which need not serve
// the workspace.
long one_stage_memory_bytes(long n, bool want_vectors, long element_bytes = sizeof(double));

// Collective over `engine`, which holds exactly one rank (layout.engine_ranks() == 1, else
// std::invalid_argument). a_cols: the n x n matrix, ld n, both triangles, or with opt.symmetrize
// only that triangle (the other may hold anything, NaN included); not modified. w (out): the n
// eigenvalues ascending; z (out, with opt.want_vectors): the eigenvectors, ld n (it may be a_cols's
// buffer: A has been uploaded before Z is written). Of opt, only want_vectors, symmetrize and
// timeline are read. Returns 0, or the solver's INFO > 0 (dsyevd's convention, which is PDSYEVD's
// for a failed tridiagonal solve: JOBZ = 'V' i (n + 1) + j, JOBZ = 'N' the unconverged count).
// scan (optional, with opt.symmetrize set): the upload takes only that triangle and scans it
// (UploadScan); where the scan stops the path, 0 is returned with w and z untouched.
int run_one_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
                  const double* a_cols, double* w, double* z, const EngineOptions& opt,
                  OneStageStats* stats, UploadScan* scan = nullptr);
// The same for a complex Hermitian matrix (PZHEEVD): a_cols holds both triangles, the other one
// the conjugate of the first, or with opt.symmetrize only that triangle, which the solver then
// reads as it is (nothing is mirrored). INFO as zheevd's, which is PZHEEVD's for a failed solve.
int run_one_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
                  const std::complex<double>* a_cols, double* w, std::complex<double>* z,
                  const EngineOptions& opt, OneStageStats* stats, UploadScan* scan = nullptr);

}  // namespace pipevd
