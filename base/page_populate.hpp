// Backing a range of pages in bulk, before the writes that would fault them in one by one: a
// fresh mapping's first touch by scattered writes costs a page fault per 4 KiB page, which on a
// large array takes longer than the writes themselves, and the faults of many threads of one
// process contend in the kernel.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>

#include "base/parallel_for.hpp"

namespace pipevd {

// Maps the pages [p, p + bytes) into this process and allocates those not yet backed, without
// changing their contents; on threads, in 8 MiB pieces. false when the kernel could not back
// them (no memory left). Where the kernel lacks MADV_POPULATE_WRITE (before Linux 5.14): a read
// per page (maps pages another process has backed; a hole is backed then too).
inline bool populate_pages(void* p, long bytes, int threads) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p) / page * page;
  const std::uintptr_t end =
      reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(bytes);
  if (bytes <= 0 || end <= begin) return true;
  const std::uintptr_t piece = std::uintptr_t(8) << 20;
  std::atomic<bool> ok{true};
  parallel_for(static_cast<long>((end - begin + piece - 1) / piece), threads, [&](long k) {
    const std::uintptr_t b = begin + static_cast<std::uintptr_t>(k) * piece;
    const std::uintptr_t e = std::min(end, b + piece);
#ifdef MADV_POPULATE_WRITE
    if (madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE) == 0) return;
    if (errno != EINVAL) {  // EINVAL: not known to this kernel; anything else: not backed
      ok = false;
      return;
    }
#endif
    for (std::uintptr_t a = b; a < e; a += page) (void)*reinterpret_cast<volatile const char*>(a);
  });
  return ok;
}

}  // namespace pipevd
