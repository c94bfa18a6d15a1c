#include "redistribute/message_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace pipevd {

namespace {
constexpr std::size_t kHugePage = std::size_t(2) << 20;
}

MessageBuffer::MessageBuffer(std::size_t elements) {
  if (elements == 0) return;
  std::size_t bytes = elements * sizeof(double);
  if (bytes >= 4 * kHugePage) {
    bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    data_ = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
    if (data_) madvise(data_, bytes, MADV_HUGEPAGE);  // a hint; fine if refused
  } else {
    data_ = static_cast<double*>(std::malloc(bytes));
  }
  if (!data_) throw std::bad_alloc();
}

void MessageBuffer::release() {
  std::free(data_);
  data_ = nullptr;
}

}  // namespace pipevd
