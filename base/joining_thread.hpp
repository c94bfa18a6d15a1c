// A thread joined when it goes out of scope (C++20's std::jthread without the stop token): a throw
// while it runs waits for it instead of destroying a joinable std::thread (std::terminate).
#pragma once
#include <thread>
#include <utility>

namespace pipevd {

class JoiningThread {
 public:
  JoiningThread() = default;
  // As std::thread: f and args decay-copied (moved) into the thread; if the thread cannot be
  // started (std::system_error), those copies are destroyed in the calling thread.
  template <class F, class... Args>
  explicit JoiningThread(F&& f, Args&&... args)
      : t_(std::forward<F>(f), std::forward<Args>(args)...) {}
  JoiningThread(JoiningThread&&) = default;
  JoiningThread& operator=(JoiningThread&& o) noexcept {
    join();
    t_ = std::move(o.t_);
    return *this;
  }
  ~JoiningThread() { join(); }
  void join() {
    if (t_.joinable()) t_.join();
  }
  bool joinable() const { return t_.joinable(); }

 private:
  std::thread t_;
};

}  // namespace pipevd
