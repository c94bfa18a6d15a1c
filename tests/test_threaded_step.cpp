// core/threaded_step: a step's work in a thread of its own, its failure (the work's, or the
// step's injected fault) thrown on every rank by the agreement after the join, whether or not
// the other ranks started the step.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <thread>

#include "base/errors.hpp"
#include "core/fault_injection.hpp"
#include "core/threaded_step.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd {
namespace {

using test::world_rank;
using test::world_size;

TEST(ThreadedStep, RunsInAThreadOfItsOwnAndAgreesOnNothing) {
  ThreadedStep step;
  std::thread::id ran_on;
  step.start("test_step", world_rank(), [&] { ran_on = std::this_thread::get_id(); });
  EXPECT_NO_THROW(step.agree(MPI_COMM_WORLD));
  EXPECT_TRUE(step.ran());
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_LE(step.begin(), step.end());
}

TEST(ThreadedStep, NotStartedTakesPartInTheAgreement) {
  ThreadedStep step;
  EXPECT_NO_THROW(step.agree(MPI_COMM_WORLD));
  EXPECT_FALSE(step.ran());
}

// The last rank's work runs out of memory; rank 0 (where there are two or more) starts nothing:
// every rank throws the out-of-memory.
TEST(ThreadedStep, OneRanksFailureIsEveryRanks) {
  const int rank = world_rank(), last = world_size() - 1;
  ThreadedStep step;
  if (rank == last)
    step.start("test_step", rank, [] { throw OutOfMemory("out of memory in the thread"); });
  else if (rank != 0)
    step.start("test_step", rank, [] {});
  try {
    step.agree(MPI_COMM_WORLD);
    ADD_FAILURE() << "no throw";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()), "out of memory in the thread");
  }
  EXPECT_NO_THROW(ThreadedStep().agree(MPI_COMM_WORLD)) << "the next agreement is clean";
}

#ifdef PIPEVD_FAULT_INJECTION
// The step's injected fault, thrown in the thread after the work, as agree_on_allocation's.
TEST(ThreadedStep, InjectedFaultAfterTheWork) {
  const int last = world_size() - 1;
  set_fault_injection({"test_step", last, FaultInjection::Device});
  ThreadedStep step;
  bool worked = false;
  step.start("test_step", world_rank(), [&] { worked = true; });
  EXPECT_THROW(step.agree(MPI_COMM_WORLD), DeviceError);
  set_fault_injection({});
  EXPECT_TRUE(worked);
}
#endif

}  // namespace
}  // namespace pipevd
