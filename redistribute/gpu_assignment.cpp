#include "redistribute/gpu_assignment.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace pipevd {

namespace {

// Members' indices by node-local rank (ties by position), so the lowest-ranked comes first.
std::vector<int> by_local_rank(const std::vector<NodeMember>& members) {
  std::vector<int> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return members[a].local_rank < members[b].local_rank; });
  return order;
}

int preferred(const NodeMember& m, int node_ranks) {
  const long seen = static_cast<long>(m.visible.size());
  const long pick = static_cast<long>(m.local_rank) * seen / std::max(1, node_ranks);
  return static_cast<int>(std::clamp(pick, 0L, seen - 1));
}

}  // namespace

std::vector<int> assign_engine_gpus(const std::vector<NodeMember>& members,
                                    const GpuAssignmentRules& rules) {
  std::vector<int> device(members.size(), -1);
  const std::vector<int> order = by_local_rank(members);
  const int cap = rules.max_engines > 0 ? rules.max_engines : static_cast<int>(members.size());
  if (rules.sharing) {
    int engines = 0;
    for (int i : order) {
      const NodeMember& m = members[i];
      if (m.visible.empty() || engines == cap) continue;
      device[i] = m.local_rank % static_cast<int>(m.visible.size());
      ++engines;
    }
    return device;
  }
  int node_ranks = rules.node_ranks;
  int highest = -1;
  for (const NodeMember& m : members) highest = std::max(highest, m.local_rank);
  // The launcher's count is unknown, or contradicts the ranks seen: the grid is the node.
  if (node_ranks <= highest) node_ranks = static_cast<int>(members.size());
  const bool whole_node = static_cast<int>(members.size()) >= node_ranks;

  std::map<GpuUuid, int> driver;  // GPU -> member index
  for (int i : order) {
    const NodeMember& m = members[i];
    if (m.visible.empty()) continue;
    const int p = preferred(m, node_ranks);
    if (driver.emplace(m.visible[p], i).second) device[i] = p;
  }
  if (whole_node)
    for (int i : order) {
      const NodeMember& m = members[i];
      if (device[i] >= 0) continue;
      for (int v = 0; v < static_cast<int>(m.visible.size()); ++v)
        if (driver.emplace(m.visible[v], i).second) {
          device[i] = v;
          break;
        }
    }
  // The cap keeps the lowest-ranked engine ranks.
  int engines = 0;
  for (int i : order)
    if (device[i] >= 0 && ++engines > cap) device[i] = -1;
  return device;
}

}  // namespace pipevd
