// Large host arrays of a call: the redistribution's packed messages and the engine rank's columns
// of A and rows of Z. Uninitialised (every element is written before it is read), large ones on
// transparent huge pages where the kernel offers them. The memory of finished buffers is kept for
// the next call (an application calls PDSYEVD again and again), so that a call does not pay the
// kernel for fresh zeroed pages each time: for a large matrix the engine's fresh A and Z are
// gigabytes of page faults, a cost of the same order as the solve's own stages.
// release_kept_buffers() hands the kept memory back.
#pragma once
#include <cstddef>

namespace pipevd {

class KeptBuffer {
 public:
  explicit KeptBuffer(std::size_t elements);
  ~KeptBuffer() { release(); }
  KeptBuffer(const KeptBuffer&) = delete;
  KeptBuffer& operator=(const KeptBuffer&) = delete;
  KeptBuffer(KeptBuffer&& other) noexcept
      : data_(other.data_), bytes_(other.bytes_), slot_(other.slot_), fresh_(other.fresh_) {
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
};

// Frees the memory kept between calls (buffers in use stay).
void release_kept_buffers();
// Bytes kept between calls now (the slots' memory, busy or not).
std::size_t kept_bytes();

}  // namespace pipevd
