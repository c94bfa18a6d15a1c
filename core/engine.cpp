#include "core/engine.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <vector>

#include "base/joining_thread.hpp"
#include "base/page_array.hpp"
#include "core/dbbr.hpp"
#include "core/failure_agreement.hpp"
#include "core/fault_injection.hpp"
#include "core/final_product.hpp"
#include "core/reflector_store.hpp"
#include "core/sbr_back.hpp"
#include "core/tridiagonal_solver.hpp"

namespace pipevd {

const char* to_string(TridiagonalSolver s) {
  switch (s) {
    case TridiagonalSolver::Auto:
      return "auto";
    case TridiagonalSolver::Dstedc:
      return "dstedc";
    case TridiagonalSolver::Dc:
      return "dc";
  }
  return "?";
}

namespace {
constexpr long kDstedcMaxN = 46340;  // the largest n with dstedc's 1 + 4n + n^2 < 2^31
}  // namespace

TridiagonalSolver resolve_tridiagonal_solver(TridiagonalSolver s, bool host_memory, long n) {
  if (s != TridiagonalSolver::Auto) return s;
  return host_memory && n <= kDstedcMaxN ? TridiagonalSolver::Dstedc : TridiagonalSolver::Dc;
}

namespace {

// The engine over the scalar T: double, or std::complex<double> for a Hermitian matrix, whose band
// chases to a real tridiagonal (core/reflector_store.hpp), so stages 3 and 5's right factors are
// real in both cases.
template <class T>
int run_two_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout, const T* a_cols,
                  double* w, T* z_rows, const EngineOptions& opt, EngineStats* stats) {
  EngineStats st;
  const double t_start = MPI_Wtime();
  be.bind(engine);
  st.bind = MPI_Wtime() - t_start;
  timeline_add(opt.timeline, "engine_bind", t_start, t_start + st.bind);
  int rank = 0;
  MPI_Comm_rank(engine, &rank);
  const long n = layout.n;
  const long b = effective_bandwidth(n, opt.b);
  const TridiagonalSolver solver = resolve_tridiagonal_solver(opt.tridiagonal, be.host_memory(), n);
  // dstedc's workspace (1 + 4n + n^2) must fit LAPACK's 32-bit integers; refuse before any
  // collective so every rank stops at the same point.
  if (opt.want_vectors && solver == TridiagonalSolver::Dstedc && n > kDstedcMaxN)
    throw std::length_error("engine: n > 46340 exceeds dstedc's 32-bit workspace (use dc)");

  // 1 DBBR on the device copy of this rank's columns, then the band on every rank.
  double t = MPI_Wtime();
  BasicDeviceBuffer<T> band;
  BasicReflectorPanels<T> panels;
  if (opt.symmetrize && layout.engine_ranks() != 1)
    throw std::invalid_argument("engine: symmetrize needs a single engine rank");
  {
    // Every rank's columns on the device before DBBR's first message, or every rank throws.
    BasicDeviceBuffer<T> a;
    agree_on_allocation(engine, "upload", [&] {
      a = BasicDeviceBuffer<T>(be, n * layout.width(rank));
      be.copy_to_device(a_cols, a.get(), n * layout.width(rank));
      if (opt.symmetrize) be.mirror_triangle(opt.symmetrize, n, a.get(), n);
    });
    DbbrOptions dbbr{b, opt.k, opt.want_vectors};
    dbbr.profiler = opt.dbbr_profiler;
    panels = reduce_to_band(be, layout, rank, a.get(), dbbr);
    band = gather_band(be, layout, rank, a.get(), b);
  }
  // Each stage ends where every engine rank agrees on a failure of any (core/failure_agreement):
  // the stage's local work (all of it where the stage sends no message) and its synchronisation,
  // where an asynchronous device error surfaces. Inside a stage that sends messages, the buffers
  // they need are agreed on before them (agree_on_allocation here; DBBR per outer block, where a
  // rank's own work between its panels' messages holds a failure to the next block), so that no
  // rank leaves the others waiting in a message.
  finish_stage(engine, "dbbr", [&] { be.synchronize(); });
  st.dbbr = MPI_Wtime() - t;
  timeline_add(opt.timeline, "dbbr", t, t + st.dbbr);

  // 4a This rank's rows of Q_sb = Q_s Q_b start as the identity's row block; with
  // overlap_sbr_back, SBR-back is queued now on a companion's stream (x filled and DBBR's panels
  // complete on `be` before: the synchronisation above) and runs next to bulge chasing. The
  // panels (freed through `be`'s stream) and merged blocks then live until that stream is
  // synchronised; without the overlap each panel goes as soon as it is merged.
  // X is held as doubles: stage 5 multiplies it by the real Q_d, which for complex X is the real
  // product of its doubles (2h rows) with Q_d.
  const long h = layout.height(rank), r0 = layout.row_begin[rank], ldx = std::max(1L, h);
  constexpr long words = Scalar<T>::words;
  DeviceBuffer x;
  auto xt = [&] { return reinterpret_cast<T*>(x.get()); };
  std::unique_ptr<EngineBackend> sbr_be;
  std::vector<BasicMergedReflectorBlock<T>> blocks;
  auto start_sbr_back = [&](EngineBackend& sb, bool release_panels) {
    blocks = merge_reflector_panels(sb, panels, opt.k, release_panels);
    if (release_panels) panels.panels.clear();
    apply_sbr_back(sb, blocks, h, xt(), ldx);
  };
  if (opt.want_vectors)
    agree_on_allocation(engine, "x_allocation", [&] {
      x = DeviceBuffer(be, words * ldx * n);
      be.fill_matrix(h, n, T(0), T(0), xt(), ldx);
      be.fill_matrix(h, h, T(0), T(1), xt() + r0 * ldx, ldx);
      if (opt.overlap_sbr_back) {
        be.synchronize();
        sbr_be = be.companion(/*urgent=*/false);
        start_sbr_back(*sbr_be, /*release_panels=*/false);
      }
    });

  // 2 Bulge chasing, replicated on every rank (each needs all of U for its rows of BC-back).
  t = MPI_Wtime();
  std::vector<double> d, e;
  BasicReflectorStore<T> u;
  finish_stage(engine, "bulge_chasing", [&] {
    d.resize(std::max(1L, n));
    e.resize(std::max(1L, n));
    if (opt.want_vectors)
      be.bulge_chase(n, b, band.get(), b + 1, d.data(), e.data(), u, /*host_copy=*/false,
                     /*beside_companion=*/sbr_be != nullptr);
    else
      be.bulge_chase_values(n, b, band.get(), b + 1, d.data(), e.data());
    band.reset();
  });
  st.bulge_chasing = MPI_Wtime() - t;
  timeline_add(opt.timeline, "bulge_chasing", t, t + st.bulge_chasing);

  int info = 0;
  if (!opt.want_vectors) {
    t = MPI_Wtime();
    finish_stage(engine, "eigenvalues", [&] {
      if (rank == 0) info = be.tridiagonal_eigenvalues(n, d.data(), e.data(), w);
    });
    MPI_Bcast(&info, 1, MPI_INT, 0, engine);
    MPI_Bcast(w, static_cast<int>(n), MPI_DOUBLE, 0, engine);
    st.dc = MPI_Wtime() - t;
    if (rank == 0) timeline_add(opt.timeline, "dc", t, t + st.dc);
    st.total = MPI_Wtime() - t_start;
    if (stats) *stats = st;
    return info;
  }

  // 3 D&C on rank 0 in a thread, concurrent with 4. dc issues its GEMMs through a companion
  // backend (its own stream and handle: the main thread keeps using `be`), and its result stays
  // there: Q_d, or with dc_fold Q_pre and M (stage 5 multiplies by them on every rank).
  std::unique_ptr<EngineBackend> dc_be;
  TridiagonalResult rank0;  // after dc_be: its buffers go through it
  const bool use_dc = solver == TridiagonalSolver::Dc;
  std::exception_ptr dc_error;
  std::chrono::steady_clock::time_point dc_begin, dc_end;  // for the timeline
  auto solve = [&] {  // no MPI in here: the caller may have MPI_THREAD_SINGLE
    const auto t0 = dc_begin = std::chrono::steady_clock::now();
    try {
      inject_fault("dc", rank);
      if (use_dc && opt.dc_fold) {
        info = tridiagonal_dc_fold(*dc_be, n, d.data(), e.data(), rank0.dc, opt.dc);
      } else if (use_dc) {
        rank0.dc.m = DeviceBuffer(*dc_be, n * n);
        info = tridiagonal_dc(*dc_be, n, d.data(), e.data(), rank0.dc.m.get(), n, opt.dc);
      } else {
        rank0.q_host = PageArray<double>(static_cast<std::size_t>(n) * n);
        info = tridiagonal_eigenpairs(n, d.data(), e.data(), rank0.q_host.data());
      }
      if (dc_be) dc_be->synchronize();
    } catch (...) {  // agreed over the engine ranks by the main thread after the join
      dc_error = std::current_exception();
    }
    dc_end = std::chrono::steady_clock::now();
    st.dc = std::chrono::duration<double>(dc_end - t0).count();
  };
  // Declared after all the D&C thread uses: a throw in the main thread while it runs (e.g. out of
  // device memory in SBR-back, next to the D&C's buffers) joins it before any of those go.
  JoiningThread dc;
  // A failure to start (the companion, the thread) is the D&C's own, agreed after the join.
  auto start_dc = [&] {
    if (rank != 0) return;
    try {
      if (use_dc) dc_be = be.companion(/*urgent=*/true);
      if (opt.dc_in_thread)
        dc = JoiningThread(solve);
      else
        solve();
    } catch (...) {
      dc_error = std::current_exception();
    }
  };
  // dstedc (host memory) starts at once; dc's device buffers (Q_d or M, and a work copy or Q_pre:
  // 2 n^2) would meet SBR-back's merged W, Y on the device, so it starts after SBR-back and
  // overlaps BC-back, the long part (core/memory_plan.cpp counts it so), unless dc_at_sbr_back
  // (memory to spare).
  const bool dc_early = !use_dc || opt.dc_at_sbr_back;
  if (dc_early) start_dc();

  // 4b SBR-back (or, overlapped, what is left of it after bulge chasing), then BC-back.
  t = MPI_Wtime();
  finish_stage(engine, "sbr_back", [&] {
    if (sbr_be) {
      sbr_be->synchronize();
    } else {
      start_sbr_back(be, /*release_panels=*/true);
      be.synchronize();
    }
  });
  blocks.clear();
  panels.panels.clear();
  sbr_be.reset();
  st.sbr_back = MPI_Wtime() - t;
  timeline_add(opt.timeline, "sbr_back", t, t + st.sbr_back);
  if (!dc_early) start_dc();
  t = MPI_Wtime();
  finish_stage(engine, "bc_back", [&] {
    if (h > 0) be.bc_back(u, h, xt(), ldx);
    be.release_reflectors();  // U's device copy (n^2 / 2) makes room for Q_d and Z
    be.synchronize();
  });
  st.bc_back = MPI_Wtime() - t;
  timeline_add(opt.timeline, "bc_back", t, t + st.bc_back);
  // dc_wait: from here (rank 0 joins the D&C, the others wait in the broadcasts) to INFO's arrival.
  const double wait_begin = MPI_Wtime();
  dc.join();
  if (opt.timeline && rank == 0) opt.timeline->add("dc", dc_begin, dc_end, "dc");
  // A throw in stage 3 (e.g. out of device memory) stops every rank, not rank 0 alone, as its
  // type on every rank (an out-of-memory stays one: auto may forward, an explicit engine says so).
  agree_on_failure(engine, dc_error ? failure_of(dc_error) : Failure{});

  // 5 Z(rows, :) = Q_sb(rows, :) Q_d with Q_d (or Q_pre and M: core/final_product) and the
  // eigenvalues from rank 0, which says with INFO whether it folded. With a timeline its parts are
  // timed apart (a synchronisation after each, only then): the wait for rank 0, the broadcasts,
  // the GEMMs with Z's copy to the host.
  int said[2] = {info, rank0.dc.folded ? 1 : 0};
  MPI_Bcast(said, 2, MPI_INT, 0, engine);
  info = said[0];
  st.dc_folded = said[1] != 0;
  t = MPI_Wtime();
  st.dc_wait = t - wait_begin;
  timeline_add(opt.timeline, "dc_wait", wait_begin, t);
  if (info == 0) {
    MPI_Bcast(d.data(), static_cast<int>(n), MPI_DOUBLE, 0, engine);
    std::copy(d.begin(), d.begin() + n, w);
  }
  StageParts parts(be, opt.timeline, t);
  final_product(be, engine, info == 0, st.dc_folded,
                FinalProductRank{n, words * h, words * ldx, &x, as_words(z_rows)}, rank0, parts);
  st.gemm = MPI_Wtime() - wait_begin;  // the wait for the D&C included (dc_wait)
  st.total = MPI_Wtime() - t_start;
  if (stats) *stats = st;
  return info;
}

}  // namespace

int run_engine(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout, const double* a_cols,
               double* w, double* z_rows, const EngineOptions& opt, EngineStats* stats) {
  return run_two_stage(be, engine, layout, a_cols, w, z_rows, opt, stats);
}

int run_engine(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
               const Complex* a_cols, double* w, Complex* z_rows, const EngineOptions& opt,
               EngineStats* stats) {
  return run_two_stage(be, engine, layout, a_cols, w, z_rows, opt, stats);
}

}  // namespace pipevd
