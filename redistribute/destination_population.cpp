#include "redistribute/destination_population.hpp"

#include <algorithm>

namespace pipevd {

DestinationPopulation::DestinationPopulation(KeptBuffer& buffer, int threads)
    : threads_(std::max(1, threads)) {
  if (!buffer.fresh()) return;
  // Half each: both are the kernel zeroing fresh pages, bound by the same memory bandwidth; the
  // window's share is waited for by every process of the node, and whatever is left of the
  // buffer's when the window is done gets every thread at the first write, so neither side's
  // threads sit idle at the end whichever share is larger.
  own_threads_ = std::max(1, threads_ / 2);
  population_.start(buffer.data(), static_cast<long>(buffer.bytes()), own_threads_);
}

ExchangeOptions DestinationPopulation::options_for(ExchangeOptions options) {
  if (!population_.started()) return options;
  options.window_populate_threads = std::max(1, threads_ - own_threads_);
  options.before_writes = [this] { finish(); };
  return options;
}

}  // namespace pipevd
