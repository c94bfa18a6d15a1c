// Stage 4a, SBR-back (DBBR paper §4.3, Algorithm 3, §5.3): consecutive DBBR panels are merged
// pairwise (W_12 = [W_1 | W_2 - W_1 Y_1^T W_2], Y_12 = [Y_1 | Y_2]) into blocks about k wide, so
// the back transformation runs as GEMMs of inner dimension k instead of b; then a row block X of
// the identity becomes X Q_s = X (I - W_1 Y_1^T)(I - W_2 Y_2^T)...
#pragma once
#include <vector>

#include "core/reflector_panels.hpp"

namespace pipevd {

// I - W Y^T on rows/columns [row0, n); W, Y are m x width with leading dimension m (device).
struct MergedReflectorBlock {
  long row0 = 0;
  long m = 0;
  long width = 0;
  DeviceBuffer w, y;
};

// Merges groups of about k / b consecutive panels (at least one per group), in order. With
// release_panels, each panel's buffers are freed once copied, so the merged blocks replace the
// panels instead of doubling the memory they take.
std::vector<MergedReflectorBlock> merge_reflector_panels(EngineBackend& be, ReflectorPanels& q,
                                                         long k, bool release_panels = false);

// X := X * Q_s for the h x n row block X (device, leading dimension ldx).
void apply_sbr_back(EngineBackend& be, const std::vector<MergedReflectorBlock>& blocks, long h,
                    double* x, long ldx);

}  // namespace pipevd
