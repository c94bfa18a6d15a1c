#include "core/failure_agreement.hpp"

#include <new>
#include <utility>

#include "base/errors.hpp"
#include "core/fault_injection.hpp"

namespace pipevd {

namespace {

[[noreturn]] void throw_failure(FailureKind kind, const std::string& what) {
  switch (kind) {
    case FailureKind::OutOfMemory:
      throw OutOfMemory(what);
    case FailureKind::Communication:
      throw CommunicationError(what);
    case FailureKind::Device:
      throw DeviceError(what);
    case FailureKind::None:
    case FailureKind::Other:
      break;
  }
  throw Error(what);
}

FailureKind failure_kind(const std::exception& e) {
  if (dynamic_cast<const OutOfMemory*>(&e) || dynamic_cast<const std::bad_alloc*>(&e))
    return FailureKind::OutOfMemory;
  if (dynamic_cast<const CommunicationError*>(&e)) return FailureKind::Communication;
  if (dynamic_cast<const DeviceError*>(&e)) return FailureKind::Device;
  return FailureKind::Other;
}

// `work` and the injected fault for `step` on this rank, their failure agreed over `engine`.
void agree_on_step(MPI_Comm engine, const char* step, const std::function<void()>& work) {
  int rank = 0;
  MPI_Comm_rank(engine, &rank);
  DeferredFailure failure;
  failure.run([&] {
    work();
    inject_fault(step, rank);
  });
  failure.agree(engine);
}

}  // namespace

Failure failure_of(const std::exception& e) { return {failure_kind(e), e.what()}; }

Failure failure_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& caught) {
    return failure_of(caught);
  } catch (...) {
    return {FailureKind::Other, "pipevd: unknown exception"};
  }
}

void agree_on_failure(MPI_Comm comm, const Failure& mine) {
  if (comm == MPI_COMM_NULL) {
    if (mine.kind != FailureKind::None) throw_failure(mine.kind, mine.what);
    return;
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    int kind, rank;
  } own{static_cast<int>(mine.kind), rank}, worst{0, 0};
  MPI_Allreduce(&own, &worst, 1, MPI_2INT, MPI_MAXLOC, comm);
  const auto kind = static_cast<FailureKind>(worst.kind);
  if (kind == FailureKind::None) return;
  char text[512] = {0};
  if (rank == worst.rank) mine.what.copy(text, sizeof text - 1);
  MPI_Bcast(text, sizeof text, MPI_CHAR, worst.rank, comm);
  throw_failure(kind, text);
}

void finish_stage(MPI_Comm engine, const char* stage, const std::function<void()>& finish) {
  agree_on_step(engine, stage, finish);
}

void agree_on_allocation(MPI_Comm engine, const char* step, const std::function<void()>& allocate) {
  agree_on_step(engine, step, allocate);
}

void DeferredFailure::agree(MPI_Comm comm) {
  const Failure held = std::exchange(held_, Failure{});
  agree_on_failure(comm, held);
}

}  // namespace pipevd
