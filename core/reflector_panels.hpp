// The WY blocks DBBR produces, one per panel, kept on every engine rank for SBR-back.
#pragma once
#include <vector>

#include "core/backend.hpp"

namespace pipevd {

// Q_j = I - W Y^H acting on rows/columns [row0, n) of the matrix (Y^T for real T); W and Y are
// m x width (m = n - row0), column-major with leading dimension m, device memory.
template <class T>
struct BasicReflectorPanel {
  long row0 = 0;
  long m = 0;
  long width = 0;
  BasicDeviceBuffer<T> w, y;
};

// Q_s = Q_0 Q_1 ... in panel order, so that Q_s^H A Q_s is the band matrix.
template <class T>
struct BasicReflectorPanels {
  long n = 0;
  long b = 0;
  std::vector<BasicReflectorPanel<T>> panels;
};

using ReflectorPanel = BasicReflectorPanel<double>;
using ReflectorPanels = BasicReflectorPanels<double>;
using ComplexReflectorPanels = BasicReflectorPanels<Complex>;

}  // namespace pipevd
