#include "core/block_diagonal.hpp"

#include <algorithm>

namespace pipevd {

long packed_size(const std::vector<long>& orders) {
  long size = 0;
  for (const long m : orders) size += m * m;
  return size;
}

std::vector<long> join_small_blocks(const std::vector<long>& orders, long order) {
  std::vector<long> joined;
  for (const long m : orders)
    if (!joined.empty() && joined.back() + m <= order)
      joined.back() += m;
    else
      joined.push_back(m);
  return joined;
}

// Block i's column c moves from s_i + (s_i + c) lda down to off_i + c m_i (off_i the packed size
// before it), never up, and the sources only grow with c and i: a group of columns whose packed
// places end before its first source overwrites nothing still to be read. Such groups double in
// width along the first block and take the later blocks nearly whole; only a first block wider
// than half of lda has columns whose place reaches into their own source, copied in row pieces
// shorter than that distance.
void pack_diagonal_blocks(EngineBackend& be, double* a, long lda, const std::vector<long>& orders) {
  long s = 0, off = 0;
  for (const long m : orders) {
    for (long c = 0; c < m;) {
      const long src = s + (s + c) * lda, dst = off + c * m;
      if (src == dst) {  // in place already (the first block's first column)
        ++c;
        continue;
      }
      const long width = std::min(m - c, (src - off) / m - c);
      if (width >= 1) {
        be.copy_matrix(m, width, a + src, lda, a + dst, m);
        c += width;
        continue;
      }
      const long piece = src - dst;
      for (long r = 0; r < m; r += piece)
        be.copy_matrix(std::min(piece, m - r), 1, a + src + r, lda, a + dst + r, m);
      ++c;
    }
    s += m;
    off += m * m;
  }
}

void multiply_block_diagonal(EngineBackend& be, long h, const double* x, long ldx,
                             const std::vector<long>& orders, const double* packed, double* y,
                             long ldy) {
  if (h <= 0) return;
  long s = 0, off = 0;
  for (const long m : orders) {
    be.gemm('N', 'N', h, m, m, 1.0, x + s * ldx, ldx, packed + off, m, 0.0, y + s * ldy, ldy);
    s += m;
    off += m * m;
  }
}

}  // namespace pipevd
