// Backing a range of pages in bulk (page_populate.hpp) on a thread of its own, next to other work
// of the thread that starts it (an engine rank's fresh A buffer while the redistribution makes the
// node's window). finish() has the finishing thread and its workers take the pieces still left
// before it joins: whichever side ends first, its threads do not wait idle for the other.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <system_error>

#include "base/joining_thread.hpp"
#include "base/page_populate.hpp"
#include "base/parallel_for.hpp"

namespace pipevd {

class PagePopulation {
 public:
  using Clock = std::chrono::steady_clock;

  PagePopulation() = default;
  PagePopulation(const PagePopulation&) = delete;
  PagePopulation& operator=(const PagePopulation&) = delete;
  // The pieces not begun are dropped (their pages left to the writes), the thread joined: an
  // unwinding caller does not wait for the whole range.
  ~PagePopulation() {
    if (work_) work_->next = work_->pieces.count();
    thread_.join();
  }

  // Once: starts backing [p, p + bytes) in a thread of its own on `threads` workers (that thread
  // included). Where no thread can be had, finish() backs it all.
  void start(void* p, long bytes, int threads) {
    work_ = std::make_unique<Work>(PagePieces(p, bytes));
    try {
      thread_ = JoiningThread([w = work_.get(), threads] { w->take(threads); });
    } catch (const std::system_error&) {
    }
  }

  // The pieces still left taken on `threads` workers (this thread included), then the thread
  // joined; again: nothing more. false where the kernel could not back every page (the writes
  // fault in the rest, as without the population).
  bool finish(int threads) {
    if (!work_) return true;
    work_->take(threads);
    thread_.join();
    return work_->ok;
  }

  bool started() const { return work_ != nullptr; }
  // Whether its thread is still to be joined.
  bool running() const { return thread_.joinable(); }
  // From start() to the last piece backed (once finished).
  Clock::time_point begin() const { return work_ ? work_->begin : Clock::time_point{}; }
  Clock::time_point end() const {
    return work_ ? Clock::time_point(Clock::duration(work_->last.load())) : Clock::time_point{};
  }

 private:
  struct Work {
    explicit Work(const PagePieces& p) : pieces(p), last(begin.time_since_epoch().count()) {}
    // Pieces on up to `threads` workers until none is left.
    void take(int threads) noexcept {
      auto drain = [this](long) {
        bool took = false;
        for (long k = next++; k < pieces.count(); k = next++, took = true)
          if (!pieces.populate(k)) ok = false;
        if (!took) return;
        const Clock::rep now = Clock::now().time_since_epoch().count();
        for (Clock::rep seen = last.load(); seen < now && !last.compare_exchange_weak(seen, now);) {
        }
      };
      try {
        parallel_for(std::max(1, threads), threads, drain);
      } catch (...) {  // no memory for the workers: this thread alone
        drain(0);
      }
    }
    const PagePieces pieces;
    const Clock::time_point begin = Clock::now();
    std::atomic<long> next{0};
    std::atomic<bool> ok{true};
    std::atomic<Clock::rep> last;
  };
  std::unique_ptr<Work> work_;
  JoiningThread thread_;
};

}  // namespace pipevd
