// The device's preparation (interface/device_preparation.hpp) with stand-in device steps, so that
// its protocol runs without a GPU: a whole growth is joined before the engine starts; a staged one
// lets the engine start after its first step while the second still runs, is joined by
// finish_rest, and grows a pool that DBBR already draws on only by what it lacks of the peak; the
// timeline holds device_pool and, staged, device_pool_rest; a preparation given no growth ends.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/pool_growth.hpp"
#include "core/timeline.hpp"
#include "interface/device_preparation.hpp"

namespace pipevd {
namespace {

constexpr long MiB = 1L << 20;

// A pool with no free range: every growth maps what it asks for. The second step may be held
// until the test lets it go.
struct StandInDevice {
  std::mutex m;
  long reserved = 0;
  std::vector<std::string> steps;
  std::promise<void> let_rest_go;
  std::shared_future<void> rest_may_go = let_rest_go.get_future().share();
  bool hold_rest = false;          // the second step waits for let_rest_go
  bool wait_until_needed = false;  // the second step waits for the engine's need
  std::atomic<bool> rest_done{false};
  bool rest_waited_too_long = false;

  DeviceSteps steps_for_test() {
    DeviceSteps s;
    s.prepare_context = [this](int) { note("context"); };
    s.preload_kernels = [this](int) { note("preload"); };
    s.grow_pool = [this](int, long bytes) {
      std::lock_guard<std::mutex> lock(m);
      reserved += bytes;
      steps.push_back("grow " + std::to_string(bytes / MiB));
    };
    s.grow_pool_to = [this](int, long peak, const std::function<bool()>& needed) {
      if (hold_rest)
        rest_waited_too_long =
            rest_may_go.wait_for(std::chrono::seconds(60)) != std::future_status::ready;
      if (wait_until_needed) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!needed() && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        rest_waited_too_long = !needed();
      }
      std::lock_guard<std::mutex> lock(m);
      const long rest = pool_rest_bytes(peak, reserved);
      reserved += rest;
      steps.push_back("grow_to " + std::to_string(peak / MiB) + " by " +
                      std::to_string(rest / MiB));
      rest_done = true;
    };
    s.pool_reserved = [this](int) {
      std::lock_guard<std::mutex> lock(m);
      return reserved;
    };
    return s;
  }
  void note(const char* step) {
    std::lock_guard<std::mutex> lock(m);
    steps.push_back(step);
  }
  // DBBR's allocations beyond the first step's mapping (the first step's memory is in use).
  void dbbr_maps(long bytes) {
    std::lock_guard<std::mutex> lock(m);
    reserved += bytes;
  }
};

std::vector<std::string> stages_on(const Timeline& t, const std::string& thread) {
  std::vector<std::string> stages;
  for (const TimelineInterval& i : t.intervals())
    if (i.thread == thread) stages.push_back(i.stage);
  return stages;
}

TEST(DevicePreparation, WholeGrowthJoinedBeforeTheEngine) {
  StandInDevice device;
  Timeline timeline;
  timeline.start(MPI_COMM_SELF);
  {
    DevicePreparation p(device.steps_for_test());
    p.start(0, false, MPI_COMM_NULL, 0, true);
    p.give_pool_growth(plan_pool_growth(false, 512 * MiB, 128 * MiB, 64 * MiB, 8192 * MiB));
    p.finish(&timeline);
    {
      // The kernels load in a thread of their own, beside the growth: in either order.
      std::lock_guard<std::mutex> lock(device.m);
      std::vector<std::string> done = device.steps;
      std::sort(done.begin(), done.end());
      EXPECT_EQ(done, (std::vector<std::string>{"context", "grow 512", "preload"}))
          << "the threads are joined: every step done";
      EXPECT_EQ(device.reserved, 512 * MiB);
    }
    EXPECT_FALSE(device.rest_done);
    p.finish_rest(&timeline);
    const PoolGrowthRecord& r = p.pool_growth_record();
    EXPECT_TRUE(r.made);
    EXPECT_FALSE(r.growth.staged);
    EXPECT_EQ(r.reserved_before, 0);
    EXPECT_EQ(r.reserved_after, 512 * MiB);
    EXPECT_EQ(last_pool_growth().reserved_after, 512 * MiB);
  }
  EXPECT_EQ(stages_on(timeline, "prepare"),
            (std::vector<std::string>{"device_context", "device_pool"}));
  EXPECT_EQ(stages_on(timeline, "preload"), (std::vector<std::string>{"kernel_preload"}));
}

TEST(DevicePreparation, StagedGrowthLetsTheEngineStartAfterTheFirstStep) {
  StandInDevice device;
  device.hold_rest = true;
  Timeline timeline;
  timeline.start(MPI_COMM_SELF);
  DevicePreparation p(device.steps_for_test());
  p.start(0, false, MPI_COMM_NULL, 0, false);
  const PoolGrowth growth = plan_pool_growth(true, 512 * MiB, 128 * MiB, 64 * MiB, 8192 * MiB);
  ASSERT_TRUE(growth.staged);
  p.give_pool_growth(growth);
  p.finish(&timeline);  // returns while the second step is held
  EXPECT_FALSE(device.rest_done);
  {
    std::lock_guard<std::mutex> lock(device.m);
    EXPECT_GE(device.reserved, 128 * MiB) << "the first step is done";
  }
  EXPECT_EQ(stages_on(timeline, "prepare"),
            (std::vector<std::string>{"device_context", "device_pool"}));
  device.dbbr_maps(32 * MiB);  // DBBR draws past the first step before the second one runs
  device.let_rest_go.set_value();
  p.finish_rest(&timeline);
  EXPECT_FALSE(device.rest_waited_too_long) << "finish waited for the second step";
  EXPECT_TRUE(device.rest_done);
  {
    std::lock_guard<std::mutex> lock(device.m);
    EXPECT_EQ(device.steps,
              (std::vector<std::string>{"context", "grow 128", "grow_to 512 by 352"}));
    EXPECT_EQ(device.reserved, 512 * MiB) << "the second step maps only what the pool lacks";
  }
  EXPECT_EQ(stages_on(timeline, "prepare"),
            (std::vector<std::string>{"device_context", "device_pool", "device_pool_rest"}));
  const PoolGrowthRecord r = last_pool_growth();
  EXPECT_TRUE(r.made);
  EXPECT_TRUE(r.growth.staged);
  EXPECT_EQ(r.growth.first_bytes, 128 * MiB);
  EXPECT_EQ(r.growth.peak_bytes, 512 * MiB);
  EXPECT_EQ(r.reserved_before, 0);
  EXPECT_EQ(r.reserved_after, 512 * MiB);
  // Once: the route calls it again after the engine, which joined it at DBBR's end.
  p.finish_rest(&timeline);
  EXPECT_EQ(stages_on(timeline, "prepare").size(), 3u);
}

// A preparation started with a staged growth (128 MiB first, 512 MiB peak) and finished, so that
// only its second step is left.
void start_staged(DevicePreparation& p) {
  p.start(0, false, MPI_COMM_NULL, 0, false);
  p.give_pool_growth(plan_pool_growth(true, 512 * MiB, 128 * MiB, 64 * MiB, 8192 * MiB));
  p.finish(nullptr);
}

// The second step may wait for DBBR's draws on the pool (gpu_grow_pool_to): finish_rest, where the
// engine needs the memory, tells it so before joining it.
TEST(DevicePreparation, FinishRestTellsTheSecondStepTheEngineNeedsIt) {
  StandInDevice device;
  device.wait_until_needed = true;
  DevicePreparation p(device.steps_for_test());
  start_staged(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(device.rest_done) << "the second step did not wait";
  p.finish_rest(nullptr);
  EXPECT_TRUE(device.rest_done);
  EXPECT_FALSE(device.rest_waited_too_long);
  EXPECT_TRUE(p.pool_growth_record().made);
}

// A route that stops after the engine's start but before finish_rest (a failure agreed between
// them): the second step is told the memory is needed, and the preparation ends.
TEST(DevicePreparation, EndsWhereFinishRestIsNotReached) {
  StandInDevice device;
  device.wait_until_needed = true;
  {
    DevicePreparation p(device.steps_for_test());
    start_staged(p);
  }
  EXPECT_TRUE(device.rest_done);
  EXPECT_FALSE(device.rest_waited_too_long);
}

// The route's steps may end before the plan (a failure): the thread is given nothing to grow and
// ends with the preparation.
TEST(DevicePreparation, EndsWithoutAGrowthGiven) {
  StandInDevice device;
  {
    DevicePreparation p(device.steps_for_test());
    p.start(0, false, MPI_COMM_NULL, 0, false);
  }
  std::lock_guard<std::mutex> lock(device.m);
  EXPECT_EQ(device.steps, (std::vector<std::string>{"context", "grow 0"}));
  EXPECT_EQ(device.reserved, 0);
}

}  // namespace
}  // namespace pipevd
