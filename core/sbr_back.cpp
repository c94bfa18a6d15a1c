#include "core/sbr_back.hpp"

#include <algorithm>

namespace pipevd {

long panels_per_merged_block(long k, long b) { return std::max(1L, k / std::max(1L, b)); }

namespace {

// Panels [first, last) of q merged into one block (one of merge_reflector_panels' groups).
template <class T>
BasicMergedReflectorBlock<T> merge_panel_group(EngineBackend& be, BasicReflectorPanels<T>& q,
                                               long first, long last, bool release_panels) {
  BasicMergedReflectorBlock<T> blk;
  blk.row0 = q.panels[first].row0;
  blk.m = q.n - blk.row0;
  for (long p = first; p < last; ++p) blk.width += q.panels[p].width;
  blk.w = BasicDeviceBuffer<T>(be, blk.m * blk.width);
  blk.y = BasicDeviceBuffer<T>(be, blk.m * blk.width);
  // Each panel's W, Y below its own first row; zeros above (from allocation).
  long col = 0;
  std::vector<long> starts;
  for (long p = first; p < last; ++p) {
    BasicReflectorPanel<T>& pan = q.panels[p];
    const long off = pan.row0 - blk.row0 + col * blk.m;
    be.copy_matrix(pan.m, pan.width, pan.w.get(), pan.m, blk.w.get() + off, blk.m);
    be.copy_matrix(pan.m, pan.width, pan.y.get(), pan.m, blk.y.get() + off, blk.m);
    if (release_panels) {
      pan.w.reset();
      pan.y.reset();
    }
    starts.push_back(col);
    col += pan.width;
  }
  starts.push_back(col);
  // Pairwise merging, level by level (the batched form of Algorithm 3's recursion): after the
  // level with span s, every aligned run of 2s panels is one block.
  const long panels = last - first;
  for (long s = 1; s < panels; s *= 2)
    for (long a = 0; a + s < panels; a += 2 * s) {
      const long mid = a + s, end = std::min(panels, a + 2 * s);
      const long k1 = starts[mid] - starts[a], k2 = starts[end] - starts[mid];
      be.merge_reflector_blocks(blk.m, k1, k2, blk.w.get() + starts[a] * blk.m, blk.m,
                                blk.y.get() + starts[a] * blk.m, blk.m);
    }
  return blk;
}

}  // namespace

template <class T>
std::vector<BasicMergedReflectorBlock<T>> merge_reflector_panels(EngineBackend& be,
                                                                 BasicReflectorPanels<T>& q, long k,
                                                                 bool release_panels) {
  std::vector<BasicMergedReflectorBlock<T>> blocks;
  const long count = static_cast<long>(q.panels.size());
  const long per_block = panels_per_merged_block(k, q.b);
  for (long first = 0; first < count; first += per_block)
    blocks.push_back(
        merge_panel_group(be, q, first, std::min(count, first + per_block), release_panels));
  return blocks;
}

template <class T>
void apply_sbr_back(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                    long h, T* x, long ldx, SbrBackOrder order) {
  if (h <= 0 || blocks.empty()) return;
  const long n = blocks.front().row0 + blocks.front().m;  // every block ends at row n
  if (forms_q_s_from_left(order, h, n))
    form_q_s_from_left(be, blocks, x, ldx);
  else
    multiply_by_q_s(be, blocks, h, x, ldx);
}

namespace {

// X := X (I - W Y^H) on X's columns [row0, n), through t (h x width, leading dimension h).
template <class T>
void multiply_by_block(EngineBackend& be, const BasicMergedReflectorBlock<T>& blk, long h, T* x,
                       long ldx, T* t) {
  T* xs = x + blk.row0 * ldx;  // X(:, row0:n)
  be.gemm('N', 'N', h, blk.width, blk.m, 1.0, xs, ldx, blk.w.get(), blk.m, 0.0, t, h);
  be.gemm('N', Scalar<T>::adjoint, h, blk.m, blk.width, -1.0, t, h, blk.y.get(), blk.m, 1.0, xs,
          ldx);
}

}  // namespace

template <class T>
void multiply_by_q_s(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                     long h, T* x, long ldx) {
  if (h <= 0) return;
  long tmax = 0;
  for (const auto& blk : blocks) tmax = std::max(tmax, blk.width);
  BasicDeviceBuffer<T> t(be, h * tmax);
  for (const auto& blk : blocks) multiply_by_block(be, blk, h, x, ldx, t.get());
}

template <class T>
SbrBackBesideDbbr<T>::SbrBackBesideDbbr(EngineBackend& be, long k, long h, T* x, long ldx)
    : be_(be), k_(k), h_(h), x_(x), ldx_(ldx) {}

template <class T>
void SbrBackBesideDbbr<T>::panels_final(BasicReflectorPanels<T>& q, long count) {
  const long per_block = panels_per_merged_block(k_, q.b);
  while (merged_ + per_block <= count) apply_group(q, merged_ + per_block);
}

template <class T>
void SbrBackBesideDbbr<T>::finish(BasicReflectorPanels<T>& q) {
  const long count = static_cast<long>(q.panels.size());
  panels_final(q, count);
  if (merged_ < count) apply_group(q, count);
  t_.reset();
}

template <class T>
void SbrBackBesideDbbr<T>::apply_group(BasicReflectorPanels<T>& q, long last) {
  const long first = merged_;
  merged_ = last;
  if (h_ <= 0) return;  // no rows: nothing to multiply, so nothing to merge
  blocks_.push_back(merge_panel_group(be_, q, first, last, /*release_panels=*/false));
  const BasicMergedReflectorBlock<T>& blk = blocks_.back();
  // The first group is the widest: every later one has as many panels of b columns or fewer.
  if (!t_.get()) t_ = BasicDeviceBuffer<T>(be_, h_ * blk.width);
  multiply_by_block(be_, blk, h_, x_, ldx_, t_.get());
}

template <class T>
void form_q_s_from_left(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                        T* x, long ldx) {
  long tmax = 0, mmax = 0;
  for (const auto& blk : blocks) {
    tmax = std::max(tmax, blk.width);
    mmax = std::max(mmax, blk.m);
  }
  BasicDeviceBuffer<T> t(be, tmax * mmax);
  for (auto blk = blocks.rbegin(); blk != blocks.rend(); ++blk) {
    const long m = blk->m, w = blk->width;
    T* xs = x + blk->row0 + blk->row0 * ldx;  // X(row0:n, row0:n)
    be.gemm(Scalar<T>::adjoint, 'N', w, m, m, 1.0, blk->y.get(), m, xs, ldx, 0.0, t.get(), w);
    be.gemm('N', 'N', m, m, w, -1.0, blk->w.get(), m, t.get(), w, 1.0, xs, ldx);
  }
}

template class SbrBackBesideDbbr<double>;
template class SbrBackBesideDbbr<Complex>;
template std::vector<BasicMergedReflectorBlock<double>> merge_reflector_panels(
    EngineBackend&, BasicReflectorPanels<double>&, long, bool);
template std::vector<BasicMergedReflectorBlock<Complex>> merge_reflector_panels(
    EngineBackend&, BasicReflectorPanels<Complex>&, long, bool);
template void apply_sbr_back(EngineBackend&, const std::vector<BasicMergedReflectorBlock<double>>&,
                             long, double*, long, SbrBackOrder);
template void apply_sbr_back(EngineBackend&, const std::vector<BasicMergedReflectorBlock<Complex>>&,
                             long, Complex*, long, SbrBackOrder);
template void multiply_by_q_s(EngineBackend&, const std::vector<BasicMergedReflectorBlock<double>>&,
                              long, double*, long);
template void multiply_by_q_s(EngineBackend&,
                              const std::vector<BasicMergedReflectorBlock<Complex>>&, long,
                              Complex*, long);
template void form_q_s_from_left(EngineBackend&,
                                 const std::vector<BasicMergedReflectorBlock<double>>&, double*,
                                 long);
template void form_q_s_from_left(EngineBackend&,
                                 const std::vector<BasicMergedReflectorBlock<Complex>>&, Complex*,
                                 long);

}  // namespace pipevd
