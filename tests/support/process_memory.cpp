#include "tests/support/process_memory.hpp"

#include <malloc.h>

#include <fstream>
#include <sstream>
#include <string>

namespace pipevd::test {
namespace {

// A "Name:   1234 kB" line of /proc/self/status, in bytes (0 where absent).
long status_bytes(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.compare(0, name.size() + 1, name + ":") == 0)
      return std::stol(line.substr(name.size() + 1)) * 1024;
  return 0;
}

// The mappings of files under /dev/shm (deleted ones too: a shared window's file is unlinked
// once every process has it mapped, and its pages live until the last unmapping).
long dev_shm_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  long bytes = 0;
  while (std::getline(maps, line)) {
    if (line.find(" /dev/shm/") == std::string::npos) continue;
    std::istringstream range(line.substr(0, line.find(' ')));
    unsigned long begin = 0, end = 0;
    char dash = 0;
    range >> std::hex >> begin >> dash >> end;
    bytes += static_cast<long>(end - begin);
  }
  return bytes;
}

}  // namespace

ProcessMemory trimmed_process_memory() {
  malloc_trim(0);
  const struct mallinfo2 m = mallinfo2();
  ProcessMemory p;
  p.heap_in_use = static_cast<long>(m.uordblks + m.hblkhd);
  p.rss_anon = status_bytes("RssAnon");
  p.rss_shmem = status_bytes("RssShmem");
  p.dev_shm = dev_shm_mapped();
  return p;
}

}  // namespace pipevd::test
