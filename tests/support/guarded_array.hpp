// An array whose last element is followed by at least `reach` unreadable bytes (PROT_NONE pages):
// a read past its end faults, wherever an allocator would have placed the array. For tests that
// a routine (or a library under it) reads nothing past the arrays it is given.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>

namespace pipevd::test {

template <class T>
class GuardedArray {
 public:
  GuardedArray(std::size_t count, std::size_t reach) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = (count * sizeof(T) + page - 1) / page * page;
    length_ = bytes + (reach + page - 1) / page * page + page;
    void* base = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED ||
        mprotect(static_cast<char*>(base) + bytes, length_ - bytes, PROT_NONE))
      std::abort();
    base_ = base;
    data_ = reinterpret_cast<T*>(static_cast<char*>(base) + bytes) - count;
  }
  GuardedArray(const GuardedArray&) = delete;
  GuardedArray& operator=(const GuardedArray&) = delete;
  ~GuardedArray() { munmap(base_, length_); }
  T* data() const { return data_; }

 private:
  void* base_ = nullptr;
  std::size_t length_ = 0;
  T* data_ = nullptr;
};

}  // namespace pipevd::test
