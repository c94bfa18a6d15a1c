#include "redistribute/kept_buffer.hpp"

#include <cstdlib>
#include <mutex>
#include <new>

#include "base/page_array.hpp"

namespace pipevd {

namespace {

constexpr std::size_t kHugePage = kHugePageBytes;

// Large ones straight from the kernel, so that they go straight back when freed (a release, a
// slot grown), whichever thread allocated them and whatever malloc's trim threshold.
double* allocate(std::size_t bytes) {
  if (bytes >= 4 * kHugePage) return static_cast<double*>(allocate_pages(bytes, /*huge=*/true));
  void* p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return static_cast<double*>(p);
}

void deallocate(double* p, std::size_t bytes) {
  if (bytes >= 4 * kHugePage)
    free_pages(p, bytes, /*huge=*/true);
  else
    std::free(p);
}

std::size_t rounded(std::size_t bytes) {
  return bytes >= 4 * kHugePage ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
}

// Kept memory for buffers of 8 MiB or more: a call holds at most four at once (the engine's A and
// Z, a send and a receive buffer of the message path).
struct Slot {
  double* data = nullptr;
  std::size_t bytes = 0;
  bool busy = false;
};
constexpr int kSlots = 4;
Slot slots[kSlots];
std::mutex slots_mutex;

}  // namespace

KeptBuffer::KeptBuffer(std::size_t elements) {
  if (elements == 0) return;
  const std::size_t bytes = rounded(elements * sizeof(double));
  bytes_ = bytes;
  if (bytes < 4 * kHugePage) {  // small: malloc is cheap, and the slots stay for the large ones
    data_ = allocate(bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(slots_mutex);
  // The smallest free slot that is large enough; else the largest free one, grown (so that the
  // buffers of a call settle on the same slots from the second call on).
  int fit = -1, largest = -1;
  for (int s = 0; s < kSlots; ++s) {
    if (slots[s].busy) continue;
    if (slots[s].bytes >= bytes && (fit < 0 || slots[s].bytes < slots[fit].bytes)) fit = s;
    if (largest < 0 || slots[s].bytes > slots[largest].bytes) largest = s;
  }
  const int pick = fit >= 0 ? fit : largest;
  if (pick < 0) {  // all in use: memory of its own
    data_ = allocate(bytes);
    fresh_ = true;
    return;
  }
  Slot& slot = slots[pick];
  if (slot.bytes < bytes) {
    deallocate(slot.data, slot.bytes);
    slot = Slot{};
    slot.data = allocate(bytes);
    slot.bytes = bytes;
    fresh_ = true;
  }
  slot.busy = true;
  slot_ = pick;
  data_ = slot.data;
}

void KeptBuffer::release() {
  if (!data_) return;
  if (slot_ >= 0) {
    std::lock_guard<std::mutex> lock(slots_mutex);
    slots[slot_].busy = false;
  } else {
    deallocate(data_, bytes_);
  }
  data_ = nullptr;
  slot_ = -1;
  bytes_ = 0;
  fresh_ = false;
}

void release_kept_buffers() {
  std::lock_guard<std::mutex> lock(slots_mutex);
  for (Slot& s : slots)
    if (!s.busy) {
      deallocate(s.data, s.bytes);
      s = Slot{};
    }
}

std::size_t kept_bytes() {
  std::lock_guard<std::mutex> lock(slots_mutex);
  std::size_t total = 0;
  for (const Slot& s : slots) total += s.bytes;
  return total;
}

}  // namespace pipevd
