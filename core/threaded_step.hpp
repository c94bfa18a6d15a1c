// A step of an engine rank's own work run in a thread of its own while the caller goes on to the
// next stages, its failure agreed over the engine ranks once the thread is joined, as
// agree_on_allocation (core/failure_agreement) agrees a step run in the caller's thread: the work,
// then a test's injected fault for the step (core/fault_injection), their failure held in the
// thread and thrown on every rank by agree(). No MPI in the thread: the caller may have
// MPI_THREAD_SINGLE.
#pragma once
#include <mpi.h>

#include <chrono>
#include <functional>
#include <string>

#include "base/joining_thread.hpp"
#include "core/failure_agreement.hpp"

namespace pipevd {

class ThreadedStep {
 public:
  ThreadedStep() = default;
  ThreadedStep(const ThreadedStep&) = delete;
  ThreadedStep& operator=(const ThreadedStep&) = delete;

  // Starts `work` for `step` on engine rank `rank` (at most once). A thread that cannot be started
  // is the step's failure.
  void start(const char* step, int rank, std::function<void()> work);
  // Collective over `engine`, on every engine rank whether it started the step or not: joins the
  // thread, then agree_on_failure with what it held (nothing where none started).
  void agree(MPI_Comm engine);

  // Whether the work ran, and when (steady clock, for a timeline), once agree() has joined it.
  bool ran() const { return ran_; }
  std::chrono::steady_clock::time_point begin() const { return begin_; }
  std::chrono::steady_clock::time_point end() const { return end_; }

 private:
  void run() noexcept;

  std::string step_;
  int rank_ = 0;
  std::function<void()> work_;
  // Written by the thread, read after the join.
  Failure failure_;
  bool ran_ = false;
  std::chrono::steady_clock::time_point begin_{}, end_{};
  JoiningThread thread_;  // last: joined before anything it writes goes
};

}  // namespace pipevd
