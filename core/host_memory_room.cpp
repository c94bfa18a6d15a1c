#include "core/host_memory_room.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace pipevd {
namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The first number in file p; -1 where it is missing, "max" or not a number.
long read_bytes(const std::string& p) {
  std::ifstream f(p);
  std::string v;
  if (!(f >> v) || v == "max") return -1;
  try {
    const long long x = std::stoll(v);
    return x < 0 ? -1 : static_cast<long>(x);
  } catch (...) {
    return -1;
  }
}

// The least (limit - usage) over dir and its parents up to base; v1 reports "no limit" as a
// page-rounded 2^63 - 1.
long least_room(std::string dir, const std::string& base, const char* limit_file,
                const char* usage_file) {
  long room = -1;
  for (;;) {
    const long limit = read_bytes(dir + "/" + limit_file);
    if (limit >= 0 && limit < (1L << 62)) {
      const long used = std::max(0L, read_bytes(dir + "/" + usage_file));
      const long r = std::max(0L, limit - used);
      room = room < 0 ? r : std::min(room, r);
    }
    if (dir.size() <= base.size()) return room;
    dir = dir.substr(0, dir.find_last_of('/'));
  }
}

// The group's directory under `base`: base + path, or base where that is missing.
std::string group_dir(const std::string& base, std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string d = base + path;
  return !path.empty() && is_dir(d) ? d : base;
}

}  // namespace

long cgroup_memory_room(const std::string& proc_self_cgroup, const std::string& mount) {
  std::istringstream lines(proc_self_cgroup);
  std::string line, v1_path, v2_path;
  bool v1 = false, v2 = false;
  while (std::getline(lines, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    const std::string path = line.substr(b + 1);
    if (controllers.find(",memory,") != std::string::npos) {
      v1 = true;
      v1_path = path;
    } else if (line.compare(0, a, "0") == 0 && b == a + 1) {
      v2 = true;
      v2_path = path;
    }
  }
  const std::string v1_base = mount + "/memory";
  if (v1 && is_dir(v1_base))
    return least_room(group_dir(v1_base, v1_path), v1_base, "memory.limit_in_bytes",
                      "memory.usage_in_bytes");
  if (v2) return least_room(group_dir(mount, v2_path), mount, "memory.max", "memory.current");
  return -1;
}

long cgroup_memory_room() {
  std::ifstream f("/proc/self/cgroup");
  std::stringstream text;
  text << f.rdbuf();
  return cgroup_memory_room(text.str(), "/sys/fs/cgroup");
}

}  // namespace pipevd
