#include "redistribute/block_cyclic.hpp"

#include <algorithm>

#include "base/scalapack_api.hpp"

namespace pipevd {

namespace sl = scalapack;

BlockCyclicView view_of(const int* desc, long ia, long ja, long m, long n, int nprow, int npcol) {
  BlockCyclicView v;
  v.m = m;
  v.n = n;
  v.ia = ia - 1;
  v.ja = ja - 1;
  v.mb = desc[sl::MB_];
  v.nb = desc[sl::NB_];
  v.rsrc = desc[sl::RSRC_];
  v.csrc = desc[sl::CSRC_];
  v.nprow = nprow;
  v.npcol = npcol;
  v.lld = desc[sl::LLD_];
  return v;
}

std::vector<Run> owned_runs(long offset, long count, int nb, int src, int nprocs, int p) {
  std::vector<Run> runs;
  if (count <= 0) return runs;
  const long first_block = offset / nb;
  const long last_block = (offset + count - 1) / nb;
  // Block b lives on process (b + src) mod nprocs: the first block of p at or after first_block.
  const long shift = ((p - src - first_block) % nprocs + nprocs) % nprocs;
  runs.reserve(static_cast<size_t>((last_block - first_block) / nprocs + 1));
  for (long b = first_block + shift; b <= last_block; b += nprocs) {
    const long begin = std::max(offset, b * nb);
    const long end = std::min(offset + count, (b + 1) * nb);
    const long local = (b / nprocs) * nb + (begin - b * nb);
    runs.push_back({begin - offset, local, end - begin});
  }
  return runs;
}

Run clip(const Run& r, long lo, long hi) {
  const long begin = std::max(r.global, lo);
  const long end = std::min(r.global + r.len, hi);
  if (begin >= end) return {begin, r.local, 0};
  return {begin, r.local + (begin - r.global), end - begin};
}

}  // namespace pipevd
