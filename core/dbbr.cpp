#include "core/dbbr.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/failure_agreement.hpp"
#include "core/fault_injection.hpp"

namespace pipevd {

const char* to_string(DbbrPart part) {
  static const char* const names[kDbbrParts] = {"panel_qr", "aw",     "form_z", "panel_upd",
                                                "trailing", "copies", "bcast"};
  const int i = static_cast<int>(part);
  return i >= 0 && i < kDbbrParts ? names[i] : "?";
}

long effective_bandwidth(long n, long b) { return std::max(1L, std::min(b, n - 1)); }

namespace {

// The outer block's width: k rounded up to a multiple of b (at least b).
long outer_block_width(long b, long k) { return std::max(b, (std::max(k, b) + b - 1) / b * b); }

// A panel at column j has rows j+b..n-1 below the band; one row or none needs no reflector.
bool has_panel_at(long n, long b, long j) { return n - j - b >= 2; }

// Each segment of the distribution in blocks of kb from its first column, up to the last block
// with a panel to reduce.
std::vector<OuterBlock> blocks_of(const DbbrColumns& columns, long b, long kb) {
  const long n = columns.n();
  std::vector<OuterBlock> blocks;
  for (const ColumnSegment& s : columns.segments())
    for (long i = s.begin; i < s.end; i += kb) {
      if (!has_panel_at(n, b, i)) return blocks;  // no reflector left anywhere to the right
      blocks.push_back({s.owner, i, std::min(i + kb, s.end)});
    }
  return blocks;
}

}  // namespace

DbbrColumns dbbr_columns(const EngineLayout& L, const DbbrOptions& opt) {
  if (!opt.cyclic_blocks) return DbbrColumns::blockwise(L);
  const long b = effective_bandwidth(L.n, opt.b);
  return DbbrColumns::cyclic(L.n, L.engine_ranks(), outer_block_width(b, opt.k));
}

std::vector<OuterBlock> outer_blocks(const EngineLayout& L, const DbbrOptions& opt) {
  const long b = effective_bandwidth(L.n, opt.b);
  return blocks_of(dbbr_columns(L, opt), b, outer_block_width(b, opt.k));
}

namespace {

// The buffers of the outer block in progress, allocated together before its first message and
// agreed on, so that no rank allocates between the messages of its panels: Yb, Zb (the block's
// accumulated Y, Z, full height, zeros on top), the owner's saved block columns, each panel's W and
// Y (kept for SBR-back, so separate buffers that SBR-back's merge frees one by one; eigenvalues
// only, one pair every panel reuses), and one Z (with Z formed on every rank: its rows packed by
// rank, each rank's part with its own leading dimension), one part of A W (owner scheme: sent, or
// received from each other rank in turn), S and W^T A W that every panel reuses, sized for the
// block's first panel, its tallest. With the rank's rows packed (cyclic columns, Z on every rank):
// Ybp, Zbp (Yb's, Zb's rows at the rank's rows below the block's first panel, in their order) and
// Wp (W's at the panel's), so that each product over the rank's rows is one GEMM.
template <class T>
struct BlockBuffers {
  BasicDeviceBuffer<T> yb, zb, old;
  std::vector<BasicDeviceBuffer<T>> w, y;
  BasicDeviceBuffer<T> z, part, s, wtaw;
  BasicDeviceBuffer<T> ybp, zbp, wp;
};

// One rank's share of the band reduction, over the scalar T (double or std::complex<double>: the
// Hermitian case is the symmetric one with every transpose an adjoint), on its columns of a
// DbbrColumns distribution: by symmetry its rows of A W and of the trailing update are those of
// its columns, and a rank's rows of a panel are its segments' columns below the panel, packed in
// their order. Its columns right of a panel are consecutive in its buffer, so its rows of A_old W
// are one GEMM; with several runs of rows (cyclic columns) W's, Y's, Yb's and Zb's rows there are
// packed too, blockwise (one run) they are used where they lie. All ranks walk the same sequence of
// outer blocks and panels (blocks_of), so collectives match without extra coordination. A failure
// in a rank's own work is held (DeferredFailure) while the rank goes on taking part in every
// message, and agreed at the next outer block's start, where the block's buffers are, or at the
// end.
template <class T>
class BandReduction {
  using Buffer = BasicDeviceBuffer<T>;
  static constexpr char kAdjoint = Scalar<T>::adjoint;

 public:
  BandReduction(EngineBackend& be, const EngineLayout& layout, int rank, T* a,
                const DbbrOptions& opt, const PanelsReady<T>& ready)
      : be_(be),
        cols_(dbbr_columns(layout, opt)),
        me_(rank),
        a_(a),
        n_(layout.n),
        b_(effective_bandwidth(layout.n, opt.b)),
        k_(outer_block_width(b_, opt.k)),
        keep_(opt.keep_reflectors),
        panel_syr2k_(opt.panel_syr2k),
        z_on_every_rank_(opt.z_on_every_rank),
        pack_rows_(opt.cyclic_blocks),
        prof_(opt.profiler),
        ready_(ready) {
    out_.n = n_;
    out_.b = b_;
  }

  BasicReflectorPanels<T> run() {
    const std::vector<OuterBlock> blocks = blocks_of(cols_, b_, k_);
    for (std::size_t t = 0; t < blocks.size(); ++t) {
      if (prof_) prof_->block_boundary(static_cast<long>(t));
      outer_block(blocks[t], static_cast<long>(t));
    }
    if (prof_) prof_->block_boundary(static_cast<long>(blocks.size()));
    failure_.agree(be_.communicator());  // the last block's
    return std::move(out_);
  }

 private:
  bool has_panel(long j) const { return has_panel_at(n_, b_, j); }
  // Device address of A(row, col) for a column this rank holds.
  T* at(long row, long col) const { return a_ + row + cols_.local(col) * n_; }

  // Rows [lo, lo + rows) of a rank's rows below a panel, at `off` in their packing.
  struct RowSpan {
    long lo = 0, rows = 0, off = 0;
  };
  // Rank q's rows [r0, n) (those of its columns >= r0), segment by segment in packing order.
  std::vector<RowSpan> row_spans(int q, long r0) const {
    std::vector<RowSpan> runs;
    long off = 0;
    for (const ColumnSegment& s : cols_.segments_from(q, r0)) {
      runs.push_back({s.begin, s.width(), off});
      off += s.width();
    }
    return runs;
  }
  // Rank q's rows [r0, n) as copy_row_runs' table between their packing and a matrix whose first
  // row is row `base`: out of the packing into the matrix (Unpack), or into the packing (Pack).
  enum class Direction { Pack, Unpack };
  std::vector<RowRun> packing_runs(int q, long r0, long base, Direction d) const {
    std::vector<RowRun> runs;
    for (const RowSpan& r : row_spans(q, r0))
      runs.push_back(d == Direction::Pack ? RowRun{r.lo - base, r.off, r.rows}
                                          : RowRun{r.off, r.lo - base, r.rows});
    return runs;
  }
  long row_count(int q, long r0) const { return cols_.width_from(q, r0); }
  // This rank's first column >= c (it holds one).
  long first_own_column(long c) const { return cols_.segments_from(me_, c).front().begin; }
  T* yb(long row, long bcol) const { return buf_.yb.get() + row + bcol * n_; }
  T* zb(long row, long bcol) const { return buf_.zb.get() + row + bcol * n_; }

  // This rank's own work between the block's messages: skipped after a failure, which is held for
  // the next agreement.
  template <class Work>
  void local(Work&& work) {
    failure_.run(std::forward<Work>(work));
  }

  void outer_block(const OuterBlock& block, long index) {
    owner_ = block.owner;
    i_ = block.begin;
    e_ = block.end;
    const long groups = (e_ - i_ + b_ - 1) / b_;
    kb_ = groups * b_;
    // Other ranks hold rows of the trailing matrix for every panel of the block (columns right of
    // it, which all its panels' rows reach), or for none.
    spread_z_ = z_on_every_rank_ && row_count(owner_, e_) < n_ - e_;
    local([&] {
      allocate_block(groups);
      inject_fault("dbbr_outer_block", me_, index);
    });
    // Every rank holds the block's buffers, or every rank throws (so does a failure held from the
    // previous block).
    failure_.agree(be_.communicator());
    local([&] { save_block_columns(); });
    panels(0, groups);
    release_panel_work();
    local([&] { keep_panels(); });
    local([&] {
      DbbrTimed t(prof_, DbbrPart::TrailingUpdate);
      trailing_update();
    });
    buf_ = BlockBuffers<T>{};
  }

  void allocate_block(long groups) {
    DbbrTimed t(prof_, DbbrPart::Copies);
    buf_.yb = Buffer(be_, n_ * kb_);
    buf_.zb = Buffer(be_, n_ * kb_);
    if (me_ == owner_ && e_ - i_ > b_) {
      old_ld_ = n_ - i_ - b_;
      buf_.old = Buffer(be_, old_ld_ * (e_ - i_ - b_), UnfilledBuffer{});
    }
    // Written in full before they are read: panel_qr writes all of W and Y (zero columns past
    // min(m, b)), A W all of Z.
    long pairs = 0;
    while (pairs < groups && has_panel(i_ + pairs * b_)) ++pairs;
    if (!keep_) pairs = 1;
    buf_.w.reserve(pairs);
    buf_.y.reserve(pairs);
    for (long g = 0; g < pairs; ++g) {
      const long m = n_ - i_ - (g + 1) * b_;
      buf_.w.emplace_back(be_, m * b_, UnfilledBuffer{});
      buf_.y.emplace_back(be_, m * b_, UnfilledBuffer{});
    }
    buf_.z = Buffer(be_, (n_ - i_ - b_) * b_, UnfilledBuffer{});
    if (!spread_z_) buf_.part = Buffer(be_, part_rows() * b_);
    // Spread: S1 = Yb^H W, S2 = Zb^H W and W^H A_old W summed in one message, side by side.
    buf_.s = Buffer(be_, (spread_z_ ? 2 * (kb_ - b_) + b_ : kb_ - b_) * b_);
    buf_.wtaw = Buffer(be_, b_ * b_);
    allocate_packed_rows();
  }

  // Ybp, Zbp and Wp for the rank's rows below the block's first panel; each panel's rows are the
  // last of them. Written (each panel's rows of its own column) before they are read.
  void allocate_packed_rows() {
    packed_ld_ = spread_z_ && pack_rows_ ? row_count(me_, i_ + b_) : 0;
    if (packed_ld_ <= 0) return;
    buf_.ybp = Buffer(be_, packed_ld_ * kb_, UnfilledBuffer{});
    buf_.zbp = Buffer(be_, packed_ld_ * kb_, UnfilledBuffer{});
    buf_.wp = Buffer(be_, packed_ld_ * b_, UnfilledBuffer{});
  }

  // The most rows of A W this rank exchanges for one of the block's panels (its first): the
  // owner receives each other rank's in turn, the others send their own.
  long part_rows() const {
    const long r0 = i_ + b_;
    if (me_ != owner_) return row_count(me_, r0);
    long most = 0;
    for (int q = 0; q < cols_.ranks(); ++q)
      if (q != owner_) most = std::max(most, row_count(q, r0));
    return most;
  }

  // The block's columns right of its first panel as they were when the block began: the panel
  // updates overwrite them in place, while A W of later panels must use the matrix before this
  // block's updates (its updates enter through Z, Y).
  void save_block_columns() {
    if (!buf_.old.get()) return;
    DbbrTimed t(prof_, DbbrPart::Copies);
    be_.copy_matrix(old_ld_, e_ - i_ - b_, at(i_ + b_, i_ + b_), n_, buf_.old.get(), old_ld_);
  }

  // What only the panels use goes before the trailing update, which needs Yb and Zb alone.
  void release_panel_work() {
    buf_.old.reset();
    buf_.z.reset();
    buf_.part.reset();
    buf_.s.reset();
    buf_.wtaw.reset();
    buf_.ybp.reset();
    buf_.zbp.reset();
    buf_.wp.reset();
    if (!keep_) {
      buf_.w.clear();
      buf_.y.clear();
    }
  }

  // The block's W, Y as Q_s's next panels (the trailing update does not read them), told to
  // ready_.
  void keep_panels() {
    if (!keep_) return;
    const long first = static_cast<long>(out_.panels.size());
    for (std::size_t g = 0; g < buf_.w.size(); ++g) {
      const long r0 = i_ + (static_cast<long>(g) + 1) * b_;
      out_.panels.push_back(
          BasicReflectorPanel<T>{r0, n_ - r0, b_, std::move(buf_.w[g]), std::move(buf_.y[g])});
    }
    if (ready_) ready_(out_, first, static_cast<long>(out_.panels.size()));
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
    if (me_ == owner_ && has_panel(i_ + s * b_)) local([&] { update_right_half(s, mid, t); });
    panels(mid, t);
  }

  // The columns of panels [mid, t) with the Z, Y of panels [s, mid).
  void update_right_half(long s, long mid, long t) {
    DbbrTimed time(prof_, DbbrPart::PanelUpdate);
    const long c0 = i_ + mid * b_, c1 = std::min(i_ + t * b_, e_);
    const long g0 = s * b_, inner = (mid - s) * b_;
    if (panel_syr2k_) {
      update_diagonal_block(c0, c1, g0, inner);
      update_rows(c1, n_, c0, c1, g0, inner);
    } else {
      update_rows(c0, n_, c0, c1, g0, inner);
    }
  }

  void panel(long g) {
    const long j = i_ + g * b_;
    if (!has_panel(j)) return;
    const long r0 = j + b_, m = n_ - r0, tb = g * b_;
    T* w = buf_.w[keep_ ? g : 0].get();
    T* y = buf_.y[keep_ ? g : 0].get();
    T* z = buf_.z.get();
    local([&] {
      inject_fault("dbbr_panel", me_, j / b_);
      if (me_ != owner_) return;
      DbbrTimed t(prof_, DbbrPart::PanelQr);
      be_.panel_qr(m, b_, at(r0, j), n_, w, m, y, m);
    });
    {
      DbbrTimed t(prof_, DbbrPart::Broadcast);
      be_.broadcast(w, m * b_, owner_);
      be_.broadcast(y, m * b_, owner_);
    }
    local([&] {
      DbbrTimed t(prof_, DbbrPart::Copies);
      be_.copy_matrix(m, b_, y, m, yb(r0, tb), n_);
    });
    if (spread_z_)
      z_on_every_rank(m, r0, tb, w, y, z);
    else
      z_on_owner(m, r0, tb, w, y, z);
  }

  // The owner forms Z from the rows of A W the others send it, then broadcasts it.
  void z_on_owner(long m, long r0, long tb, const T* w, const T* y, T* z) {
    a_times_w(m, r0, w, z);
    if (me_ == owner_) local([&] { form_z(m, r0, tb, w, y, z); });
    {
      DbbrTimed t(prof_, DbbrPart::Broadcast);
      be_.broadcast(z, m * b_, owner_);
    }
    local([&] {
      DbbrTimed t(prof_, DbbrPart::Copies);
      be_.copy_matrix(m, b_, z, m, zb(r0, tb), n_);
    });
  }

  // Each rank forms Z's rows where it forms A W's. What needs all rows, S1 = Yb^H W, S2 = Zb^H W
  // and W^H A_old W, is summed over the ranks' rows in one message; then W^H A_cur W =
  // W^H A_old W - S2^H S1 - S1^H S2, each rank's rows of Z, and their gather. z holds the rows
  // packed by rank (part_begin), each rank's part as row_spans packs it.
  void z_on_every_rank(long m, long r0, long tb, const T* w, const T* y, T* z) {
    const std::vector<long> begin = part_begin(r0);
    const long rows = (begin[me_ + 1] - begin[me_]) / b_;
    T* mine = z + begin[me_];
    const OwnRows own = own_rows(m, r0, rows, tb, w, y);
    local([&] {
      DbbrTimed t(prof_, DbbrPart::AW);
      rows_of_a_w(m, r0, rows, w, mine);
    });
    local([&] {
      DbbrTimed t(prof_, DbbrPart::FormZ);
      shares_of_sums(rows, tb, own, mine);
    });
    {
      DbbrTimed t(prof_, DbbrPart::Broadcast);
      be_.all_reduce_sum(buf_.s.get(), (2 * tb + b_) * b_);
    }
    local([&] {
      DbbrTimed t(prof_, DbbrPart::FormZ);
      wtaw_from_sums(tb);
      current_rows_from_sums(rows, tb, own, mine);
      subtract_half_y_wtaw(rows, own.y, own.ldy, mine, rows);
    });
    {
      DbbrTimed t(prof_, DbbrPart::Broadcast);
      be_.all_gather(z, begin);
    }
    local([&] {
      DbbrTimed t(prof_, DbbrPart::Copies);
      keep_own_z(rows, tb, mine);
      unpack_z(r0, tb, begin, z);
    });
  }

  // This rank's rows below a panel of W and Y, and of the block's earlier columns of Yb and Zb
  // (leading dimension ldb).
  struct OwnRows {
    const T *w, *y, *yb, *zb;
    long ldw, ldy, ldb;
  };

  // Blockwise (one run) where they lie; packed, W's and Y's rows copied into Wp and Ybp's column
  // tb (the panel's rows are the last of the block's, each panel's Ybp, Zbp column holding them).
  OwnRows own_rows(long m, long r0, long rows, long tb, const T* w, const T* y) {
    if (!pack_rows_ || rows <= 0) {
      const long lo = rows > 0 ? first_own_column(r0) : r0;
      return {w + (lo - r0), y + (lo - r0), yb(lo, 0), zb(lo, 0), m, m, n_};
    }
    const long top = packed_ld_ - rows;
    T* wp = buf_.wp.get();
    T* yp = buf_.ybp.get() + top + tb * packed_ld_;
    local([&] {
      DbbrTimed t(prof_, DbbrPart::Copies);
      const std::vector<RowRun> table = packing_runs(me_, r0, r0, Direction::Pack);
      be_.copy_row_runs(b_, table, w, m, wp, rows);
      be_.copy_row_runs(b_, table, y, m, yp, packed_ld_);
    });
    return {wp, yp, buf_.ybp.get() + top, buf_.zbp.get() + top, rows, packed_ld_, packed_ld_};
  }

  // Packed: this rank's rows of the panel's Z (p, leading dimension rows) into Zbp's column tb.
  void keep_own_z(long rows, long tb, const T* p) {
    if (!pack_rows_ || rows <= 0) return;
    const long top = packed_ld_ - rows;
    be_.copy_matrix(rows, b_, p, rows, buf_.zbp.get() + top + tb * packed_ld_, packed_ld_);
  }

  // This rank's shares of S1 = Yb^H W, S2 = Zb^H W (tb x b each) and W^H A_old W (b x b, from
  // p = A_old W's rows, leading dimension rows) over its rows, side by side in buf_.s; zeros
  // without rows.
  void shares_of_sums(long rows, long tb, const OwnRows& own, const T* p) {
    T* s1 = buf_.s.get();
    T* s2 = s1 + tb * b_;
    T* g = s2 + tb * b_;
    if (rows <= 0) {
      be_.fill_matrix(2 * tb + b_, b_, T(0), T(0), s1, 2 * tb + b_);
      return;
    }
    if (tb > 0) {
      be_.gemm(kAdjoint, 'N', tb, b_, rows, 1.0, own.yb, own.ldb, own.w, own.ldw, 0.0, s1, tb);
      be_.gemm(kAdjoint, 'N', tb, b_, rows, 1.0, own.zb, own.ldb, own.w, own.ldw, 0.0, s2, tb);
    }
    be_.gemm(kAdjoint, 'N', b_, b_, rows, 1.0, own.w, own.ldw, p, rows, 0.0, g, b_);
  }

  // W^H A_cur W = W^H A_old W - S2^H S1 - S1^H S2 into buf_.wtaw, from the summed buf_.s.
  void wtaw_from_sums(long tb) {
    const T* s1 = buf_.s.get();
    const T* s2 = s1 + tb * b_;
    T* wtaw = buf_.wtaw.get();
    be_.copy_matrix(b_, b_, s2 + tb * b_, b_, wtaw, b_);
    if (tb <= 0) return;
    be_.gemm(kAdjoint, 'N', b_, b_, tb, -1.0, s2, tb, s1, tb, 1.0, wtaw, b_);
    be_.gemm(kAdjoint, 'N', b_, b_, tb, -1.0, s1, tb, s2, tb, 1.0, wtaw, b_);
  }

  // This rank's rows of A_old W in p (leading dimension rows) made A_cur W with the summed S1, S2:
  // p -= Zb S1 + Yb S2.
  void current_rows_from_sums(long rows, long tb, const OwnRows& own, T* p) {
    if (tb <= 0 || rows <= 0) return;
    const T* s1 = buf_.s.get();
    be_.gemm('N', 'N', rows, b_, tb, -1.0, own.zb, own.ldb, s1, tb, 1.0, p, rows);
    be_.gemm('N', 'N', rows, b_, tb, -1.0, own.yb, own.ldb, s1 + tb * b_, tb, 1.0, p, rows);
  }

  // Where each rank's rows of rows [r0, n) begin in z, packed by rank (b columns each, leading
  // dimension its row count); the last entry is the end.
  std::vector<long> part_begin(long r0) const {
    std::vector<long> begin(cols_.ranks() + 1, 0);
    for (int q = 0; q < cols_.ranks(); ++q) begin[q + 1] = begin[q] + row_count(q, r0) * b_;
    return begin;
  }

  // This rank's rows of A_old W into p (leading dimension rows): its columns >= r0 are consecutive
  // in its buffer, so one GEMM, and a second on the owner for the block's columns right of the
  // panel, from their saved copy.
  void rows_of_a_w(long m, long r0, long rows, const T* w, T* p) {
    const long saved = me_ == owner_ ? std::min(rows, std::max(0L, e_ - r0)) : 0;
    if (saved > 0)
      be_.gemm(kAdjoint, 'N', saved, b_, m, 1.0, buf_.old.get() + (r0 - i_ - b_) * (1 + old_ld_),
               old_ld_, w, m, 0.0, p, rows);
    if (rows > saved)
      be_.gemm(kAdjoint, 'N', rows - saved, b_, m, 1.0, at(r0, first_own_column(r0 + saved)), n_, w,
               m, 0.0, p + saved, rows);
  }

  // The gathered rows of Z into the panel's columns of Zb: one copy of row runs a rank.
  void unpack_z(long r0, long tb, const std::vector<long>& begin, const T* z) {
    for (int q = 0; q < cols_.ranks(); ++q) {
      const long rows = (begin[q + 1] - begin[q]) / b_;
      const std::vector<RowRun> table = packing_runs(q, r0, 0, Direction::Unpack);
      if (!table.empty()) be_.copy_row_runs(b_, table, z + begin[q], rows, zb(0, tb), n_);
    }
  }

  // Rows [r0, n) of A W: each rank forms its rows from its own columns, into z on the owner, sent
  // to it from the others.
  void a_times_w(long m, long r0, const T* w, T* z) {
    DbbrTimed t(prof_, DbbrPart::AW);
    const std::vector<RowSpan> runs = row_spans(me_, r0);
    const long rows = row_count(me_, r0);
    if (me_ == owner_ && rows == m) {
      // The owner holds the whole trailing matrix, its columns consecutive (one segment): the
      // symmetric product, which may read one triangle only.
      local([&] {
        const long split = std::max(0L, e_ - r0);
        const T* saved = split > 0 ? buf_.old.get() + (r0 - i_ - b_) * (1 + old_ld_) : nullptr;
        const T* right = split < m ? at(r0, r0 + split) : nullptr;
        be_.symmetric_product(m, b_, split, saved, old_ld_, right, n_, w, m, z, m);
      });
    } else if (me_ == owner_) {
      owner_product(m, r0, runs, w, z);
    } else if (rows > 0) {
      T* part = buf_.part.get();
      local([&] { rows_of_a_w(m, r0, rows, w, part); });
      be_.send(part, rows * b_, owner_, 0);
    }
  }

  // Rows [r0, n) of A W on the owner, with other ranks holding columns: its own rows (runs) first.
  // Issued before the receives, so that on a device stream (where a receive waits in order) the
  // owner's product runs while the other ranks compute theirs; then each other rank's rows
  // (disjoint from the own ones), in rank order.
  void owner_product(long m, long r0, const std::vector<RowSpan>& runs, const T* w, T* z) {
    local([&] {
      for (const RowSpan& r : runs)
        rows_from_columns(m, r0, r.lo, r.lo + r.rows, w, z + (r.lo - r0), m);
    });
    T* part = buf_.part.get();
    for (int q = 0; q < cols_.ranks(); ++q) {
      const long rows = q == owner_ ? 0 : row_count(q, r0);
      if (rows <= 0) continue;
      be_.recv(part, rows * b_, q, 0);
      local([&] {
        be_.copy_row_runs(b_, packing_runs(q, r0, r0, Direction::Unpack), part, rows, z, m);
      });
    }
  }

  // Rows [lo, hi) of A_old W into p (row lo's address, leading dimension ldp) from this rank's
  // consecutive columns [lo, hi): those of the outer block in progress (the owner's) from their
  // saved copy, the others from A.
  void rows_from_columns(long m, long r0, long lo, long hi, const T* w, T* p, long ldp) {
    const long mid = std::min(hi, e_);
    if (mid > lo)
      be_.gemm(kAdjoint, 'N', mid - lo, b_, m, 1.0,
               buf_.old.get() + (r0 - i_ - b_) + (lo - i_ - b_) * old_ld_, old_ld_, w, m, 0.0, p,
               ldp);
    const long lo2 = std::max(lo, e_);
    if (hi > lo2)
      be_.gemm(kAdjoint, 'N', hi - lo2, b_, m, 1.0, at(r0, lo2), n_, w, m, 0.0, p + (lo2 - lo),
               ldp);
  }

  // Z = A_cur W - 1/2 Y (W^H A_cur W), with A_cur = A_old - Zb Yb^H - Yb Zb^H the matrix after
  // the block's earlier panels; on entry z holds A_old W (rows [r0, n)).
  void form_z(long m, long r0, long tb, const T* w, const T* y, T* z) {
    DbbrTimed t(prof_, DbbrPart::FormZ);
    T* s = buf_.s.get();
    if (tb > 0) {
      be_.gemm(kAdjoint, 'N', tb, b_, m, 1.0, yb(r0, 0), n_, w, m, 0.0, s, tb);
      be_.gemm('N', 'N', m, b_, tb, -1.0, zb(r0, 0), n_, s, tb, 1.0, z, m);
      be_.gemm(kAdjoint, 'N', tb, b_, m, 1.0, zb(r0, 0), n_, w, m, 0.0, s, tb);
      be_.gemm('N', 'N', m, b_, tb, -1.0, yb(r0, 0), n_, s, tb, 1.0, z, m);
    }
    be_.gemm(kAdjoint, 'N', b_, b_, m, 1.0, w, m, z, m, 0.0, buf_.wtaw.get(), b_);
    subtract_half_y_wtaw(m, y, m, z, m);
  }

  // `rows` rows of Z = p - 1/2 Y (W^H A_cur W), from Y's same rows (leading dimension ldy), p
  // leading dimension ldp.
  void subtract_half_y_wtaw(long rows, const T* y, long ldy, T* p, long ldp) {
    if (rows <= 0) return;
    be_.gemm('N', 'N', rows, b_, b_, -0.5, y, ldy, buf_.wtaw.get(), b_, 1.0, p, ldp);
  }

  // A(e:n, own columns >= e) -= Z Y^H + Y Z^H with the block's accumulated Z, Y. Each own segment
  // of columns [c0, c1) crosses the trailing matrix's rows as: rows [e, c0) above its diagonal
  // block (where it starts right of e; other ranks' columns among them), the diagonal block
  // [c0, c1)^2 itself, symmetric, so syr2k (one triangle, mirrored), and rows [c1, n) below it.
  // One rank: the whole trailing matrix is the diagonal block.
  void trailing_update() {
    for (const ColumnSegment& s : cols_.segments_from(me_, e_)) {
      update_rows(e_, s.begin, s.begin, s.end, 0, kb_);
      update_diagonal_block(s.begin, s.end, 0, kb_);
      update_rows(s.end, n_, s.begin, s.end, 0, kb_);
    }
  }

  // A(r0:r1, c0:c1) -= Zb Yb^H + Yb Zb^H over the block columns [g0, g0 + inner) of Zb, Yb.
  void update_rows(long r0, long r1, long c0, long c1, long g0, long inner) {
    if (r1 <= r0 || c1 <= c0 || inner <= 0) return;
    be_.gemm('N', kAdjoint, r1 - r0, c1 - c0, inner, -1.0, zb(r0, g0), n_, yb(c0, g0), n_, 1.0,
             at(r0, c0), n_);
    be_.gemm('N', kAdjoint, r1 - r0, c1 - c0, inner, -1.0, yb(r0, g0), n_, zb(c0, g0), n_, 1.0,
             at(r0, c0), n_);
  }

  // The same on the diagonal block A(c0:c1, c0:c1), both triangles kept.
  void update_diagonal_block(long c0, long c1, long g0, long inner) {
    if (c1 <= c0 || inner <= 0) return;
    be_.syr2k_full(c1 - c0, inner, -1.0, zb(c0, g0), n_, yb(c0, g0), n_, at(c0, c0), n_);
  }

  EngineBackend& be_;
  const DbbrColumns cols_;
  int me_;
  T* a_;
  long n_, b_, k_;
  bool keep_, panel_syr2k_, z_on_every_rank_;
  bool pack_rows_;  // cyclic columns: a rank's rows below a panel packed (several runs)
  DbbrProfiler* prof_;
  const PanelsReady<T>& ready_;
  BasicReflectorPanels<T> out_;
  DeferredFailure failure_;
  // The outer block in progress.
  int owner_ = 0;
  long i_ = 0, e_ = 0, kb_ = 0, old_ld_ = 1;
  long packed_ld_ = 0;     // the rank's rows below its first panel, packed (Ybp, Zbp)
  bool spread_z_ = false;  // its Z formed on every rank (z_on_every_rank_, other ranks hold rows)
  BlockBuffers<T> buf_;
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

// This rank's columns' band rows into the band storage ab (ldab = b + 1), segment by segment.
template <class T>
void copy_own_band(EngineBackend& be, const DbbrColumns& cols, int rank, const T* a, long b,
                   T* ab) {
  const long n = cols.n(), ldab = b + 1;
  for (const ColumnSegment& s : cols.segments(rank)) {
    const long c0 = s.begin, c1 = s.end;
    // Column c's band rows c..c+b lie along the diagonal: stride n + 1 walks A(c, c),
    // A(c+1, c+1)... from the segment's first, A(c0, c0).
    const T* diagonal = a + c0 + s.local * n;
    const long full = std::min(c1, std::max(c0, n - b));  // columns whose b+1 band rows all exist
    if (full > c0) be.copy_matrix(b + 1, full - c0, diagonal, n + 1, ab + c0 * ldab, ldab);
    for (long c = full; c < c1; ++c)
      be.copy_matrix(n - c, 1, diagonal + (c - c0) * (n + 1), n, ab + c * ldab, ldab);
  }
}

template <class T>
BasicReflectorPanels<T> reduce(EngineBackend& be, const EngineLayout& layout, int rank, T* a,
                               const DbbrOptions& opt, const PanelsReady<T>& ready) {
  check_layout(layout, effective_bandwidth(layout.n, opt.b));
  return BandReduction<T>(be, layout, rank, a, opt, ready).run();
}

template <class T>
BasicDeviceBuffer<T> gather(EngineBackend& be, const EngineLayout& L, int rank, const T* a,
                            const DbbrOptions& opt) {
  const long b = effective_bandwidth(L.n, opt.b), ldab = b + 1;
  const DbbrColumns cols = dbbr_columns(L, opt);
  BasicDeviceBuffer<T> ab;
  DeferredFailure failure;
  failure.run([&] {
    ab = BasicDeviceBuffer<T>(be, L.n * ldab);
    copy_own_band(be, cols, rank, a, b, ab.get());
    inject_fault("gather_band", rank);
  });
  failure.agree(be.communicator());  // every rank holds the band before its broadcasts
  for (const ColumnSegment& s : cols.segments())
    be.broadcast(ab.get() + s.begin * ldab, s.width() * ldab, s.owner);
  return ab;
}

}  // namespace

ReflectorPanels reduce_to_band(EngineBackend& be, const EngineLayout& layout, int rank, double* a,
                               const DbbrOptions& opt, const PanelsReady<double>& ready) {
  return reduce(be, layout, rank, a, opt, ready);
}

ComplexReflectorPanels reduce_to_band(EngineBackend& be, const EngineLayout& layout, int rank,
                                      Complex* a, const DbbrOptions& opt,
                                      const PanelsReady<Complex>& ready) {
  return reduce(be, layout, rank, a, opt, ready);
}

DeviceBuffer gather_band(EngineBackend& be, const EngineLayout& L, int rank, const double* a,
                         const DbbrOptions& opt) {
  return gather(be, L, rank, a, opt);
}

BasicDeviceBuffer<Complex> gather_band(EngineBackend& be, const EngineLayout& L, int rank,
                                       const Complex* a, const DbbrOptions& opt) {
  return gather(be, L, rank, a, opt);
}

}  // namespace pipevd
