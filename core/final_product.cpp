#include "core/final_product.hpp"

#include "core/block_diagonal.hpp"
#include "core/failure_agreement.hpp"

namespace pipevd {

void StageParts::done(const char* name) {
  if (!timeline_) return;
  be_.synchronize();
  const double now = MPI_Wtime();
  timeline_->add(name, start_, now);
  start_ = now;
}

namespace {

// Q_d whole, from rank 0's host (dstedc) or backend memory (dc), broadcast; then Z = X Q_d.
void whole_product(EngineBackend& be, MPI_Comm engine, bool multiply, const FinalProductRank& me,
                   TridiagonalResult& r, StageParts& parts) {
  const long n = me.n;
  DeviceBuffer q;
  double* qp = r.dc.m.get();  // dc on rank 0: already in this device's memory
  if (multiply) {
    // Every rank holds Q_d's copy before its broadcast, or every rank throws.
    agree_on_allocation(engine, "qd_allocation", [&] {
      if (qp) return;
      q = DeviceBuffer(be, n * n);
      qp = q.get();
      if (!r.q_host.empty()) be.copy_to_device(r.q_host.data(), qp, n * n);
    });
    r.q_host.reset();
    be.broadcast(qp, n * n, 0);
    parts.done("qd_broadcast");
  }
  finish_stage(engine, "gemm", [&] {
    // The GEMM and Z's copy to the host, overlapped panel by panel where the backend can.
    if (multiply) {
      be.gemm_to_host(me.h, n, n, me.x->get(), me.ldx, qp, n, me.z_rows, me.ldx);
      parts.done("gemm");
    }
    be.synchronize();
  });
}

// Rank 0's orders of Q_pre's diagonal blocks on every rank.
std::vector<long> agreed_orders(MPI_Comm engine, const std::vector<long>& rank0) {
  long count = static_cast<long>(rank0.size());
  MPI_Bcast(&count, 1, MPI_LONG, 0, engine);
  std::vector<long> orders = rank0;
  orders.resize(count);
  MPI_Bcast(orders.data(), static_cast<int>(count), MPI_LONG, 0, engine);
  return orders;
}

// Q_pre's blocks broadcast, Y = X Q_pre; X and Q_pre released before M arrives; Z = Y M.
void folded_product(EngineBackend& be, MPI_Comm engine, const FinalProductRank& me,
                    TridiagonalResult& r, StageParts& parts) {
  const long n = me.n, ldx = me.ldx;
  const std::vector<long> orders = agreed_orders(engine, r.dc.orders);
  DeviceBuffer q_pre;
  double* qp = r.dc.q_pre.get();
  agree_on_allocation(engine, "qd_allocation", [&] {  // Q_pre's copy, as Q_d's above
    if (qp) return;
    q_pre = DeviceBuffer(be, packed_size(orders), DeviceBuffer::Unfilled{});
    qp = q_pre.get();
  });
  be.broadcast(qp, packed_size(orders), 0);
  parts.done("qpre_broadcast");
  DeviceBuffer y, m;
  finish_stage(engine, "pre_gemm", [&] {
    y = DeviceBuffer(be, ldx * n, DeviceBuffer::Unfilled{});
    multiply_block_diagonal(be, me.h, me.x->get(), ldx, orders, qp, y.get(), ldx);
    me.x->reset();
    q_pre.reset();
    if (!r.dc.m.get()) m = DeviceBuffer(be, n * n, DeviceBuffer::Unfilled{});
    be.synchronize();
    r.dc.q_pre.reset();  // rank 0's, the companion's memory: only once `be` is done with it
    parts.done("pre_gemm");
  });
  double* mp = r.dc.m.get() ? r.dc.m.get() : m.get();
  be.broadcast(mp, n * n, 0);
  parts.done("m_broadcast");
  finish_stage(engine, "gemm", [&] {
    be.gemm_to_host(me.h, n, n, y.get(), ldx, mp, n, me.z_rows, ldx);
    parts.done("gemm");
    be.synchronize();
  });
}

}  // namespace

void final_product(EngineBackend& be, MPI_Comm engine, bool multiply, bool folded,
                   const FinalProductRank& me, TridiagonalResult& from_rank0, StageParts& parts) {
  if (multiply && folded)
    folded_product(be, engine, me, from_rank0, parts);
  else
    whole_product(be, engine, multiply, me, from_rank0, parts);
  from_rank0.dc = DcFold{};  // `be` has synchronised: done with it
}

}  // namespace pipevd
