// Stage 4a, SBR-back (DBBR paper §4.3, Algorithm 3, §5.3): consecutive DBBR panels are merged
// pairwise (W_12 = [W_1 | W_2 - W_1 Y_1^T W_2], Y_12 = [Y_1 | Y_2]) into blocks about k wide, so
// the back transformation runs as GEMMs of inner dimension k instead of b; then a row block X of
// the identity becomes X Q_s = X (I - W_1 Y_1^H)(I - W_2 Y_2^H)... (^T for real matrices). Where
// X is the whole identity (one engine rank), Q_s is formed from the left in reverse block order
// instead, which skips the zeros and identity X keeps outside each block's trailing square.
#pragma once
#include <vector>

#include "core/reflector_panels.hpp"

namespace pipevd {

// I - W Y^H on rows/columns [row0, n) (Y^T for real T); W, Y are m x width with leading
// dimension m (device).
template <class T>
struct BasicMergedReflectorBlock {
  long row0 = 0;
  long m = 0;
  long width = 0;
  BasicDeviceBuffer<T> w, y;
};
using MergedReflectorBlock = BasicMergedReflectorBlock<double>;

// Panels per merged block: about k / b, at least one.
long panels_per_merged_block(long k, long b);

// Merges groups of panels_per_merged_block(k, b) consecutive panels (the last group may be
// shorter), in order. With
// release_panels, each panel's buffers are freed once copied, so the merged blocks replace the
// panels instead of doubling the memory they take.
template <class T>
std::vector<BasicMergedReflectorBlock<T>> merge_reflector_panels(EngineBackend& be,
                                                                 BasicReflectorPanels<T>& q, long k,
                                                                 bool release_panels = false);

// The order SBR-back applies the merged blocks in (PIPEVD_SBR_BACK_ORDER).
enum class SbrBackOrder {
  Auto,   // from the left in reverse where the rank holds every row, else from the right
  Right,  // from the right in forward order on every rank
};

// Whether apply_sbr_back forms Q_s from the left: h of n rows under `order`.
inline bool forms_q_s_from_left(SbrBackOrder order, long h, long n) {
  return order == SbrBackOrder::Auto && h == n;
}

// X := rows [r0, r0 + h) of Q_s, X (device, h x n, leading dimension ldx) holding those rows of
// the n x n identity on entry. Where they are every row (h == n: one engine rank) and order is
// Auto, Q_s is formed from the left (form_q_s_from_left), which needs that identity; elsewhere X
// is multiplied from the right (multiply_by_q_s).
template <class T>
void apply_sbr_back(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                    long h, T* x, long ldx, SbrBackOrder order = SbrBackOrder::Auto);

// X := X Q_s for any h x n X, block by block in forward order: X(:, row0:n) -= (X W) Y^H, a block
// of width w on m rows costs 4 h m w flops (2 h n^2 in all). Workspace: h x (widest block).
template <class T>
void multiply_by_q_s(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                     long h, T* x, long ldx);

// multiply_by_q_s issued while DBBR still runs (several engine ranks, X a part of the rows: the
// forward order starts with DBBR's first panels): each of merge_reflector_panels' groups is merged
// and applied to X as soon as DBBR has made its last panel, so that X and the blocks end equal
// bit for bit to merge_reflector_panels followed by multiply_by_q_s. The panels are read, never
// released; all work goes to `be` (a companion, ordered after DBBR's backend by its caller).
template <class T>
class SbrBackBesideDbbr {
 public:
  // X: h x n, leading dimension ldx, this rank's rows of the identity on entry.
  SbrBackBesideDbbr(EngineBackend& be, long k, long h, T* x, long ldx);
  // Panels [0, count) of q are final: the groups they complete, merged and applied.
  void panels_final(BasicReflectorPanels<T>& q, long count);
  // Every panel of q is final: the rest, the last group however short.
  void finish(BasicReflectorPanels<T>& q);

 private:
  void apply_group(BasicReflectorPanels<T>& q, long last);

  EngineBackend& be_;
  long k_, h_;
  T* x_;
  long ldx_;
  long merged_ = 0;  // panels [0, merged_) are in blocks_ (or skipped without rows)
  // Read by `be`'s queued work: this object goes only once `be` has synchronised.
  std::vector<BasicMergedReflectorBlock<T>> blocks_;
  BasicDeviceBuffer<T> t_;  // X W of one block (h x the widest block)
};

// X := Q_s for the n x n X, the identity on entry, as LAPACK's xORGQR forms Q: block by block in
// reverse order from the left, X(row0:n, row0:n) -= W (Y^H X(row0:n, row0:n)). When a block
// comes, only the later blocks have touched X, all of them inside its trailing square from row0,
// so X is the identity outside that square and the block changes nothing else: 4 m^2 w flops a
// block, (4/3) n^3 in all instead of the right order's 2 n^3. Workspace: (widest) x (largest m),
// no more than the right order's n x (widest).
template <class T>
void form_q_s_from_left(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                        T* x, long ldx);

}  // namespace pipevd
