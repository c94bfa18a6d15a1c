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

// The pages of [p, p + bytes) in pieces of 8 MiB, each backed on its own (so that threads may
// share them out).
class PagePieces {
 public:
  PagePieces() = default;
  PagePieces(void* p, long bytes) {
    const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    begin_ = reinterpret_cast<std::uintptr_t>(p) / page * page;
    end_ = reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(std::max(0L, bytes));
    if (bytes <= 0 || end_ <= begin_) end_ = begin_;
  }
  long count() const { return static_cast<long>((end_ - begin_ + kPiece - 1) / kPiece); }

  // Maps piece k's pages into this process and allocates those not yet backed, without changing
  // their contents. false when the kernel could not back them (no memory left). Where the kernel
  // lacks MADV_POPULATE_WRITE (before Linux 5.14): a read per page (maps pages another process
  // has backed; a hole is backed then too).
  bool populate(long k) const {
    const std::uintptr_t b = begin_ + static_cast<std::uintptr_t>(k) * kPiece;
    const std::uintptr_t e = std::min(end_, b + kPiece);
#ifdef MADV_POPULATE_WRITE
    if (madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE) == 0) return true;
    if (errno != EINVAL) return false;  // EINVAL: not known to this kernel; else: not backed
#endif
    const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    for (std::uintptr_t a = b; a < e; a += page) (void)*reinterpret_cast<volatile const char*>(a);
    return true;
  }

 private:
  static constexpr std::uintptr_t kPiece = std::uintptr_t(8) << 20;
  std::uintptr_t begin_ = 0, end_ = 0;
};

// Every page of [p, p + bytes) backed (PagePieces::populate) on `threads` threads. false when
// the kernel could not back them all.
inline bool populate_pages(void* p, long bytes, int threads) {
  const PagePieces pieces(p, bytes);
  std::atomic<bool> ok{true};
  parallel_for(pieces.count(), threads, [&](long k) {
    if (!pieces.populate(k)) ok = false;
  });
  return ok;
}

}  // namespace pipevd
