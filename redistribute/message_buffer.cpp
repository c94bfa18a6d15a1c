#include "redistribute/message_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <new>

namespace pipevd {

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;

double* allocate(std::size_t bytes) {
  void* p = nullptr;
  if (bytes >= 4 * kHugePage) {
    p = std::aligned_alloc(kHugePage, bytes);
    if (p) madvise(p, bytes, MADV_HUGEPAGE);  // a hint; fine if refused
  } else {
    p = std::malloc(bytes);
  }
  if (!p) throw std::bad_alloc();
  return static_cast<double*>(p);
}

std::size_t rounded(std::size_t bytes) {
  return bytes >= 4 * kHugePage ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
}

// Two kept buffers: a redistribution uses a send and a receive buffer.
struct Slot {
  double* data = nullptr;
  std::size_t bytes = 0;
  bool busy = false;
};
Slot slots[2];
std::mutex slots_mutex;

}  // namespace

MessageBuffer::MessageBuffer(std::size_t elements) {
  if (elements == 0) return;
  const std::size_t bytes = rounded(elements * sizeof(double));
  std::lock_guard<std::mutex> lock(slots_mutex);
  int pick = -1;
  for (int s = 0; s < 2; ++s) {
    if (slots[s].busy) continue;
    if (slots[s].bytes >= bytes) {  // kept memory large enough
      pick = s;
      break;
    }
    if (pick < 0) pick = s;
  }
  if (pick < 0) {  // both in use: memory of its own
    data_ = allocate(bytes);
    return;
  }
  Slot& slot = slots[pick];
  if (slot.bytes < bytes) {
    std::free(slot.data);
    slot.data = nullptr;
    slot.bytes = 0;
    slot.data = allocate(bytes);
    slot.bytes = bytes;
  }
  slot.busy = true;
  slot_ = pick;
  data_ = slot.data;
}

void MessageBuffer::release() {
  if (!data_) return;
  if (slot_ >= 0) {
    std::lock_guard<std::mutex> lock(slots_mutex);
    slots[slot_].busy = false;
  } else {
    std::free(data_);
  }
  data_ = nullptr;
  slot_ = -1;
}

void release_message_buffers() {
  std::lock_guard<std::mutex> lock(slots_mutex);
  for (Slot& s : slots)
    if (!s.busy) {
      std::free(s.data);
      s = Slot{};
    }
}

}  // namespace pipevd
