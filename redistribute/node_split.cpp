#include "redistribute/node_split.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace pipevd {

namespace {

std::vector<int> pretend_node_of;  // per world rank; empty: real nodes

long whole_number(const std::string& s, const std::string& spec) {
  char* end = nullptr;
  const long v = s.empty() ? -1 : std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0)
    throw std::invalid_argument("pretend nodes '" + spec + "': '" + s + "' is not a whole number");
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

}  // namespace

std::vector<int> parse_pretend_nodes(const std::string& spec, int world_size) {
  if (spec.empty()) return {};
  std::vector<int> node(world_size, -1);
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("pretend nodes '" + spec + "': " + why);
  };
  if (spec.find('|') != std::string::npos || spec.find(',') != std::string::npos) {
    const std::vector<std::string> groups = split(spec, '|');
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (const std::string& r : split(groups[g], ',')) {
        const long rank = whole_number(r, spec);
        if (rank >= world_size)
          throw bad("rank " + r + " beyond the " + std::to_string(world_size));
        if (node[rank] >= 0) throw bad("rank " + r + " in two nodes");
        node[rank] = static_cast<int>(g);
      }
  } else {
    long next = 0;
    const std::vector<std::string> sizes = split(spec, '+');
    for (std::size_t g = 0; g < sizes.size(); ++g) {
      const long count = whole_number(sizes[g], spec);
      if (count == 0 || next + count > world_size) throw bad("node sizes do not fit the ranks");
      for (long r = next; r < next + count; ++r) node[r] = static_cast<int>(g);
      next += count;
    }
  }
  if (std::find(node.begin(), node.end(), -1) != node.end()) throw bad("a rank in no node");
  return node;
}

void set_pretend_nodes(const std::string& spec) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  pretend_node_of = parse_pretend_nodes(spec, size);
}

bool pretend_nodes_active() { return !pretend_node_of.empty(); }

MPI_Comm split_by_node(MPI_Comm comm, int key) {
  MPI_Comm node = MPI_COMM_NULL;
  if (pretend_node_of.empty()) {
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &node);
    return node;
  }
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_split(comm, pretend_node_of[world_rank], key, &node);
  return node;
}

}  // namespace pipevd
