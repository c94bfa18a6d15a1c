#include "core/dbbr.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace pipevd {

long effective_bandwidth(long n, long b) { return std::max(1L, std::min(b, n - 1)); }

namespace {

// A part of the work timed by the optional profiler (begin on construction, end on destruction).
class Timed {
 public:
  Timed(DbbrProfiler* p, DbbrPart part) : p_(p), part_(part) {
    if (p_) p_->begin(part_);
  }
  ~Timed() {
    if (p_) p_->end(part_);
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  DbbrProfiler* p_;
  DbbrPart part_;
};

// One rank's share of the band reduction. All ranks walk the same sequence of outer blocks and
// panels (a pure function of the layout), so collectives match without extra coordination.
class BandReduction {
 public:
  BandReduction(EngineBackend& be, const EngineLayout& layout, int rank, double* a,
                const DbbrOptions& opt)
      : be_(be),
        L_(layout),
        me_(rank),
        a_(a),
        n_(layout.n),
        b_(effective_bandwidth(layout.n, opt.b)),
        keep_(opt.keep_reflectors),
        panel_syr2k_(opt.panel_syr2k),
        prof_(opt.profiler) {
    k_ = std::max(b_, (std::max(opt.k, b_) + b_ - 1) / b_ * b_);
    out_.n = n_;
    out_.b = b_;
  }

  ReflectorPanels run() {
    const int ranks = L_.engine_ranks();
    for (int p = 0; p < ranks; ++p) {
      for (long i = L_.col_begin[p]; i < L_.col_begin[p + 1]; i += k_) {
        if (!has_panel(i)) return std::move(out_);  // no reflector left anywhere to the right
        outer_block(p, i, std::min(i + k_, L_.col_begin[p + 1]));
      }
    }
    return std::move(out_);
  }

 private:
  // A panel at column j has rows j+b..n-1 below the band; one row or none needs no reflector.
  bool has_panel(long j) const { return n_ - j - b_ >= 2; }
  long my_begin() const { return L_.col_begin[me_]; }
  long my_end() const { return L_.col_begin[me_ + 1]; }
  // Device address of A(row, col) for a column this rank holds.
  double* at(long row, long col) const { return a_ + row + (col - my_begin()) * n_; }
  double* yb(long row, long bcol) const { return yb_.get() + row + bcol * n_; }
  double* zb(long row, long bcol) const { return zb_.get() + row + bcol * n_; }

  void outer_block(int owner, long i, long e) {
    owner_ = owner;
    i_ = i;
    e_ = e;
    const long groups = (e - i + b_ - 1) / b_;
    kb_ = groups * b_;
    {
      Timed t(prof_, DbbrPart::Copies);
      // The accumulated Y, Z of the block, full height, zeros on top.
      yb_ = DeviceBuffer(be_, n_ * kb_);
      zb_ = DeviceBuffer(be_, n_ * kb_);
    }
    if (me_ == owner_ && e_ - i_ > b_) {
      Timed t(prof_, DbbrPart::Copies);
      // The block's columns right of its first panel as they were when the block began: the
      // panel updates overwrite them in place, while A W of later panels must use the matrix
      // before this block's updates (its updates enter through Z, Y).
      old_ld_ = n_ - i_ - b_;
      old_ = DeviceBuffer(be_, old_ld_ * (e_ - i_ - b_), DeviceBuffer::Unfilled{});
      be_.copy_matrix(old_ld_, e_ - i_ - b_, at(i_ + b_, i_ + b_), n_, old_.get(), old_ld_);
    }
    panels(0, groups);
    {
      Timed t(prof_, DbbrPart::TrailingUpdate);
      trailing_update();
    }
    old_.reset();
  }

  // Panels [s, t) of the block (in units of b columns): left half, update of the right half's
  // columns with the left half's Z, Y (one GEMM pair of inner dimension (mid-s)*b), right half.
  void panels(long s, long t) {
    if (t - s == 1) {
      panel(s);
      return;
    }
    const long mid = s + (t - s) / 2;
    panels(s, mid);
    if (me_ == owner_ && has_panel(i_ + s * b_)) {
      Timed time(prof_, DbbrPart::PanelUpdate);
      const long c0 = i_ + mid * b_, c1 = std::min(i_ + t * b_, e_);
      const long g0 = s * b_, inner = (mid - s) * b_;
      if (panel_syr2k_) {
        update_diagonal_block(c0, c1, g0, inner);
        update_rows(c1, n_, c0, c1, g0, inner);
      } else {
        update_rows(c0, n_, c0, c1, g0, inner);
      }
    }
    panels(mid, t);
  }

  void panel(long g) {
    const long j = i_ + g * b_;
    if (!has_panel(j)) return;
    const long r0 = j + b_, m = n_ - r0, tb = g * b_;
    DeviceBuffer w, y, z;
    {
      Timed t(prof_, DbbrPart::Copies);
      // Written in full before they are read: panel_qr writes all of W and Y (zero columns past
      // min(m, b)), A W all of Z.
      w = DeviceBuffer(be_, m * b_, DeviceBuffer::Unfilled{});
      y = DeviceBuffer(be_, m * b_, DeviceBuffer::Unfilled{});
      z = DeviceBuffer(be_, m * b_, DeviceBuffer::Unfilled{});
    }
    if (me_ == owner_) {
      Timed t(prof_, DbbrPart::PanelQr);
      be_.panel_qr(m, b_, at(r0, j), n_, w.get(), m, y.get(), m);
    }
    {
      Timed t(prof_, DbbrPart::Broadcast);
      be_.broadcast(w.get(), m * b_, owner_);
      be_.broadcast(y.get(), m * b_, owner_);
    }
    {
      Timed t(prof_, DbbrPart::Copies);
      be_.copy_matrix(m, b_, y.get(), m, yb(r0, tb), n_);
    }

    // Rows [r0, n) of A W: rank q forms rows [max(r0, c_q), c_{q+1}) from its own columns.
    const long lo = std::max(r0, my_begin()), hi = my_end();
    std::optional<Timed> aw(std::in_place, prof_, DbbrPart::AW);
    if (me_ == owner_) {
      if (lo == r0 && hi == n_) {
        // The owner holds the whole trailing matrix (one rank): the symmetric product, which may
        // read one triangle only.
        const long split = std::max(0L, e_ - r0);
        be_.symmetric_product(m, b_, split,
                              split > 0 ? old_.get() + (r0 - i_ - b_) * (1 + old_ld_) : nullptr,
                              old_ld_, at(r0, r0 + split), n_, w.get(), m, z.get(), m);
      } else {
        owner_product(m, r0, lo, hi, w.get(), z.get());
      }
      aw.reset();
      Timed t(prof_, DbbrPart::FormZ);
      form_z(m, r0, tb, w.get(), y.get(), z.get());
    } else if (hi > lo) {
      DeviceBuffer part(be_, (hi - lo) * b_);
      be_.gemm('T', 'N', hi - lo, b_, m, 1.0, at(r0, lo), n_, w.get(), m, 0.0, part.get(), hi - lo);
      be_.send(part.get(), (hi - lo) * b_, owner_, 0);
    }
    aw.reset();
    {
      Timed t(prof_, DbbrPart::Broadcast);
      be_.broadcast(z.get(), m * b_, owner_);
    }
    {
      Timed t(prof_, DbbrPart::Copies);
      be_.copy_matrix(m, b_, z.get(), m, zb(r0, tb), n_);
    }
    if (keep_) out_.panels.push_back(ReflectorPanel{r0, m, b_, std::move(w), std::move(y)});
  }

  // Rows [r0, n) of A W on the owner, with other ranks holding columns: its own rows first, block
  // columns from the saved copy, columns right of the block from A. Issued before the receives, so
  // that on a device stream (where a receive waits in order) the owner's product runs while the
  // other ranks compute theirs; then the other ranks' rows (disjoint from the own ones).
  void owner_product(long m, long r0, long lo, long hi, const double* w, double* z) {
    const long mid = std::min(hi, e_);
    if (mid > lo)
      be_.gemm('T', 'N', mid - lo, b_, m, 1.0,
               old_.get() + (r0 - i_ - b_) + (lo - i_ - b_) * old_ld_, old_ld_, w, m, 0.0,
               z + (lo - r0), m);
    const long lo2 = std::max(lo, e_);
    if (hi > lo2)
      be_.gemm('T', 'N', hi - lo2, b_, m, 1.0, at(r0, lo2), n_, w, m, 0.0, z + (lo2 - r0), m);
    for (int q = owner_ + 1; q < L_.engine_ranks(); ++q) {
      const long qlo = std::max(r0, L_.col_begin[q]), qhi = L_.col_begin[q + 1];
      if (qhi <= qlo) continue;
      DeviceBuffer part(be_, (qhi - qlo) * b_);
      be_.recv(part.get(), (qhi - qlo) * b_, q, 0);
      be_.copy_matrix(qhi - qlo, b_, part.get(), qhi - qlo, z + (qlo - r0), m);
    }
  }

  // Z = A_cur W - 1/2 Y (W^T A_cur W), with A_cur = A_old - Zb Yb^T - Yb Zb^T the matrix after
  // the block's earlier panels; on entry z holds A_old W (rows [r0, n)).
  void form_z(long m, long r0, long tb, const double* w, const double* y, double* z) {
    if (tb > 0) {
      DeviceBuffer s(be_, tb * b_);
      be_.gemm('T', 'N', tb, b_, m, 1.0, yb(r0, 0), n_, w, m, 0.0, s.get(), tb);
      be_.gemm('N', 'N', m, b_, tb, -1.0, zb(r0, 0), n_, s.get(), tb, 1.0, z, m);
      be_.gemm('T', 'N', tb, b_, m, 1.0, zb(r0, 0), n_, w, m, 0.0, s.get(), tb);
      be_.gemm('N', 'N', m, b_, tb, -1.0, yb(r0, 0), n_, s.get(), tb, 1.0, z, m);
    }
    DeviceBuffer wtaw(be_, b_ * b_);
    be_.gemm('T', 'N', b_, b_, m, 1.0, w, m, z, m, 0.0, wtaw.get(), b_);
    be_.gemm('N', 'N', m, b_, b_, -0.5, y, m, wtaw.get(), b_, 1.0, z, m);
  }

  // A(e:n, own columns >= e) -= Z Y^T + Y Z^T with the block's accumulated Z, Y. The own columns
  // [c0, c1) cross the trailing matrix's rows as: rows [e, c0) above the rank's diagonal block
  // (only where its columns start right of e), the diagonal block [c0, c1)^2 itself, symmetric,
  // so syr2k (one triangle, mirrored), and rows [c1, n) below it. One rank: the whole trailing
  // matrix is the diagonal block.
  void trailing_update() {
    const long c0 = std::max(e_, my_begin()), c1 = my_end();
    if (c1 <= c0 || e_ >= n_) return;
    update_rows(e_, c0, c0, c1, 0, kb_);
    update_diagonal_block(c0, c1, 0, kb_);
    update_rows(c1, n_, c0, c1, 0, kb_);
  }

  // A(r0:r1, c0:c1) -= Zb Yb^T + Yb Zb^T over the block columns [g0, g0 + inner) of Zb, Yb.
  void update_rows(long r0, long r1, long c0, long c1, long g0, long inner) {
    if (r1 <= r0 || c1 <= c0 || inner <= 0) return;
    be_.gemm('N', 'T', r1 - r0, c1 - c0, inner, -1.0, zb(r0, g0), n_, yb(c0, g0), n_, 1.0,
             at(r0, c0), n_);
    be_.gemm('N', 'T', r1 - r0, c1 - c0, inner, -1.0, yb(r0, g0), n_, zb(c0, g0), n_, 1.0,
             at(r0, c0), n_);
  }

  // The same on the diagonal block A(c0:c1, c0:c1), both triangles kept.
  void update_diagonal_block(long c0, long c1, long g0, long inner) {
    if (c1 <= c0 || inner <= 0) return;
    be_.syr2k_full(c1 - c0, inner, -1.0, zb(c0, g0), n_, yb(c0, g0), n_, at(c0, c0), n_);
  }

  EngineBackend& be_;
  const EngineLayout& L_;
  int me_;
  double* a_;
  long n_, b_, k_ = 0;
  bool keep_, panel_syr2k_;
  DbbrProfiler* prof_;
  ReflectorPanels out_;
  // The outer block in progress.
  int owner_ = 0;
  long i_ = 0, e_ = 0, kb_ = 0, old_ld_ = 1;
  DeviceBuffer yb_, zb_, old_;
};

void check_layout(const EngineLayout& L, long b) {
  const int E = L.engine_ranks();
  if (E < 1 || static_cast<int>(L.row_begin.size()) != E + 1 || L.col_begin[0] != 0 ||
      L.col_begin[E] != L.n || L.row_begin[0] != 0 || L.row_begin[E] != L.n)
    throw std::invalid_argument("engine layout: col_begin/row_begin must run from 0 to n");
  for (int e = 0; e < E; ++e) {
    if (L.width(e) < 0 || L.height(e) < 0)
      throw std::invalid_argument("engine layout: decreasing col_begin or row_begin");
    if (L.col_begin[e] % b != 0 && L.col_begin[e] != L.n)
      throw std::invalid_argument("engine layout: col_begin[" + std::to_string(e) +
                                  "] = " + std::to_string(L.col_begin[e]) +
                                  " is not a multiple of b = " + std::to_string(b));
  }
}

}  // namespace

ReflectorPanels reduce_to_band(EngineBackend& be, const EngineLayout& layout, int rank, double* a,
                               const DbbrOptions& opt) {
  check_layout(layout, effective_bandwidth(layout.n, opt.b));
  return BandReduction(be, layout, rank, a, opt).run();
}

DeviceBuffer gather_band(EngineBackend& be, const EngineLayout& L, int rank, const double* a,
                         long b) {
  const long n = L.n, ldab = b + 1;
  DeviceBuffer ab(be, n * ldab);
  const long c0 = L.col_begin[rank], c1 = L.col_begin[rank + 1];
  // Column c's band rows c..c+b lie along the diagonal: stride n + 1 walks A(c, c), A(c+1, c+1)...
  const long full = std::min(c1, std::max(c0, n - b));  // columns whose b+1 band rows all exist
  if (full > c0) be.copy_matrix(b + 1, full - c0, a + c0, n + 1, ab.get() + c0 * ldab, ldab);
  for (long c = full; c < c1; ++c)
    be.copy_matrix(n - c, 1, a + c + (c - c0) * n, n, ab.get() + c * ldab, ldab);
  for (int q = 0; q < L.engine_ranks(); ++q)
    if (L.width(q) > 0) be.broadcast(ab.get() + L.col_begin[q] * ldab, L.width(q) * ldab, q);
  return ab;
}

}  // namespace pipevd
