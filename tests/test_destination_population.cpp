// The engine rank's fresh A buffer populated next to the redistribution in
// (redistribute/destination_population.hpp): its population thread runs from the buffer's
// allocation and is finished by the redistribution's before_writes hook, called exactly once per
// redistribution on every path (the node window pushed or pulled, messages), before anything is
// written into the buffer (every page resident, every entry still the fresh pages' zero); also
// where the redistribution has nothing to write (n = 0) and where it throws, after which no thread
// runs. A kept buffer starts nothing. The columns received are the matrix's.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "redistribute/block_cyclic_to_engine.hpp"
#include "redistribute/destination_population.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_partition.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_window.hpp"
#include "tests/redistribute_support.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/resident_pages.hpp"

namespace pipevd::test {
namespace {

constexpr unsigned kSeed = 23;
constexpr long kN = 300;
// Larger than kept_buffer.hpp's smallest kept size, so that it is fresh memory of its own mapping.
constexpr std::size_t kBufferDoubles = std::size_t(3) << 20;

struct Hooked {
  ExchangeOptions options;
  int calls = 0;
  bool resident = false, untouched = false;
};

// The population's options with the hook wrapped: counts its calls and sees, as it returns, the
// buffer's pages resident and its first `width` columns still unwritten.
void hook(Hooked& h, DestinationPopulation& population, KeptBuffer& buffer, long width,
          ExchangeOptions base) {
  h.options = population.options_for(base);
  const std::function<void()> inner = h.options.before_writes;
  h.options.before_writes = [&h, &population, &buffer, width, inner] {
    ++h.calls;
    if (inner) inner();
    if (!population.population().started()) return;
    EXPECT_FALSE(population.population().running()) << "the population's thread is joined";
    h.resident = resident_share(buffer.data(), buffer.bytes()) == 1.0;
    const double* a = buffer.data();
    h.untouched = std::all_of(a, a + kN * width, [](double v) { return v == 0.0; });
  };
}

class DestinationPopulationTest : public ::testing::Test {
 protected:
  int size = world_size();
};

TEST_F(DestinationPopulationTest, FinishedOnceBeforeTheFirstWriteOnEveryPath) {
  const GridShape shape = squarest_grid(size);
  BlacsGrid blacs(shape.nprow, shape.npcol, 'C');
  const GridInfo grid = GridInfo::of(blacs);
  TestMatrix a(grid, {static_cast<int>(kN), static_cast<int>(kN), 16, 16, 0, 0, 0});
  a.fill([](long i, long j) { return i >= j ? random_symmetric_entry(i, j, kSeed) : nan_value(); });
  for (int g : {size, std::max(1, size - 1)}) {
    const EngineComm& comm = engine_comm_for(grid.ictxt, g);
    const int e = comm.engine_rank;
    EngineLayout layout;
    layout.n = kN;
    layout.col_begin = even_partition(kN, g, 16);
    layout.row_begin = even_partition(kN, g, 16);
    const long width = e >= 0 ? layout.width(e) : 0;
    for (NodeMemory way : {NodeMemory::off, NodeMemory::push, NodeMemory::pull})
      for (int threads : {1, 3}) {
        SCOPED_TRACE("engine ranks " + std::to_string(g) + ", " +
                     (way == NodeMemory::off    ? "messages"
                      : way == NodeMemory::push ? "push"
                                                : "pull") +
                     ", " + std::to_string(threads) + " threads");
        // Fresh buffers and a fresh window each time: the window is made (and backed) while the
        // buffer's thread runs.
        release_kept_buffers();
        release_node_windows();
        KeptBuffer buffer(e >= 0 ? kBufferDoubles : 0);
        EXPECT_EQ(buffer.fresh(), e >= 0);
        DestinationPopulation population(buffer, threads);
        EXPECT_EQ(population.population().started(), e >= 0);
        ExchangeOptions base;
        base.node_memory = way;
        base.threads = threads;
        Hooked h;
        hook(h, population, buffer, width, base);
        block_cyclic_to_engine('L', kN, a.local.data(), 1, 1, a.desc, layout, comm, buffer.data(),
                               h.options);
        EXPECT_EQ(h.calls, 1);
        EXPECT_FALSE(population.population().running());
        if (e < 0) continue;
        EXPECT_TRUE(h.resident) << "every page backed when the hook returns";
        EXPECT_TRUE(h.untouched) << "nothing written before the hook";
        long wrong = 0;
        for (long j = 0; j < width; ++j)
          for (long i = 0; i < kN; ++i)
            if (!(buffer.data()[i + j * kN] ==
                  random_symmetric_entry(i, layout.col_begin[e] + j, kSeed)))
              ++wrong;
        EXPECT_EQ(wrong, 0);
      }
  }
}

TEST_F(DestinationPopulationTest, NothingToWriteOrAThrowStillFinishesIt) {
  const GridShape shape = squarest_grid(size);
  BlacsGrid blacs(shape.nprow, shape.npcol, 'C');
  const GridInfo grid = GridInfo::of(blacs);
  TestMatrix a(grid, {static_cast<int>(kN), static_cast<int>(kN), 16, 16, 0, 0, 0});
  const EngineComm& comm = engine_comm_for(grid.ictxt, size);
  for (bool throws : {false, true}) {
    SCOPED_TRACE(throws ? "a layout that does not match n" : "n = 0");
    release_kept_buffers();
    KeptBuffer buffer(kBufferDoubles);
    DestinationPopulation population(buffer, 2);
    ASSERT_TRUE(population.population().started());
    Hooked h;
    hook(h, population, buffer, 0, ExchangeOptions{});
    EngineLayout layout;
    layout.n = throws ? kN + 1 : 0;
    layout.col_begin = even_partition(layout.n, size, 16);
    layout.row_begin = layout.col_begin;
    const long n = throws ? kN : 0;
    if (throws)
      EXPECT_THROW(block_cyclic_to_engine('L', n, a.local.data(), 1, 1, a.desc, layout, comm,
                                          buffer.data(), h.options),
                   std::invalid_argument);
    else
      block_cyclic_to_engine('L', n, a.local.data(), 1, 1, a.desc, layout, comm, buffer.data(),
                             h.options);
    EXPECT_EQ(h.calls, 1);
    EXPECT_FALSE(population.population().running());
    EXPECT_TRUE(h.resident);
  }
}

// A kept buffer's pages are backed already: no population, and the options keep no hook.
TEST_F(DestinationPopulationTest, KeptBufferStartsNothing) {
  release_kept_buffers();
  { KeptBuffer first(kBufferDoubles); }
  KeptBuffer again(kBufferDoubles);
  EXPECT_FALSE(again.fresh());
  DestinationPopulation population(again, 4);
  EXPECT_FALSE(population.population().started());
  const ExchangeOptions options = population.options_for(ExchangeOptions{});
  EXPECT_FALSE(static_cast<bool>(options.before_writes));
  EXPECT_EQ(options.window_populate_threads, 0);
  again.release();
  release_kept_buffers();
}

}  // namespace
}  // namespace pipevd::test
