#include "redistribute/engine_partition.hpp"

#include <stdexcept>

namespace pipevd {

std::vector<long> even_partition(long n, int parts, long block) {
  if (parts < 1 || block < 1 || n < 0) throw std::invalid_argument("even_partition: bad arguments");
  const long blocks = n / block;
  std::vector<long> begin(static_cast<size_t>(parts) + 1, 0);
  for (int p = 0; p < parts; ++p) {
    const long mine = blocks / parts + (p < blocks % parts ? 1 : 0);
    begin[p + 1] = begin[p] + mine * block;
  }
  begin[parts] = n;  // the partial block, if any, on the last rank
  return begin;
}

std::vector<long> partition_from_widths(const std::vector<long>& widths) {
  std::vector<long> begin(widths.size() + 1, 0);
  for (size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] < 0) throw std::invalid_argument("partition_from_widths: negative width");
    begin[i + 1] = begin[i] + widths[i];
  }
  return begin;
}

EngineLayout even_layout(long n, int engine_ranks, long block) {
  EngineLayout layout;
  layout.n = n;
  layout.col_begin = even_partition(n, engine_ranks, block);
  layout.row_begin = layout.col_begin;
  return layout;
}

}  // namespace pipevd
