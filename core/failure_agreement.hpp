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
// telling one: 0 none, 1 out of memory, 2 communication, 3 device, 4 anything else; and its
// message.
struct Failure {
  int kind = 0;
  std::string what;
};

// The failure `e` stands for.
Failure failure_of(const std::exception& e);

// Collective over comm: throws, on every rank, the worst failure any rank brings (base/errors.hpp
// type by kind, with that rank's message); returns where none does.
void agree_on_failure(MPI_Comm comm, const Failure& mine);

// The end of an engine stage, collective over the engine ranks: `finish` (the stage's
// synchronisation, where an asynchronous device error surfaces) and a test's injected fault for
// `stage` (core/fault_injection), their failure agreed as above.
void finish_stage(MPI_Comm engine, const char* stage, const std::function<void()>& finish);

}  // namespace pipevd
