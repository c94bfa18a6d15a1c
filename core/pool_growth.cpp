#include "core/pool_growth.hpp"

#include <algorithm>

#include "core/memory_check.hpp"

namespace pipevd {

PoolGrowth plan_pool_growth(bool staged_asked, long peak_bytes, long dbbr_bytes,
                            long largest_later_bytes, long usable_bytes) {
  PoolGrowth g;
  g.first_bytes = g.peak_bytes = std::max(0L, peak_bytes);
  if (!staged_asked || g.peak_bytes == 0) return g;
  if (dbbr_bytes <= 0) {
    g.whole_because = "no DBBR stage before the peak";
  } else if (dbbr_bytes >= g.peak_bytes) {
    g.whole_because = "DBBR's stage is the peak";
  } else if (usable_bytes < 0) {
    g.whole_because = "the device's free memory is unknown";
  } else if (!engine_memory_fits(g.peak_bytes + std::max(0L, largest_later_bytes), usable_bytes)) {
    g.whole_because = "no room for a later buffer beside the peak";
  } else {
    g.first_bytes = dbbr_bytes;
    g.staged = true;
  }
  return g;
}

long pool_rest_bytes(long peak_bytes, long reserved_bytes) {
  return std::max(0L, peak_bytes - std::max(0L, reserved_bytes));
}

long pool_rest_due(long peak_bytes, long reserved_bytes, long free_bytes, bool needed) {
  const long rest = pool_rest_bytes(peak_bytes, reserved_bytes);
  return rest == 0 || needed || free_bytes < rest ? rest : -1;
}

}  // namespace pipevd
