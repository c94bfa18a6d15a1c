// DBBR run on this rank's columns and its results read back to the host: the band (every rank's
// gather) and each of Q_s's panels' first row, W and Y. The DBBR tests compare these between
// schemes and backends, real and complex.
#pragma once
#include <vector>

#include "core/dbbr.hpp"

namespace pipevd::test {

template <class T>
struct BandReadback {
  long b = 0;              // the effective bandwidth
  std::vector<T> band;     // lower band storage, ldab = b + 1
  std::vector<long> row0;  // each panel's first row
  std::vector<std::vector<T>> w, y;
};

// a: this rank's columns of the matrix in `be`'s memory (reduced in place).
template <class T>
BandReadback<T> reduce_and_read_back(EngineBackend& be, const EngineLayout& L, int rank, T* a,
                                     const DbbrOptions& opt) {
  const BasicReflectorPanels<T> panels = reduce_to_band(be, L, rank, a, opt);
  BandReadback<T> r;
  r.b = effective_bandwidth(L.n, opt.b);
  const BasicDeviceBuffer<T> ab = gather_band(be, L, rank, a, opt);
  r.band.resize(L.n * (r.b + 1));
  be.copy_to_host(ab.get(), r.band.data(), static_cast<long>(r.band.size()));
  for (const BasicReflectorPanel<T>& p : panels.panels) {
    r.row0.push_back(p.row0);
    r.w.emplace_back(p.m * p.width);
    r.y.emplace_back(p.m * p.width);
    be.copy_to_host(p.w.get(), r.w.back().data(), p.m * p.width);
    be.copy_to_host(p.y.get(), r.y.back().data(), p.m * p.width);
  }
  return r;
}

}  // namespace pipevd::test
