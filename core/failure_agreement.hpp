// Failures agreed over ranks: a failure on any rank becomes the same typed exception on every rank
// of a communicator, at a point every rank reaches with no collective pending, so that no rank
// goes on alone into collectives the failed one will never join.
#pragma once
#include <mpi.h>

#include <exception>
#include <functional>
#include <string>

namespace pipevd {

// A failure's kind, ordered so that the agreement (the largest over the ranks) keeps the most
// telling one; the agreement reduces the underlying int.
enum class FailureKind : int {
  None = 0,
  OutOfMemory = 1,
  Communication = 2,
  Device = 3,
  Other = 4
};

// A failure's kind and its message.
struct Failure {
  FailureKind kind = FailureKind::None;
  std::string what;
};

// The failure `e` stands for.
Failure failure_of(const std::exception& e);
// The same for a caught exception (not null) held across threads; one that is no std::exception
// is FailureKind::Other.
Failure failure_of(const std::exception_ptr& e);

// Collective over comm: throws, on every rank, the worst failure any rank brings (base/errors.hpp
// type by kind, with that rank's message); returns where none does. MPI_COMM_NULL (a backend bound
// to no communicator, one rank): this rank's failure alone, thrown as such.
void agree_on_failure(MPI_Comm comm, const Failure& mine);

// The end of an engine stage, collective over the engine ranks: `finish` (the stage's
// synchronisation, where an asynchronous device error surfaces) and a test's injected fault for
// `stage` (core/fault_injection), their failure agreed as above.
void finish_stage(MPI_Comm engine, const char* stage, const std::function<void()>& finish);

// Before a stage's messages, collective over the engine ranks: `allocate` (the buffers every rank
// needs to take part) and a test's injected fault for `step`, their failure agreed as above, so
// that a rank that cannot take part says so before the others wait for it in a message.
void agree_on_allocation(MPI_Comm engine, const char* step, const std::function<void()>& allocate);

// A failure held back to the next agreement, for a rank's own work between a stage's messages:
// after the first failure the rank skips its remaining work there but still takes part in every
// message (their buffers allocated before, agreed by agree_on_allocation or as such), so that it
// reaches the agreement with the others instead of leaving them waiting.
class DeferredFailure {
 public:
  // `work` unless a failure is held; the failure (a std::exception) it throws is held.
  template <class Work>
  void run(Work&& work) {
    if (held_.kind != FailureKind::None) return;
    try {
      work();
    } catch (const std::exception& e) {
      held_ = failure_of(e);
    }
  }
  // agree_on_failure over comm with the held failure (none held afterwards where it returns).
  void agree(MPI_Comm comm);

 private:
  Failure held_;
};

}  // namespace pipevd
