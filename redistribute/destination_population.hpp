// An engine rank's fresh buffer for A's columns (kept_buffer.hpp) populated next to the
// redistribution in: its pages backed on a thread of its own from its allocation on
// (base/page_population.hpp), while the redistribution plans (on one node: makes and backs the
// window), and finished on all of the redistribution's threads right before its first write into
// the buffer (ExchangeOptions::before_writes), so that its copies run on backed pages. A kept
// buffer's pages are backed already: then nothing runs.
#pragma once
#include "base/page_population.hpp"
#include "redistribute/exchange.hpp"
#include "redistribute/kept_buffer.hpp"

namespace pipevd {

class DestinationPopulation {
 public:
  // `threads`: the redistribution's. Starts where `buffer` is fresh.
  DestinationPopulation(KeptBuffer& buffer, int threads);
  DestinationPopulation(const DestinationPopulation&) = delete;
  DestinationPopulation& operator=(const DestinationPopulation&) = delete;

  // The redistribution's options into the buffer: a new window backed on the threads this
  // population leaves, and before_writes finishing it (where it runs).
  ExchangeOptions options_for(ExchangeOptions options);
  // The pages still left backed on the redistribution's threads, the thread joined; again:
  // nothing more.
  void finish() { (void)population_.finish(threads_); }

  const PagePopulation& population() const { return population_; }

 private:
  PagePopulation population_;
  int threads_ = 1;
  int own_threads_ = 0;  // the population's while the window is made
};

}  // namespace pipevd
