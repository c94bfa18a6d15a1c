#include "redistribute/kept_buffer.hpp"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>

#include "base/at_mpi_finalize.hpp"
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
enum class Pin { None, Running, Done, Refused };
struct Slot {
  double* data = nullptr;
  std::size_t bytes = 0;
  bool busy = false;
  Pin pin = Pin::None;
  std::thread pinner;  // the registration's thread, joined once `pin` has left Running
};
constexpr int kSlots = 4;

// Never destroyed: a static destructor could join a pinning thread inside a CUDA runtime already
// torn down. Pinning threads are waited for at MPI_Finalize instead (finish_pinning_at_finalize).
struct Kept {
  Slot slots[kSlots];
  std::mutex mutex;
  std::condition_variable pin_left_running;
  KeptMemoryPinning pinning;
  std::atomic<bool> finish_at_finalize{false};
  KeptPinning last;
};
Kept& kept() {
  static auto* const k = new Kept;
  return *k;
}

// Waits, with `lock` held on kept().mutex, for the slot's registration to end, and joins its
// thread.
void wait_for_pin(Slot& slot, std::unique_lock<std::mutex>& lock) {
  kept().pin_left_running.wait(lock, [&] { return slot.pin != Pin::Running; });
  if (slot.pinner.joinable()) slot.pinner.join();  // past its last use of the lock
}

// The slot's memory back to the kernel, unregistered first where it was pinned. Memory still
// registered (its unpinning failed, or no pinning is installed any more) is left mapped instead:
// the driver would take new memory at the same address for the old registration.
void free_slot(Slot& slot, std::unique_lock<std::mutex>& lock) {
  wait_for_pin(slot, lock);
  const KeptMemoryPinning& pinning = kept().pinning;
  const bool registered = slot.pin == Pin::Done && !(pinning.unpin && pinning.unpin(slot.data));
  if (!registered) deallocate(slot.data, slot.bytes);
  slot.data = nullptr;
  slot.bytes = 0;
  slot.pin = Pin::None;
}

// A registration still running at MPI_Finalize ends there, before the application's exit tears the
// CUDA runtime down. Called without kept().mutex (the
// attribute's deletion at MPI_Finalize takes it), from a thread that makes the call's MPI calls.
void finish_pinning_at_finalize(Kept& k) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (k.finish_at_finalize.load() || !initialized || finalized) return;
  run_at_mpi_finalize(wait_for_kept_pinning);
  k.finish_at_finalize.store(true);
}

// Starts the slot's registration in a thread of its own (with the lock held); whether it started.
bool start_pin(Kept& k, Slot& slot) {
  const KeptMemoryPinning pinning = k.pinning;
  double* const data = slot.data;
  const std::size_t bytes = slot.bytes;
  slot.pin = Pin::Running;
  try {
    slot.pinner = std::thread([&k, &slot, pinning, data, bytes] {
      bool pinned = false;
      const auto begin = std::chrono::steady_clock::now();
      try {
        pinned = pinning.pin(data, bytes);
      } catch (...) {  // a registration that throws is one refused
      }
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
      std::lock_guard<std::mutex> lock(k.mutex);
      k.last = {bytes, took.count(), pinned};
      slot.pin = pinned ? Pin::Done : Pin::Refused;
      k.pin_left_running.notify_all();
    });
  } catch (...) {  // no thread to be had (system_error, or bad_alloc for its state): pageable
    slot.pin = Pin::None;
    return false;
  }
  return true;
}

}  // namespace

KeptBuffer::KeptBuffer(std::size_t elements, KeptFor use) : use_(use) {
  if (elements == 0) return;
  const std::size_t bytes = rounded(elements * sizeof(double));
  bytes_ = bytes;
  if (bytes < 4 * kHugePage) {  // small: malloc is cheap, and the slots stay for the large ones
    data_ = allocate(bytes);
    return;
  }
  Kept& k = kept();
  Slot* const slots = k.slots;
  std::unique_lock<std::mutex> lock(k.mutex);
  // The smallest free slot that is large enough, among those pinned or not as the use wants
  // first (device copies keep to pinned memory, other buffers leave it to them); else the largest
  // free one, grown (so that the buffers of a call settle on the same slots from the second call
  // on).
  const bool want_pinned = use == KeptFor::DeviceCopies;
  auto better_fit = [&](int s, int than) {
    if (than < 0) return true;
    const bool matches = (slots[s].pin == Pin::Done) == want_pinned;
    const bool than_matches = (slots[than].pin == Pin::Done) == want_pinned;
    if (matches != than_matches) return matches;
    return slots[s].bytes < slots[than].bytes;
  };
  int fit = -1, largest = -1;
  for (int s = 0; s < kSlots; ++s) {
    if (slots[s].busy) continue;
    if (slots[s].bytes >= bytes && better_fit(s, fit)) fit = s;
    if (largest < 0 || slots[s].bytes > slots[largest].bytes) largest = s;
  }
  const int pick = fit >= 0 ? fit : largest;
  if (pick < 0) {  // all in use: memory of its own
    data_ = allocate(bytes);
    fresh_ = true;
    return;
  }
  Slot& slot = slots[pick];
  slot.busy = true;  // before free_slot lets the lock go while a registration ends
  if (slot.bytes < bytes) {
    if (slot.data) free_slot(slot, lock);
    try {
      slot.data = allocate(bytes);
    } catch (...) {
      slot.busy = false;
      throw;
    }
    slot.bytes = bytes;
    fresh_ = true;
  }
  slot_ = pick;
  data_ = slot.data;
}

void KeptBuffer::release() {
  if (!data_) return;
  if (slot_ >= 0) {
    Kept& k = kept();
    bool started = false;
    {
      std::lock_guard<std::mutex> lock(k.mutex);
      Slot& slot = k.slots[slot_];
      slot.busy = false;
      if (use_ == KeptFor::DeviceCopies && slot.pin == Pin::None && k.pinning.pin)
        started = start_pin(k, slot);
    }
    if (started) finish_pinning_at_finalize(k);
  } else {
    deallocate(data_, bytes_);
  }
  data_ = nullptr;
  slot_ = -1;
  bytes_ = 0;
  fresh_ = false;
}

void release_kept_buffers() {
  Kept& k = kept();
  std::unique_lock<std::mutex> lock(k.mutex);
  for (Slot& s : k.slots)
    if (!s.busy && s.data) {
      s.busy = true;  // while free_slot lets the lock go
      free_slot(s, lock);
      s.busy = false;
    }
}

std::size_t kept_bytes() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  std::size_t total = 0;
  for (const Slot& s : k.slots) total += s.bytes;
  return total;
}

void set_kept_memory_pinning(KeptMemoryPinning pinning) {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  k.pinning = pinning;
}

void wait_for_kept_pinning() {
  Kept& k = kept();
  std::unique_lock<std::mutex> lock(k.mutex);
  for (Slot& s : k.slots) wait_for_pin(s, lock);
}

std::size_t kept_pinned_bytes() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  std::size_t total = 0;
  for (const Slot& s : k.slots)
    if (s.pin == Pin::Done) total += s.bytes;
  return total;
}

KeptPinning last_kept_pinning() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  return k.last;
}

}  // namespace pipevd
