#include "core/failure_agreement.hpp"

#include <new>

#include "base/errors.hpp"
#include "core/fault_injection.hpp"

namespace pipevd {

namespace {

[[noreturn]] void throw_failure(int kind, const std::string& what) {
  switch (kind) {
    case 1:
      throw OutOfMemory(what);
    case 2:
      throw CommunicationError(what);
    case 3:
      throw DeviceError(what);
  }
  throw Error(what);
}

int failure_kind(const std::exception& e) {
  if (dynamic_cast<const OutOfMemory*>(&e) || dynamic_cast<const std::bad_alloc*>(&e)) return 1;
  if (dynamic_cast<const CommunicationError*>(&e)) return 2;
  if (dynamic_cast<const DeviceError*>(&e)) return 3;
  return 4;
}

}  // namespace

Failure failure_of(const std::exception& e) { return {failure_kind(e), e.what()}; }

void agree_on_failure(MPI_Comm comm, const Failure& mine) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    int kind, rank;
  } own{mine.kind, rank}, worst{0, 0};
  MPI_Allreduce(&own, &worst, 1, MPI_2INT, MPI_MAXLOC, comm);
  if (worst.kind == 0) return;
  char text[512] = {0};
  if (rank == worst.rank) mine.what.copy(text, sizeof text - 1);
  MPI_Bcast(text, sizeof text, MPI_CHAR, worst.rank, comm);
  throw_failure(worst.kind, text);
}

void finish_stage(MPI_Comm engine, const char* stage, const std::function<void()>& finish) {
  int rank = 0;
  MPI_Comm_rank(engine, &rank);
  Failure mine;
  try {
    finish();
    inject_fault(stage, rank);
  } catch (const std::exception& e) {
    mine = failure_of(e);
  }
  agree_on_failure(engine, mine);
}

}  // namespace pipevd
