// Packed messages: uninitialised (every element is written by the pack or by MPI before it is
// read), and large ones on transparent huge pages where the kernel offers them, so that filling a
// fresh buffer does not cost a page fault every 4 KiB.
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
};

}  // namespace pipevd
