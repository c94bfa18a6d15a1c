#include "core/one_stage.hpp"

#include <stdexcept>

#include "core/failure_agreement.hpp"
#include "core/timeline.hpp"

namespace pipevd {

long one_stage_memory_bytes(long n, bool want_vectors) {
  const long workspace = (want_vectors ? 4 : 1) * n * n + 6 * n + 1;
  return static_cast<long>(sizeof(double)) * (n * n + n + workspace);
}

int run_one_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
                  const double* a_cols, double* w, double* z, const EngineOptions& opt,
                  OneStageStats* stats) {
  if (layout.engine_ranks() != 1)
    throw std::invalid_argument("one-stage path: the matrix must be on one engine rank");
  OneStageStats st;
  const double t_start = MPI_Wtime();
  be.bind(engine);
  const long n = layout.n;
  int info = 0;
  DeviceBuffer a(be, n * n, DeviceBuffer::Unfilled{});
  double t = MPI_Wtime();
  finish_stage(engine, "upload", [&] {
    be.copy_to_device(a_cols, a.get(), n * n);
    // The solver reads the lower triangle: a caller's upper one is mirrored there first, as the
    // two-stage engine mirrors it (a caller's lower one is read as it is).
    if (opt.symmetrize == 'U') be.mirror_triangle('U', n, a.get(), n);
    be.synchronize();
  });
  st.upload = MPI_Wtime() - t;
  timeline_add(opt.timeline, "upload", t, t + st.upload);

  t = MPI_Wtime();
  finish_stage(engine, "solve", [&] {
    info = be.symmetric_eigensolver(opt.want_vectors, n, a.get(), n, w);
    be.synchronize();
  });
  st.solve = MPI_Wtime() - t;
  timeline_add(opt.timeline, "solve", t, t + st.solve);

  t = MPI_Wtime();
  if (opt.want_vectors && info == 0)
    finish_stage(engine, "download", [&] { be.copy_to_host(a.get(), z, n * n); });
  st.download = MPI_Wtime() - t;
  timeline_add(opt.timeline, "download", t, t + st.download);
  a.reset();
  st.total = MPI_Wtime() - t_start;
  if (stats) *stats = st;
  return info;
}

}  // namespace pipevd
