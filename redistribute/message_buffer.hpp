// Packed messages: uninitialised (every element is written by the pack or by MPI before it is
// read), large ones on transparent huge pages where the kernel offers them. The memory of the
// last buffers is kept for the next redistribution (an application calls PDSYEVD again and
// again), so that a call does not pay the kernel for fresh zeroed pages each time;
// release_message_buffers() hands it back.
#pragma once
#include <cstddef>

namespace pipevd {

class MessageBuffer {
 public:
  explicit MessageBuffer(std::size_t elements);
  ~MessageBuffer() { release(); }
  MessageBuffer(const MessageBuffer&) = delete;
  MessageBuffer& operator=(const MessageBuffer&) = delete;

  double* data() { return data_; }
  void release();

 private:
  double* data_ = nullptr;
  int slot_ = -1;  // the kept memory it uses, -1 if its own
};

// Frees the memory kept between redistributions (buffers in use stay).
void release_message_buffers();

}  // namespace pipevd
