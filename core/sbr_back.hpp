// Stage 4a, SBR-back (DBBR paper §4.3, Algorithm 3, §5.3): consecutive DBBR panels are merged
// pairwise (W_12 = [W_1 | W_2 - W_1 Y_1^T W_2], Y_12 = [Y_1 | Y_2]) into blocks about k wide, so
// the back transformation runs as GEMMs of inner dimension k instead of b; then a row block X of
// the identity becomes X Q_s = X (I - W_1 Y_1^H)(I - W_2 Y_2^H)... (^T for real matrices).
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

// Merges groups of about k / b consecutive panels (at least one per group), in order. With
// release_panels, each panel's buffers are freed once copied, so the merged blocks replace the
// panels instead of doubling the memory they take.
template <class T>
std::vector<BasicMergedReflectorBlock<T>> merge_reflector_panels(EngineBackend& be,
                                                                 BasicReflectorPanels<T>& q, long k,
                                                                 bool release_panels = false);

// X := X * Q_s for the h x n row block X (device, leading dimension ldx).
template <class T>
void apply_sbr_back(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                    long h, T* x, long ldx);

}  // namespace pipevd
