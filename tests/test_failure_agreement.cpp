// core/failure_agreement: each exception's FailureKind, and the agreement over ranks throwing on
// every rank the type of the worst kind any rank brings, with that rank's message.
#include <gtest/gtest.h>
#include <mpi.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "base/errors.hpp"
#include "core/failure_agreement.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd {
namespace {

using test::world_rank;
using test::world_size;

// The agreement keeps the largest kind, so the order is the contract.
static_assert(FailureKind::None < FailureKind::OutOfMemory &&
              FailureKind::OutOfMemory < FailureKind::Communication &&
              FailureKind::Communication < FailureKind::Device &&
              FailureKind::Device < FailureKind::Other);

TEST(FailureAgreement, KindOfEachException) {
  EXPECT_EQ(failure_of(OutOfMemory("m")).kind, FailureKind::OutOfMemory);
  EXPECT_EQ(failure_of(std::bad_alloc()).kind, FailureKind::OutOfMemory);
  EXPECT_EQ(failure_of(CommunicationError("c")).kind, FailureKind::Communication);
  EXPECT_EQ(failure_of(DeviceError("d")).kind, FailureKind::Device);
  EXPECT_EQ(failure_of(ConfigurationError("x")).kind, FailureKind::Other);
  EXPECT_EQ(failure_of(std::runtime_error("r")).kind, FailureKind::Other);
  EXPECT_EQ(failure_of(std::make_exception_ptr(DeviceError("d"))).kind, FailureKind::Device);
  EXPECT_EQ(failure_of(std::make_exception_ptr(42)).kind, FailureKind::Other);
  EXPECT_EQ(failure_of(DeviceError("what")).what, "what");
}

TEST(FailureAgreement, NoneOnAnyRankReturns) {
  EXPECT_NO_THROW(agree_on_failure(MPI_COMM_WORLD, Failure{}));
  EXPECT_NO_THROW(agree_on_failure(MPI_COMM_NULL, Failure{}));
}

// The last rank brings an out-of-memory, the first (where there are two or more) a device error:
// every rank throws the device error with the first rank's message.
TEST(FailureAgreement, WorstKindOnEveryRank) {
  const int rank = world_rank(), last = world_size() - 1;
  Failure mine;
  if (rank == last) mine = {FailureKind::OutOfMemory, "out of memory on the last rank"};
  if (rank == 0 && last > 0) mine = {FailureKind::Device, "device error on rank 0"};
  if (last == 0) {
    EXPECT_THROW(agree_on_failure(MPI_COMM_WORLD, mine), OutOfMemory);
    return;
  }
  try {
    agree_on_failure(MPI_COMM_WORLD, mine);
    ADD_FAILURE() << "no throw";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "device error on rank 0");
  }
}

TEST(FailureAgreement, DeferredFailureKeepsTheFirst) {
  DeferredFailure held;
  int runs = 0;
  if (world_rank() == 0) held.run([] { throw CommunicationError("first"); });
  held.run([&] { ++runs; });
  EXPECT_EQ(runs, world_rank() == 0 ? 0 : 1);
  EXPECT_THROW(held.agree(MPI_COMM_WORLD), CommunicationError);
  EXPECT_NO_THROW(held.agree(MPI_COMM_WORLD));  // none held after an agreement
}

}  // namespace
}  // namespace pipevd
