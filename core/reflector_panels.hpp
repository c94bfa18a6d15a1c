// The WY blocks DBBR produces, one per panel, kept on every engine rank for SBR-back.
#pragma once
#include <vector>

#include "core/backend.hpp"

namespace pipevd {

// Q_j = I - W Y^T acting on rows/columns [row0, n) of the matrix; W and Y are m x width
// (m = n - row0), column-major with leading dimension m, device memory.
struct ReflectorPanel {
  long row0 = 0;
  long m = 0;
  long width = 0;
  DeviceBuffer w, y;
};

// Q_s = Q_0 Q_1 ... in panel order, so that Q_s^T A Q_s is the band matrix.
struct ReflectorPanels {
  long n = 0;
  long b = 0;
  std::vector<ReflectorPanel> panels;
};

}  // namespace pipevd
