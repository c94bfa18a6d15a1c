// ExchangeOptions::before_writes called exactly once per redistribution: where the redistribution
// is about to write its destination first, or, on a path that never gets there (nothing to write,
// an early return, an exception), as it ends.
#pragma once
#include <functional>

namespace pipevd {

class BeforeWrites {
 public:
  explicit BeforeWrites(const std::function<void()>& hook) : hook_(hook) {}
  BeforeWrites(const BeforeWrites&) = delete;
  BeforeWrites& operator=(const BeforeWrites&) = delete;
  // While unwinding, the redistribution's own exception is the one its caller gets.
  ~BeforeWrites() {
    try {
      (*this)();
    } catch (...) {
    }
  }
  void operator()() {
    if (called_) return;
    called_ = true;
    if (hook_) hook_();
  }

 private:
  const std::function<void()>& hook_;
  bool called_ = false;
};

}  // namespace pipevd
