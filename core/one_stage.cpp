#include "core/one_stage.hpp"

#include <stdexcept>

#include "core/failure_agreement.hpp"
#include "core/timeline.hpp"

namespace pipevd {
namespace {

// The real solver reads the lower triangle: a caller's upper one is mirrored there first, as the
// two-stage engine mirrors it (a caller's lower one is read as it is). The complex solver reads
// the caller's triangle where it is.
void prepare(EngineBackend& be, const EngineOptions& opt, long n, double* a) {
  if (opt.symmetrize == 'U') be.mirror_triangle('U', n, a, n);
}
void prepare(EngineBackend&, const EngineOptions&, long, std::complex<double>*) {}

int solve(EngineBackend& be, const EngineOptions& opt, long n, double* a, double* w) {
  return be.symmetric_eigensolver(opt.want_vectors, n, a, n, w);
}
int solve(EngineBackend& be, const EngineOptions& opt, long n, std::complex<double>* a, double* w) {
  return be.hermitian_eigensolver(opt.want_vectors, opt.symmetrize == 'U' ? 'U' : 'L', n, a, n, w);
}

// Backend memory holds doubles: a complex element takes two.
template <class S>
constexpr long doubles_per = static_cast<long>(sizeof(S) / sizeof(double));

template <class S>
int one_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout, const S* a_cols,
              double* w, S* z, const EngineOptions& opt, OneStageStats* stats, UploadScan* scan) {
  if (layout.engine_ranks() != 1)
    throw std::invalid_argument("one-stage path: the matrix must be on one engine rank");
  if (scan && opt.symmetrize != 'L' && opt.symmetrize != 'U')
    throw std::invalid_argument("one-stage path: the upload scans a triangle, and none is named");
  OneStageStats st;
  const double t_start = MPI_Wtime();
  be.bind(engine);
  const long n = layout.n, doubles = n * n * doubles_per<S>;
  int info = 0;
  DeviceBuffer a(be, doubles, DeviceBuffer::Unfilled{});
  S* const a_dev = reinterpret_cast<S*>(a.get());
  double t = MPI_Wtime();
  finish_stage(engine, "upload", [&] {
    if (scan) {
      // The solver reads that triangle only (the real one after prepare's mirror).
      scan->found = be.upload_triangle(opt.symmetrize, n, a_cols, n, a_dev, n);
      scan->scanned = true;
      scan->stopped = !scan->proceed(scan->found);
      if (scan->stopped) return;
    } else {
      be.copy_to_device(reinterpret_cast<const double*>(a_cols), a.get(), doubles);
    }
    prepare(be, opt, n, a_dev);
    be.synchronize();
  });
  st.upload = MPI_Wtime() - t;
  timeline_add(opt.timeline, "upload", t, t + st.upload);
  if (scan && scan->stopped) {
    st.total = MPI_Wtime() - t_start;
    if (stats) *stats = st;
    return 0;
  }

  t = MPI_Wtime();
  finish_stage(engine, "solve", [&] {
    info = solve(be, opt, n, a_dev, w);
    be.synchronize();
  });
  st.solve = MPI_Wtime() - t;
  timeline_add(opt.timeline, "solve", t, t + st.solve);

  t = MPI_Wtime();
  if (opt.want_vectors && info == 0)
    finish_stage(engine, "download",
                 [&] { be.copy_to_host(a.get(), reinterpret_cast<double*>(z), doubles); });
  st.download = MPI_Wtime() - t;
  timeline_add(opt.timeline, "download", t, t + st.download);
  a.reset();
  st.total = MPI_Wtime() - t_start;
  if (stats) *stats = st;
  return info;
}

}  // namespace

long one_stage_memory_bytes(long n, bool want_vectors, long element_bytes) {
  const long workspace = (want_vectors ? 4 : 1) * n * n + 6 * n + 1;
  const long packed = n * (n + 1) / 2;
  return element_bytes * (n * n + packed + workspace) + static_cast<long>(sizeof(double)) * n;
}

int run_one_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
                  const double* a_cols, double* w, double* z, const EngineOptions& opt,
                  OneStageStats* stats, UploadScan* scan) {
  return one_stage(be, engine, layout, a_cols, w, z, opt, stats, scan);
}

int run_one_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
                  const std::complex<double>* a_cols, double* w, std::complex<double>* z,
                  const EngineOptions& opt, OneStageStats* stats, UploadScan* scan) {
  return one_stage(be, engine, layout, a_cols, w, z, opt, stats, scan);
}

}  // namespace pipevd
