// A pipevd call's hold on the process: one call at a time (the communicator and window caches, the
// kept buffers and each device's stream and handles are shared by every call, and by the grid
// preparation), and the calling thread marked as inside a call, so that the grids ScaLAPACK makes
// there (PDGEMR2D in a forwarded call) are not prepared (interface/grid_preparation.hpp).
#pragma once
#include <mutex>

namespace pipevd {

// Threads that call on different grids at once must still enter in the same order on every
// process (as for any MPI collective).
std::mutex& one_call_at_a_time();

// Whether the calling thread is inside a pipevd call.
bool inside_call();

// Marks the calling thread as inside a pipevd call for its lifetime.
class CallScope {
 public:
  CallScope();
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  bool outer_;  // a call made from inside another (a callback) leaves the mark to the outer one
};

}  // namespace pipevd
