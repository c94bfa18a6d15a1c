#include "core/engine.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <vector>

#include "base/joining_thread.hpp"
#include "base/page_array.hpp"
#include "core/column_exchange.hpp"
#include "core/dbbr.hpp"
#include "core/failure_agreement.hpp"
#include "core/fault_injection.hpp"
#include "core/final_product.hpp"
#include "core/reflector_store.hpp"
#include "core/sbr_back.hpp"
#include "core/threaded_step.hpp"
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

bool sbr_back_x_before_dbbr(const EngineOptions& opt, const EngineLayout& layout) {
  return opt.want_vectors && opt.sbr_back_beside_dbbr && layout.engine_ranks() > 1;
}

bool sbr_back_beside_dbbr_applies(const EngineOptions& opt, const EngineLayout& layout, int rank) {
  return sbr_back_x_before_dbbr(opt, layout) &&
         !forms_q_s_from_left(opt.sbr_back_order, layout.height(rank), layout.n);
}

namespace {

// One call of the engine over the scalar T: double, or std::complex<double> for a Hermitian
// matrix, whose band chases to a real tridiagonal (core/reflector_store.hpp), so stages 3 and 5's
// right factors are real in both cases. The state the stages share lives here, one member
// function per stage, so that run_two_stage reads as the order of the stages.
//
// Each stage ends where every engine rank agrees on a failure of any (core/failure_agreement):
// the stage's local work (all of it where the stage sends no message) and its synchronisation,
// where an asynchronous device error surfaces. Inside a stage that sends messages, the buffers
// they need are agreed on before them (agree_on_allocation here; DBBR per outer block, where a
// rank's own work between its panels' messages holds a failure to the next block), so that no
// rank leaves the others waiting in a message. Every rank calls the stages in the same order, so
// the collectives inside them match.
template <class T>
class TwoStageCall {
 public:
  TwoStageCall(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout,
               const EngineOptions& opt)
      : be_(be), engine_(engine), layout_(layout), opt_(opt), t_start_(MPI_Wtime()) {
    // Binding makes the NCCL communicator (or finds the one made beside the redistribution),
    // which may fail on some ranks only: agreed before the first stage's collectives.
    agree_on_allocation(engine, "bind", [&] { be.bind(engine); });
    st_.bind = MPI_Wtime() - t_start_;
    timeline_add(opt.timeline, "engine_bind", t_start_, t_start_ + st_.bind);
    MPI_Comm_rank(engine, &rank_);
    n_ = layout.n;
    b_ = effective_bandwidth(n_, opt.b);
    solver_ = resolve_tridiagonal_solver(opt.tridiagonal, be.host_memory(), n_);
    h_ = layout.height(rank_);
    r0_ = layout.row_begin[rank_];
    ldx_ = std::max(1L, h_);
    // dstedc's workspace (1 + 4n + n^2) must fit LAPACK's 32-bit integers; refuse before any
    // collective so every rank stops at the same point.
    if (opt.want_vectors && solver_ == TridiagonalSolver::Dstedc && n_ > kDstedcMaxN)
      throw std::length_error("engine: n > 46340 exceeds dstedc's 32-bit workspace (use dc)");
    if (opt.symmetrize && layout.engine_ranks() != 1)
      throw std::invalid_argument("engine: symmetrize needs a single engine rank");
  }

  // 1 DBBR on the device copy of this rank's columns, then the band on every rank.
  void band_reduction(const T* a_cols) {
    const double t = MPI_Wtime();
    {
      DbbrOptions dbbr{b_, opt_.k, opt_.want_vectors};
      dbbr.profiler = opt_.dbbr_profiler;
      dbbr.z_on_every_rank = opt_.dbbr_z_on_every_rank;
      dbbr.cyclic_blocks = opt_.dbbr_cyclic_blocks;
      const BasicDeviceBuffer<T> a = upload(a_cols, dbbr);
      reduce(a.get(), dbbr);
      band_ = gather_band(be_, layout_, rank_, a.get(), dbbr);
    }
    finish_stage(engine_, "dbbr", [&] { be_.synchronize(); });
    st_.dbbr = MPI_Wtime() - t;
    timeline_add(opt_.timeline, "dbbr", t, t + st_.dbbr);
  }

  // This rank's columns on the device in DBBR's distribution: the layout's, uploaded, or where DBBR
  // deals them out otherwise, moved there between the ranks right after the upload (the uploaded
  // copy goes once they have left). Every rank's buffers are there before the first message, or
  // every rank throws.
  BasicDeviceBuffer<T> upload(const T* a_cols, const DbbrOptions& dbbr) {
    const DbbrColumns from = DbbrColumns::blockwise(layout_), to = dbbr_columns(layout_, dbbr);
    BasicDeviceBuffer<T> a, moved;
    const long size = n_ * layout_.width(rank_);
    agree_on_allocation(engine_, "upload", [&] {
      a = BasicDeviceBuffer<T>(be_, size);
      be_.copy_to_device(a_cols, a.get(), size);
      if (opt_.symmetrize) be_.mirror_triangle(opt_.symmetrize, n_, a.get(), n_);
      if (to != from) moved = BasicDeviceBuffer<T>(be_, n_ * to.width(rank_), UnfilledBuffer{});
    });
    if (to == from) return a;
    exchange_columns(be_, from, to, rank_, a.get(), moved.get(), opt_.dbbr_profiler);
    return moved;
  }

  // 4a' With sbr_back_beside_dbbr (several engine ranks): X allocated and filled before DBBR, and
  // the companion that applies SBR-back's blocks as DBBR makes their panels (on a rank that
  // multiplies from the right) or, after DBBR, beside bulge chasing.
  void prepare_sbr_back_beside_dbbr() {
    if (!sbr_back_x_before_dbbr(opt_, layout_)) return;
    agree_on_allocation(engine_, "x_allocation", [&] {
      allocate_x();
      sbr_be_ = be_.companion(/*urgent=*/false);
      if (sbr_back_beside_dbbr_applies(opt_, layout_, rank_))
        beside_dbbr_ = std::make_unique<SbrBackBesideDbbr<T>>(*sbr_be_, opt_.k, h_, xt(), ldx_);
    });
  }

  // 4a This rank's rows of Q_sb = Q_s Q_b start as the identity's row block (on a rank with every
  // row SBR-back's left order relies on it: it updates only each block's trailing square); with
  // overlap_sbr_back, SBR-back is queued now on a companion's stream, ordered after X's fill and
  // DBBR's panels on `be` without a host wait, and runs next to bulge chasing; beside DBBR, only
  // the blocks DBBR's last outer block completed are left to queue. The queueing runs in a thread
  // (queue_sbr_back), joined and agreed on in finish_sbr_back. The panels and merged blocks then
  // live until the companion is synchronised; without the overlap each panel goes as soon as it is
  // merged.
  void start_sbr_back() {
    if (!opt_.want_vectors) return;
    const double t = MPI_Wtime();
    const bool x_early = sbr_back_x_before_dbbr(opt_, layout_);
    const bool queued = opt_.overlap_sbr_back || x_early;
    agree_on_allocation(engine_, x_early ? "sbr_back_start" : "x_allocation", [&] {
      if (!x_early) allocate_x();
      if (!queued) return;
      if (!sbr_be_) sbr_be_ = be_.companion(/*urgent=*/false);
      sbr_be_->wait_for(be_);
    });
    if (queued) sbr_back_queue_.start("sbr_back_queue", rank_, [this] { queue_sbr_back(); });
    // Its own interval: X's allocation and the companion's order after DBBR lie between DBBR and
    // bulge chasing on every rank.
    timeline_add(opt_.timeline, "sbr_back_start", t, MPI_Wtime());
  }

  // 2 Bulge chasing, replicated on every rank (each needs all of U for its rows of BC-back).
  void bulge_chasing() {
    const double t = MPI_Wtime();
    finish_stage(engine_, "bulge_chasing", [&] {
      d_.resize(std::max(1L, n_));
      e_.resize(std::max(1L, n_));
      if (opt_.want_vectors)
        be_.bulge_chase(n_, b_, band_.get(), b_ + 1, d_.data(), e_.data(), u_,
                        /*host_copy=*/false, /*beside_companion=*/sbr_be_ != nullptr);
      else
        be_.bulge_chase_values(n_, b_, band_.get(), b_ + 1, d_.data(), e_.data());
      band_.reset();
    });
    st_.bulge_chasing = MPI_Wtime() - t;
    timeline_add(opt_.timeline, "bulge_chasing", t, t + st_.bulge_chasing);
  }

  // Without eigenvectors the call ends here: T's eigenvalues on rank 0, broadcast with INFO.
  int eigenvalues_only(double* w) {
    const double t = MPI_Wtime();
    finish_stage(engine_, "eigenvalues", [&] {
      if (rank_ == 0) info_ = be_.tridiagonal_eigenvalues(n_, d_.data(), e_.data(), w);
    });
    MPI_Bcast(&info_, 1, MPI_INT, 0, engine_);
    MPI_Bcast(w, static_cast<int>(n_), MPI_DOUBLE, 0, engine_);
    st_.dc = MPI_Wtime() - t;
    if (rank_ == 0) timeline_add(opt_.timeline, "dc", t, t + st_.dc);
    return info_;
  }

  // dstedc (host memory) starts at once; dc's device buffers (Q_d or M, and a work copy or Q_pre:
  // 2 n^2) would meet SBR-back's merged W, Y on the device, so it starts after SBR-back and
  // overlaps BC-back, the long part (core/memory_plan.cpp counts it so), unless dc_at_sbr_back
  // (memory to spare).
  bool dc_starts_early() const { return !uses_dc() || opt_.dc_at_sbr_back; }

  // 3 D&C on rank 0 in a thread, concurrent with 4. dc issues its GEMMs through a companion
  // backend (its own stream and handle: the main thread keeps using `be`), and its result stays
  // there: Q_d, or with dc_fold Q_pre and M (stage 5 multiplies by them on every rank).
  // A failure to start (the companion, the thread) is the D&C's own, agreed after the join.
  void start_dc() {
    if (rank_ != 0) return;
    try {
      if (uses_dc()) dc_be_ = be_.companion(/*urgent=*/true);
      if (opt_.dc_in_thread)
        dc_ = JoiningThread([this] { solve_tridiagonal(); });
      else
        solve_tridiagonal();
    } catch (...) {
      dc_error_ = std::current_exception();
    }
  }

  // 4b SBR-back (or, overlapped, what is left of it after bulge chasing).
  void finish_sbr_back() {
    const double t = MPI_Wtime();
    join_sbr_back_queue();
    finish_stage(engine_, "sbr_back", [&] {
      if (sbr_be_) {
        sbr_be_->synchronize();
      } else {
        apply_sbr_back_on(be_, /*release_panels=*/true);
        be_.synchronize();
      }
    });
    blocks_.clear();
    beside_dbbr_.reset();
    panels_.panels.clear();
    sbr_be_.reset();
    st_.sbr_back = MPI_Wtime() - t;
    timeline_add(opt_.timeline, "sbr_back", t, t + st_.sbr_back);
  }

  // 4c BC-back on this rank's rows of Q_sb.
  void bc_back() {
    const double t = MPI_Wtime();
    finish_stage(engine_, "bc_back", [&] {
      if (h_ > 0) be_.bc_back(u_, h_, xt(), ldx_);
      be_.release_reflectors();  // U's device copy (n^2 / 2) makes room for Q_d and Z
      be_.synchronize();
    });
    st_.bc_back = MPI_Wtime() - t;
    timeline_add(opt_.timeline, "bc_back", t, t + st_.bc_back);
  }

  // dc_wait: from here (rank 0 joins the D&C, the others wait in the broadcasts) to INFO's arrival.
  void join_dc() {
    wait_begin_ = MPI_Wtime();
    dc_.join();
    if (opt_.timeline && rank_ == 0) opt_.timeline->add("dc", dc_begin_, dc_end_, "dc");
    // A throw in stage 3 (e.g. out of device memory) stops every rank, not rank 0 alone, as its
    // type on every rank (an out-of-memory stays one: auto may forward, an explicit engine says
    // so).
    agree_on_failure(engine_, dc_error_ ? failure_of(dc_error_) : Failure{});
  }

  // 5 Z(rows, :) = Q_sb(rows, :) Q_d with Q_d (or Q_pre and M: core/final_product) and the
  // eigenvalues from rank 0, which says with INFO whether it folded. With a timeline its parts are
  // timed apart (a synchronisation after each, only then): the wait for rank 0, the broadcasts,
  // the GEMMs with Z's copy to the host.
  int eigenvectors(double* w, T* z_rows) {
    int said[2] = {info_, rank0_.dc.folded ? 1 : 0};
    MPI_Bcast(said, 2, MPI_INT, 0, engine_);
    info_ = said[0];
    st_.dc_folded = said[1] != 0;
    const double t = MPI_Wtime();
    st_.dc_wait = t - wait_begin_;
    timeline_add(opt_.timeline, "dc_wait", wait_begin_, t);
    if (info_ == 0) {
      MPI_Bcast(d_.data(), static_cast<int>(n_), MPI_DOUBLE, 0, engine_);
      std::copy(d_.begin(), d_.begin() + n_, w);
    }
    StageParts parts(be_, opt_.timeline, t);
    final_product(be_, engine_, info_ == 0, st_.dc_folded,
                  FinalProductRank{n_, kWords * h_, kWords * ldx_, &x_, as_words(z_rows)}, rank0_,
                  parts);
    st_.gemm = MPI_Wtime() - wait_begin_;  // the wait for the D&C included (dc_wait)
    return info_;
  }

  // The call's stage times, its total up to now.
  EngineStats stats() {
    st_.total = MPI_Wtime() - t_start_;
    return st_;
  }

 private:
  static constexpr long kWords = Scalar<T>::words;

  bool uses_dc() const { return solver_ == TridiagonalSolver::Dc; }
  T* xt() { return reinterpret_cast<T*>(x_.get()); }

  // X is held as doubles: stage 5 multiplies it by the real Q_d, which for complex X is the real
  // product of its doubles (2h rows) with Q_d.
  void allocate_x() {
    x_ = DeviceBuffer(be_, kWords * ldx_ * n_);
    be_.fill_matrix(h_, n_, T(0), T(0), xt(), ldx_);
    be_.fill_matrix(h_, h_, T(0), T(1), xt() + r0_ * ldx_, ldx_);
  }

  // DBBR, with SBR-back beside it where beside_dbbr_ is set. A failure inside DBBR frees its
  // panels in `be`'s order while the companion may still read them: the companion is waited for
  // before anything allocates again, and DBBR's failure is the one that goes on.
  void reduce(T* a, const DbbrOptions& dbbr) {
    try {
      panels_ = reduce_to_band(be_, layout_, rank_, a, dbbr, panels_ready());
    } catch (...) {
      settle_companion();
      throw;
    }
  }

  // The companion's queued work done, a failure of its own dropped: another is on its way.
  void settle_companion() noexcept {
    if (!sbr_be_) return;
    try {
      sbr_be_->synchronize();
    } catch (...) {
    }
  }

  // DBBR's hook beside it: the companion waits for the block's panels (and X's filling before
  // them) in `be`'s order, then queues the merged blocks they complete.
  PanelsReady<T> panels_ready() {
    if (!beside_dbbr_) return {};
    return [this](BasicReflectorPanels<T>& q, long /*first*/, long last) {
      sbr_be_->wait_for(be_);
      beside_dbbr_->panels_final(q, last);
    };
  }

  // SBR-back's merges and GEMMs queued on the companion, in sbr_back_queue_'s thread: they are
  // thousands of launches (beside DBBR, behind those still queued from its outer blocks), and a
  // launch into a stream whose queue is full waits on the host until the device drains it, which
  // would hold bulge chasing's start as long. Nothing else touches the companion, the panels, X
  // or the merged blocks until finish_sbr_back has joined it. No MPI here.
  void queue_sbr_back() {
    if (beside_dbbr_)
      beside_dbbr_->finish(panels_);
    else
      apply_sbr_back_on(*sbr_be_, /*release_panels=*/false);
  }

  // The queueing's thread joined and its failure on any rank agreed, on every rank (where none
  // queued too: the ranks' plans may differ); its interval on a timeline row of its own.
  void join_sbr_back_queue() {
    sbr_back_queue_.agree(engine_);
    if (opt_.timeline && sbr_back_queue_.ran())
      opt_.timeline->add("sbr_back_queue", sbr_back_queue_.begin(), sbr_back_queue_.end(),
                         "sbr_back");
  }

  void apply_sbr_back_on(EngineBackend& sb, bool release_panels) {
    blocks_ = merge_reflector_panels(sb, panels_, opt_.k, release_panels);
    if (release_panels) panels_.panels.clear();
    apply_sbr_back(sb, blocks_, h_, xt(), ldx_, opt_.sbr_back_order);
  }

  // Stage 3's work, in the D&C's thread or inline. No MPI in here: the caller may have
  // MPI_THREAD_SINGLE.
  void solve_tridiagonal() {
    const auto t0 = dc_begin_ = std::chrono::steady_clock::now();
    try {
      inject_fault("dc", rank_);
      if (uses_dc() && opt_.dc_fold) {
        info_ = tridiagonal_dc_fold(*dc_be_, n_, d_.data(), e_.data(), rank0_.dc, opt_.dc);
      } else if (uses_dc()) {
        rank0_.dc.m = DeviceBuffer(*dc_be_, n_ * n_);
        info_ = tridiagonal_dc(*dc_be_, n_, d_.data(), e_.data(), rank0_.dc.m.get(), n_, opt_.dc);
      } else {
        rank0_.q_host = PageArray<double>(static_cast<std::size_t>(n_) * n_);
        info_ = tridiagonal_eigenpairs(n_, d_.data(), e_.data(), rank0_.q_host.data());
      }
      if (dc_be_) dc_be_->synchronize();
    } catch (...) {  // agreed over the engine ranks by the main thread after the join
      dc_error_ = std::current_exception();
    }
    dc_end_ = std::chrono::steady_clock::now();
    st_.dc = std::chrono::duration<double>(dc_end_ - t0).count();
  }

  EngineBackend& be_;
  MPI_Comm engine_;
  const EngineLayout& layout_;
  const EngineOptions& opt_;
  EngineStats st_;
  double t_start_;
  int rank_ = 0;
  long n_ = 0, b_ = 0, h_ = 0, r0_ = 0, ldx_ = 1;
  TridiagonalSolver solver_ = TridiagonalSolver::Auto;

  BasicDeviceBuffer<T> band_;
  BasicReflectorPanels<T> panels_;
  DeviceBuffer x_;
  std::unique_ptr<EngineBackend> sbr_be_;
  std::vector<BasicMergedReflectorBlock<T>> blocks_;   // after sbr_be_: freed through it
  std::unique_ptr<SbrBackBesideDbbr<T>> beside_dbbr_;  // after sbr_be_: its blocks go through it
  // After all it uses: a throw in the main thread while it queues joins it before any of those go.
  ThreadedStep sbr_back_queue_;
  std::vector<double> d_, e_;
  BasicReflectorStore<T> u_;
  int info_ = 0;
  std::unique_ptr<EngineBackend> dc_be_;
  TridiagonalResult rank0_;  // after dc_be_: its buffers go through it
  std::exception_ptr dc_error_;
  std::chrono::steady_clock::time_point dc_begin_, dc_end_;  // for the timeline
  double wait_begin_ = 0;
  // Declared after all the D&C thread uses: a throw in the main thread while it runs (e.g. out of
  // device memory in SBR-back, next to the D&C's buffers) joins it before any of those go.
  JoiningThread dc_;
};

template <class T>
int run_two_stage(EngineBackend& be, MPI_Comm engine, const EngineLayout& layout, const T* a_cols,
                  double* w, T* z_rows, const EngineOptions& opt, EngineStats* stats) {
  TwoStageCall<T> call(be, engine, layout, opt);
  call.prepare_sbr_back_beside_dbbr();
  call.band_reduction(a_cols);
  if (opt.after_dbbr) opt.after_dbbr();
  call.start_sbr_back();
  call.bulge_chasing();
  int info = 0;
  if (!opt.want_vectors) {
    info = call.eigenvalues_only(w);
  } else {
    const bool dc_early = call.dc_starts_early();
    if (dc_early) call.start_dc();
    call.finish_sbr_back();
    if (!dc_early) call.start_dc();
    call.bc_back();
    call.join_dc();
    info = call.eigenvectors(w, z_rows);
  }
  if (stats) *stats = call.stats();
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
