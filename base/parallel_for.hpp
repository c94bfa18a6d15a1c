// Work shared over threads: the one parallel_for of the library (redistribution's packing and
// copies, the D&C's merges, the engine rank's scaling), its chunked and timed forms, and a copy in
// pieces. The calling thread is always one of the workers; an exception of f on any thread stops
// the loop and is rethrown in the calling thread once every worker has been joined.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "base/worker_pool.hpp"

namespace pipevd {

// f(i) for i in [0, count) on up to `threads` threads (this one included), dynamically shared.
template <class F>
void parallel_for(long count, int threads, F&& f) {
  if (threads <= 1 || count <= 1) {
    for (long i = 0; i < count; ++i) f(i);
    return;
  }
  std::atomic<long> next{0};
  WorkerPool pool;
  auto work = [&] {
    for (long i = next++; i < count && !pool.failed(); i = next++) f(i);
  };
  pool.start(std::min<long>(threads, count) - 1, work);
  pool.guarded(work);
  pool.join();  // rethrows a worker's exception
}

// f(begin, end) over [0, count) in chunks of `grain` (the last one shorter), on up to `threads`
// threads; one call f(0, count) where a single thread would do it all, so that f's per-call setup
// is paid once.
template <class F>
void parallel_for_ranges(long count, int threads, long grain, F&& f) {
  if (count <= 0) return;
  grain = std::max(1L, grain);
  const long chunks = (count + grain - 1) / grain;
  const int t = static_cast<int>(std::min<long>(std::max(1, threads), chunks));
  if (t <= 1) {
    f(0L, count);
    return;
  }
  parallel_for(chunks, t, [&](long c) { f(c * grain, std::min(count, (c + 1) * grain)); });
}

// A clock for worker threads (MPI_Wtime belongs to the thread that initialised MPI).
inline double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// parallel_for with, where `timed`, each f(k)'s wall seconds in the result (zeros otherwise).
template <class F>
std::vector<double> timed_parallel_for(long count, int threads, bool timed, F&& f) {
  std::vector<double> seconds(static_cast<size_t>(count), 0.0);
  parallel_for(count, threads, [&](long k) {
    const double t0 = timed ? seconds_now() : 0;
    f(k);
    if (timed) seconds[k] = seconds_now() - t0;
  });
  return seconds;
}

// A copy of `len` doubles split in pieces of 2 MiB shared over up to `threads` threads:
// copy(begin, count) for each piece [begin, begin + count), each piece on one thread.
template <class Copy>
void for_each_copy_piece(long len, int threads, Copy&& copy) {
  constexpr long kPiece = 1L << 18;  // 2 MiB
  if (len <= 0) return;
  parallel_for((len + kPiece - 1) / kPiece, threads, [&](long k) {
    const long begin = k * kPiece;
    copy(begin, std::min(kPiece, len - begin));
  });
}

// dst[0, len) = src[0, len) by memcpy, in pieces on up to `threads` threads.
inline void parallel_memcpy(double* dst, const double* src, long len, int threads) {
  for_each_copy_piece(len, threads, [&](long begin, long count) {
    std::memcpy(dst + begin, src + begin, sizeof(double) * static_cast<size_t>(count));
  });
}

}  // namespace pipevd
