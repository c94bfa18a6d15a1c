// The large host buffers kept between calls (redistribute/kept_buffer.hpp) and the population of
// their fresh memory (base/page_population.hpp): a fresh buffer says so and is not resident until
// populated (the unpack's writes would fault it in page by page), a population in its own thread
// backs every page by the time finish() returns, whichever side took the pieces, and a dropped
// one joins its thread; a kept buffer comes back, not fresh, with its contents' pages, and
// release_kept_buffers hands the memory back. A buffer asked to has its slot pinned after its
// release, once, in a thread of its own (a recording pinning stands in for the GPU's), and the
// slot is unpinned before its memory goes back, after a registration still running has ended.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/page_population.hpp"
#include "redistribute/kept_buffer.hpp"
#include "tests/support/resident_pages.hpp"

namespace pipevd {
namespace {

using test::resident_share;

constexpr std::size_t kElements = std::size_t(48) << 17;  // 48 MiB of doubles

TEST(KeptBufferTest, FreshBufferSaysSoAndIsNotResident) {
  release_kept_buffers();
  KeptBuffer lazy(kElements);
  ASSERT_NE(lazy.data(), nullptr);
  EXPECT_TRUE(lazy.fresh());
  EXPECT_GE(lazy.bytes(), kElements * sizeof(double));
  EXPECT_LT(resident_share(lazy.data(), kElements * sizeof(double)), 0.5);
  KeptBuffer small(1000);  // malloc's: never fresh
  EXPECT_FALSE(small.fresh());
  KeptBuffer none(0);
  EXPECT_FALSE(none.fresh());
  lazy.release();
  EXPECT_FALSE(lazy.fresh());
  release_kept_buffers();
  EXPECT_EQ(kept_bytes(), 0u);
}

TEST(KeptBufferTest, PopulationBacksEveryPageByItsFinish) {
  for (int threads : {1, 3}) {
    for (int finishers : {1, 2}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(finishers) +
                   " finishing");
      release_kept_buffers();
      KeptBuffer a(kElements);
      ASSERT_TRUE(a.fresh());
      PagePopulation population;
      EXPECT_FALSE(population.started());
      population.start(a.data(), static_cast<long>(a.bytes()), threads);
      EXPECT_TRUE(population.started());
      EXPECT_TRUE(population.finish(finishers));
      EXPECT_FALSE(population.running());
      EXPECT_EQ(resident_share(a.data(), a.bytes()), 1.0);
      EXPECT_GE(population.end(), population.begin());
      EXPECT_TRUE(population.finish(finishers));  // again: nothing more
      // Populated pages read as zeros (fresh anonymous memory), and are writable.
      EXPECT_EQ(a.data()[0], 0.0);
      EXPECT_EQ(a.data()[kElements - 1], 0.0);
      a.data()[kElements / 2] = 1.5;
    }
  }
  release_kept_buffers();
}

// Dropped unfinished (an exception past it): its thread is joined, whatever it backed by then.
TEST(KeptBufferTest, DroppedPopulationJoinsItsThread) {
  release_kept_buffers();
  KeptBuffer a(kElements);
  {
    PagePopulation population;
    population.start(a.data(), static_cast<long>(a.bytes()), 2);
  }
  a.data()[7] = 2.0;  // the pages not backed fault in as ever
  EXPECT_EQ(a.data()[7], 2.0);
  a.release();
  release_kept_buffers();
}

TEST(KeptBufferTest, KeptMemoryComesBackWithItsPages) {
  release_kept_buffers();
  double* first = nullptr;
  {
    KeptBuffer a(kElements);
    EXPECT_TRUE(a.fresh());
    PagePopulation population;
    population.start(a.data(), static_cast<long>(a.bytes()), 2);
    population.finish(2);
    first = a.data();
    a.data()[7] = 3.25;
  }
  EXPECT_GE(kept_bytes(), kElements * sizeof(double));
  KeptBuffer again(kElements / 2);  // fits the kept slot: the same memory, not remapped
  EXPECT_FALSE(again.fresh());
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.data()[7], 3.25);
  EXPECT_EQ(resident_share(again.data(), kElements / 2 * sizeof(double)), 1.0);
  again.release();
  release_kept_buffers();
  EXPECT_EQ(kept_bytes(), 0u);
}

// What the pinning saw, in order: ("pin" | "unpin", address); pin answers `accept` (or throws)
// once the gate is open, unpin answers `unpinned`.
struct PinningRecord {
  std::mutex mutex;
  std::condition_variable opened;
  std::vector<std::pair<std::string, const void*>> events;
  std::size_t pinned_bytes = 0;
  bool accept = true;
  bool closed = false;  // pin waits (before it records) until the test opens the gate
  bool throws = false;
  bool unpinned = true;
};
PinningRecord& record() {
  static PinningRecord r;
  return r;
}

// Installs the recording pinning for one test, uninstalled (nothing pinned left) at its end.
class RecordedPinning {
 public:
  explicit RecordedPinning(bool accept = true, bool closed = false, bool throws = false) {
    release_kept_buffers();
    {
      PinningRecord& r = record();
      std::lock_guard<std::mutex> lock(r.mutex);
      r.events.clear();
      r.accept = accept;
      r.closed = closed;
      r.throws = throws;
      r.unpinned = true;
    }
    // Not under the record's lock: unpin takes it under the kept memory's lock.
    set_kept_memory_pinning({pin, unpin});
  }
  ~RecordedPinning() {
    open();
    release_kept_buffers();
    set_kept_memory_pinning({});
  }
  // Lets pins waiting at the gate go on.
  static void open() {
    {
      std::lock_guard<std::mutex> lock(record().mutex);
      record().closed = false;
    }
    record().opened.notify_all();
  }
  static std::vector<std::pair<std::string, const void*>> events() {
    std::lock_guard<std::mutex> lock(record().mutex);
    return record().events;
  }

 private:
  static bool pin(void* p, std::size_t bytes) {
    PinningRecord& r = record();
    std::unique_lock<std::mutex> lock(r.mutex);
    r.opened.wait(lock, [&] { return !r.closed; });
    // The slot's whole memory is there to register (read only: a buffer may be using it).
    (void)static_cast<volatile char*>(p)[0];
    (void)static_cast<volatile char*>(p)[bytes - 1];
    r.events.emplace_back("pin", p);
    if (r.throws) throw std::runtime_error("pin");
    return r.accept;
  }
  static bool unpin(void* p) {
    std::lock_guard<std::mutex> lock(record().mutex);
    record().events.emplace_back("unpin", p);
    return record().unpinned;
  }
};

using Events = std::vector<std::pair<std::string, const void*>>;

TEST(KeptBufferPinning, SlotPinnedOnceAfterReleaseAndUnpinnedBeforeItsFree) {
  RecordedPinning pinning;
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* p = a.data();
  const std::size_t bytes = a.bytes();
  a.release();
  wait_for_kept_pinning();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}}));
  EXPECT_EQ(kept_pinned_bytes(), bytes);
  const KeptPinning last = last_kept_pinning();
  EXPECT_EQ(last.bytes, bytes);
  EXPECT_TRUE(last.pinned);
  EXPECT_GE(last.seconds, 0.0);
  KeptBuffer again(kElements, KeptFor::DeviceCopies);  // the same slot: pinned already, not again
  EXPECT_EQ(again.data(), p);
  EXPECT_FALSE(again.fresh());
  again.release();
  wait_for_kept_pinning();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}}));
  release_kept_buffers();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}, {"unpin", p}}));
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  EXPECT_EQ(kept_bytes(), 0u);
}

TEST(KeptBufferPinning, UnaskedSmallOrOwnMemoryIsNotPinned) {
  RecordedPinning pinning;
  KeptBuffer unasked(kElements);
  unasked.release();
  KeptBuffer small(1000, KeptFor::DeviceCopies);  // malloc's, no slot
  small.release();
  wait_for_kept_pinning();
  EXPECT_TRUE(RecordedPinning::events().empty());
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  // Every slot busy: the fifth buffer has memory of its own, freed at its release, never pinned.
  std::vector<KeptBuffer> held;
  for (int i = 0; i < 4; ++i) held.emplace_back(kElements);
  KeptBuffer own(kElements, KeptFor::DeviceCopies);
  own.release();
  wait_for_kept_pinning();
  EXPECT_TRUE(RecordedPinning::events().empty());
}

TEST(KeptBufferPinning, NoPinningInstalledPinsNothing) {
  release_kept_buffers();
  set_kept_memory_pinning({});
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  a.release();
  wait_for_kept_pinning();
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  release_kept_buffers();
}

// A larger buffer grows the pinned slot: its old memory is unpinned, then freed; the new memory
// is pinned at its own release.
TEST(KeptBufferPinning, GrownSlotUnpinsItsOldMemoryFirst) {
  RecordedPinning pinning;
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* old = a.data();
  a.release();
  wait_for_kept_pinning();
  KeptBuffer larger(2 * kElements, KeptFor::DeviceCopies);
  const void* grown = larger.data();
  EXPECT_TRUE(larger.fresh());
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", old}, {"unpin", old}}));
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  larger.release();
  wait_for_kept_pinning();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", old}, {"unpin", old}, {"pin", grown}}));
  EXPECT_EQ(kept_pinned_bytes(), kept_bytes());
}

// A refused registration leaves the slot pageable and is not tried again; nothing to unpin.
TEST(KeptBufferPinning, RefusedPinningIsNotRetried) {
  RecordedPinning pinning(/*accept=*/false);
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* p = a.data();
  a.release();
  wait_for_kept_pinning();
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  EXPECT_FALSE(last_kept_pinning().pinned);
  KeptBuffer again(kElements, KeptFor::DeviceCopies);
  again.release();
  wait_for_kept_pinning();
  release_kept_buffers();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}}));
}

// The next call does not wait for a registration: it takes the slot while the pinning runs (held
// at the gate until the test opens it, so no timing is assumed: a constructor that waited would
// not be ready within the generous bound). The slot's memory goes back only after the
// registration has ended, then unpinned.
TEST(KeptBufferPinning, RunningRegistrationNeitherBlocksReuseNorRacesTheFree) {
  RecordedPinning pinning(/*accept=*/true, /*closed=*/true);
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* p = a.data();
  a.release();
  auto taking = std::async(std::launch::async, [] { return KeptBuffer(kElements); });
  const bool taken = taking.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  EXPECT_TRUE(taken) << "the constructor waited for the running registration";
  if (!taken) RecordedPinning::open();
  KeptBuffer next = taking.get();
  EXPECT_EQ(next.data(), p);
  next.data()[5] = 4.5;  // written while it is being registered
  if (taken) {
    EXPECT_TRUE(RecordedPinning::events().empty());
  }
  RecordedPinning::open();
  next.release();
  release_kept_buffers();  // waits for the registration, then unpins and frees
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}, {"unpin", p}}));
  EXPECT_EQ(kept_bytes(), 0u);
}

// A larger buffer that must grow a slot whose registration runs waits for it, then unpins the old
// memory before its free; meanwhile release_kept_buffers leaves that slot (busy) alone.
TEST(KeptBufferPinning, GrowingASlotWaitsForItsRunningRegistration) {
  RecordedPinning pinning(/*accept=*/true, /*closed=*/true);
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* old = a.data();
  a.release();
  auto growing = std::async(std::launch::async, [] { return KeptBuffer(2 * kElements); });
  // Not ready while the gate is closed (a constructor that did not wait could be, or might not
  // yet be: this direction cannot fail spuriously).
  EXPECT_EQ(growing.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  release_kept_buffers();  // the slot is busy: left to the constructor, nothing waited for
  EXPECT_TRUE(RecordedPinning::events().empty());
  RecordedPinning::open();
  KeptBuffer larger = growing.get();
  EXPECT_TRUE(larger.fresh());
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", old}, {"unpin", old}}));
  EXPECT_EQ(kept_pinned_bytes(), 0u);
}

// A failed allocation after the slot's old memory went (unpinned) leaves the slot free and empty.
TEST(KeptBufferPinning, FailedGrowthLeavesTheSlotFreeAndUnpinned) {
  RecordedPinning pinning;
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* p = a.data();
  a.release();
  wait_for_kept_pinning();
  // 4 EiB: past any address space, whatever the overcommit policy.
  EXPECT_THROW(KeptBuffer huge(std::size_t(1) << 59), std::bad_alloc);
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}, {"unpin", p}}));
  EXPECT_EQ(kept_bytes(), 0u);
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  std::vector<KeptBuffer> all;  // every slot can be taken again
  for (int i = 0; i < 4; ++i) all.emplace_back(kElements);
  EXPECT_EQ(kept_bytes(), 4 * all[0].bytes());
}

// A pinning that throws is a refused one: the slot stays unpinned, nothing to undo.
TEST(KeptBufferPinning, ThrowingPinningCountsAsRefused) {
  RecordedPinning pinning(/*accept=*/true, /*closed=*/false, /*throws=*/true);
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  const void* p = a.data();
  a.release();
  wait_for_kept_pinning();
  EXPECT_EQ(kept_pinned_bytes(), 0u);
  release_kept_buffers();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}}));
}

// Memory whose unpinning failed is not handed back: new memory at its address would pass for the
// old registration. The slot forgets it; it stays mapped, with its contents.
TEST(KeptBufferPinning, FailedUnpinningLeavesTheMemoryMapped) {
  RecordedPinning pinning;
  KeptBuffer a(kElements, KeptFor::DeviceCopies);
  double* const p = a.data();
  p[kElements - 1] = 6.5;
  a.release();
  wait_for_kept_pinning();
  {
    std::lock_guard<std::mutex> lock(record().mutex);
    record().unpinned = false;
  }
  release_kept_buffers();
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", p}, {"unpin", p}}));
  EXPECT_EQ(kept_bytes(), 0u);
  EXPECT_EQ(p[kElements - 1], 6.5);  // still mapped: reading it does not fault
}

// Buffers for device copies take the pinned slot, the others the pageable one, whichever comes
// first, so that a call's message buffers do not take the engine's pinned memory.
TEST(KeptBufferPinning, DeviceCopiesTakePinnedSlotsAndOthersLeaveThem) {
  RecordedPinning pinning;
  const void* pinned = nullptr;
  const void* pageable = nullptr;
  {
    KeptBuffer d(kElements, KeptFor::DeviceCopies), h(kElements);
    pinned = d.data();
    pageable = h.data();
  }
  wait_for_kept_pinning();
  ASSERT_EQ(RecordedPinning::events(), (Events{{"pin", pinned}}));
  for (const bool host_first : {true, false}) {
    SCOPED_TRACE(host_first ? "host buffer first" : "device buffer first");
    KeptBuffer first(kElements, host_first ? KeptFor::Host : KeptFor::DeviceCopies);
    KeptBuffer second(kElements, host_first ? KeptFor::DeviceCopies : KeptFor::Host);
    KeptBuffer& host = host_first ? first : second;
    KeptBuffer& device = host_first ? second : first;
    EXPECT_EQ(host.data(), pageable);
    EXPECT_EQ(device.data(), pinned);
  }
  EXPECT_EQ(RecordedPinning::events(), (Events{{"pin", pinned}}));
}

}  // namespace
}  // namespace pipevd
