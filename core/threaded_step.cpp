#include "core/threaded_step.hpp"

#include <exception>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/fault_injection.hpp"

namespace pipevd {

void ThreadedStep::start(const char* step, int rank, std::function<void()> work) {
  if (thread_.joinable() || ran_) throw std::logic_error("ThreadedStep: started twice");
  step_ = step;
  rank_ = rank;
  work_ = std::move(work);
  try {
    thread_ = JoiningThread([this] { run(); });
  } catch (const std::system_error& e) {
    failure_ = failure_of(e);
  }
}

void ThreadedStep::run() noexcept {
  ran_ = true;
  begin_ = std::chrono::steady_clock::now();
  try {
    work_();
    inject_fault(step_.c_str(), rank_);
  } catch (...) {
    failure_ = failure_of(std::current_exception());
  }
  end_ = std::chrono::steady_clock::now();
}

void ThreadedStep::agree(MPI_Comm engine) {
  thread_.join();
  const Failure held = std::exchange(failure_, Failure{});
  agree_on_failure(engine, held);
}

}  // namespace pipevd
