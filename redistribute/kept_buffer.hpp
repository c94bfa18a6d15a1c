// Large host arrays of a call: the redistribution's packed messages and the engine rank's columns
// of A and rows of Z. Uninitialised (every element is written before it is read), large ones on
// transparent huge pages where the kernel offers them. The memory of finished buffers is kept for
// the next call (an application calls PDSYEVD again and again), so that a call does not pay the
// kernel for fresh zeroed pages each time: for a large matrix the engine's fresh A and Z are
// gigabytes of page faults, a cost of the same order as the solve's own stages.
// release_kept_buffers() hands the kept memory back.
//
// Kept memory that the engine copies to and from a GPU can also be kept pinned: a buffer for device
// copies (KeptFor::DeviceCopies) takes a pinned slot where one fits, and otherwise has its slot
// registered with the device's driver (the pinning installed by the
// GPU backend) in a thread of its own once the buffer is released, so that the next call's uploads
// and downloads run as DMA straight from it, without the staged copies through pinned chunks that
// pageable memory needs, and no call waits for the registration. A slot's memory is unregistered
// before it is freed (grown or released).
#pragma once
#include <cstddef>

namespace pipevd {

// What a kept buffer is for: the host's own copies, or copies to and from a GPU (its slot pinned).
enum class KeptFor { Host, DeviceCopies };

class KeptBuffer {
 public:
  explicit KeptBuffer(std::size_t elements, KeptFor use = KeptFor::Host);
  ~KeptBuffer() { release(); }
  KeptBuffer(const KeptBuffer&) = delete;
  KeptBuffer& operator=(const KeptBuffer&) = delete;
  KeptBuffer(KeptBuffer&& other) noexcept
      : data_(other.data_),
        bytes_(other.bytes_),
        slot_(other.slot_),
        fresh_(other.fresh_),
        use_(other.use_) {
    other.data_ = nullptr;
    other.bytes_ = 0;
    other.slot_ = -1;
    other.fresh_ = false;
  }

  double* data() { return data_; }
  // Its bytes (at least those asked for).
  std::size_t bytes() const { return bytes_; }
  // Whether its memory was freshly mapped for it (a large buffer that found no kept memory large
  // enough): pages the first writes would fault in one by one, worth backing in bulk beforehand
  // (base/page_populate.hpp, base/page_population.hpp). A kept buffer's pages are backed already,
  // and small ones come from malloc.
  bool fresh() const { return fresh_; }
  // Back to the kept memory (or freed, where it had memory of its own); data() is null after.
  void release();

 private:
  double* data_ = nullptr;
  std::size_t bytes_ = 0;  // of its own memory, for the free
  int slot_ = -1;          // the kept memory it uses, -1 if its own
  bool fresh_ = false;
  KeptFor use_ = KeptFor::Host;  // DeviceCopies: its slot pinned after its release where not yet
};

// How kept memory is pinned: pin(p, bytes) registers it (false where it could not, which is then
// not tried again for that memory), unpin(p) undoes it (false where it could not: the memory then
// stays mapped rather than go back registered). Both may run in a thread of their own.
struct KeptMemoryPinning {
  bool (*pin)(void* p, std::size_t bytes) = nullptr;
  bool (*unpin)(void* p) = nullptr;
};
// Installs the pinning (the GPU backend's; the last one installed counts). Buffers released
// before have their slots pinned at their next release.
void set_kept_memory_pinning(KeptMemoryPinning pinning);
// Returns once no slot's pinning is running (the tests' and release's synchronisation).
void wait_for_kept_pinning();
// Bytes of kept memory pinned now.
std::size_t kept_pinned_bytes();
// The last registration that ended: its bytes, its seconds, and whether it pinned them (verbose
// reports; zero before any).
struct KeptPinning {
  std::size_t bytes = 0;
  double seconds = 0;
  bool pinned = false;
};
KeptPinning last_kept_pinning();

// Frees the memory kept between calls (buffers in use stay).
void release_kept_buffers();
// Bytes kept between calls now (the slots' memory, busy or not).
std::size_t kept_bytes();

}  // namespace pipevd
