// Threads that share a loop's work and are always joined: a worker's exception is kept (the first
// one), the others stop taking work, and it is rethrown in the calling thread once every worker
// has been joined, instead of std::terminate ending the caller's job. A thread that cannot be
// started leaves its share to the others.
#pragma once
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace pipevd {

class WorkerPool {
 public:
  WorkerPool() = default;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool() { join_all(); }

  // Starts up to `count` threads running guarded(work).
  template <class W>
  void start(long count, W& work) {
    for (long t = 0; t < count; ++t) try {
        threads_.emplace_back([this, &work] { guarded(work); });
      } catch (const std::system_error&) {
        break;
      }
  }
  // Runs w(), keeping its exception.
  template <class W>
  void guarded(W& w) noexcept {
    try {
      w();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  // Whether some work threw: loops stop taking more.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // Joins every thread, then rethrows the first exception, if any.
  void join() {
    join_all();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void join_all() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

}  // namespace pipevd
