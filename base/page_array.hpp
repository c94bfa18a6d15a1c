// A large host array straight from the kernel (mmap) and straight back to it when destroyed
// (munmap). For per-call arrays allocated by a short-lived thread, such as rank 0's D&C: malloc
// would take them from that thread's arena, whose free top neither free() (below glibc's dynamic
// trim threshold, up to 64 MiB) nor malloc_trim() hands back, so they would stay resident after
// the call and after pipevd_release().
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace pipevd {

constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

// What allocate_pages maps for `bytes`: with `huge`, whole huge pages (the kernel rounds the rest
// to its pages itself).
inline std::size_t mapped_bytes(std::size_t bytes, bool huge) {
  return huge ? (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes : bytes;
}

// `bytes` of zeroed pages; throws std::bad_alloc where the kernel has none. With `huge`, on 2 MiB
// boundaries and marked for transparent huge pages (a hint; fine if refused).
inline void* allocate_pages(std::size_t bytes, bool huge = false) {
  const std::size_t size = mapped_bytes(bytes, huge), extra = huge ? kHugePageBytes : 0;
  void* p = mmap(nullptr, size + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (!huge) return p;
  // The unaligned head and the tail past `size` back to the kernel.
  char* raw = static_cast<char*>(p);
  const std::size_t head =
      (kHugePageBytes - reinterpret_cast<std::size_t>(raw) % kHugePageBytes) % kHugePageBytes;
  if (head) munmap(raw, head);
  if (extra - head) munmap(raw + head + size, extra - head);
  madvise(raw + head, size, MADV_HUGEPAGE);
  return raw + head;
}

// `bytes` and `huge` as allocate_pages was given them.
inline void free_pages(void* p, std::size_t bytes, bool huge = false) {
  if (p) munmap(p, mapped_bytes(bytes, huge));
}

// Zero-filled. Below 1 MiB from malloc: a thread's arena keeps little of that, and a system call
// per small array would cost the small calls.
template <class T>
class PageArray {
 public:
  PageArray() = default;
  explicit PageArray(std::size_t count) : size_(count) {
    if (count == 0) return;
    void* p = small() ? std::calloc(count, sizeof(T)) : allocate_pages(count * sizeof(T));
    if (!p) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
  }
  ~PageArray() { reset(); }
  PageArray(const PageArray&) = delete;
  PageArray& operator=(const PageArray&) = delete;
  PageArray(PageArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PageArray& operator=(PageArray&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void reset() {
    if (small())
      std::free(data_);
    else
      free_pages(data_, size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
  }

 private:
  bool small() const { return size_ * sizeof(T) < (std::size_t(1) << 20); }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pipevd
