// A stream of doubles that host threads produce (pack, not merely copy) into two staging chunks in
// turn, each full chunk handed to a transfer that reads it while the threads fill the other: the
// pinned-chunk pipeline of an upload (gpu/pageable_copy.hpp), with the copy engine's calls kept to
// the calling thread. The threads are started once per stream, not once per chunk: a chunk of a
// small matrix takes less time to fill than starting its threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "base/worker_pool.hpp"

namespace pipevd {

// The stream's doubles [0, count) go into chunk[c % 2] for its chunk c (`size` doubles each, the
// last one shorter), in pieces of `piece` doubles (size a multiple of piece) that up to `threads`
// threads (the calling one included) produce: produce(begin, len, dst, worker) writes the stream's
// [begin, begin + len) to dst, worker in [0, threads) naming the thread (0: the calling one), and
// must not throw. Once chunk c is full, send(offset, len, c % 2) hands it on (the stream's
// [offset, offset + len)); it may read the chunk after it returns, until wait_sent(c % 2) has
// returned, which comes before the chunk is filled again. send and wait_sent run on the calling
// thread only. On return every chunk has been sent; the caller waits for the last sends. A throw
// of send or wait_sent (or of produce) stops the threads and is rethrown here.
template <class Produce, class Send, class WaitSent>
void produce_through_two_chunks(long count, double* const chunk[2], long size, long piece,
                                int threads, Produce&& produce, Send&& send, WaitSent&& wait_sent) {
  if (count <= 0) return;
  if (piece <= 0 || size <= 0 || size % piece != 0)
    throw std::invalid_argument("pipevd: a staging chunk must be a whole number of pieces");
  const long chunks = (count + size - 1) / size, per_chunk = size / piece,
             pieces = (count + piece - 1) / piece;
  std::mutex mutex;
  std::condition_variable changed;
  // Under `mutex`: pieces of each chunk still to produce, the chunks that may be written (those
  // below `writable`: chunk c + 2 once chunk c's transfer is done), and how it ended.
  std::vector<long> left(static_cast<std::size_t>(chunks));
  for (long c = 0; c < chunks; ++c) left[c] = std::min(pieces, (c + 1) * per_chunk) - c * per_chunk;
  long writable = 2;
  bool stop = false;
  std::exception_ptr error;
  std::atomic<long> next{0};  // the next piece to take
  std::atomic<int> ids{1};

  auto produce_piece = [&](long k, int worker) {
    const long c = k / per_chunk, begin = k * piece;
    produce(begin, std::min(piece, count - begin), chunk[c % 2] + (begin - c * size), worker);
    std::lock_guard<std::mutex> lock(mutex);
    if (--left[c] == 0) changed.notify_all();
  };
  // A thread of the pool: pieces in stream order, each once its chunk may be written.
  auto work = [&] {
    const int id = ids++;
    try {
      for (long k = next++; k < pieces; k = next++) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          changed.wait(lock, [&] { return stop || k / per_chunk < writable; });
          if (stop) return;
        }
        produce_piece(k, id);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      stop = true;
      changed.notify_all();
    }
  };

  WorkerPool pool;
  try {
    pool.start(std::min<long>(std::max(1, threads), pieces) - 1, work);
    for (long c = 0; c < chunks; ++c) {
      // This thread takes pieces of chunk c too (never of a later one, so that chunk c goes out
      // as soon as it is full), then waits for the pool's.
      const long last = std::min(pieces, (c + 1) * per_chunk);
      for (;;) {
        long k = next.load();
        if (k < last) {
          if (next.compare_exchange_weak(k, k + 1)) produce_piece(k, 0);
          continue;
        }
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return left[c] == 0 || error; });
        if (error) std::rethrow_exception(error);
        break;
      }
      send(c * size, std::min(size, count - c * size), static_cast<int>(c % 2));
      // Chunk c + 1 fills the buffer of chunk c - 1: once that one's transfer is done.
      if (c >= 1 && c + 1 < chunks) {
        wait_sent(static_cast<int>((c - 1) % 2));
        std::lock_guard<std::mutex> lock(mutex);
        writable = c + 2;
        changed.notify_all();
      }
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
      changed.notify_all();
    }
    pool.join();  // the workers' own throws were kept in `error`
    throw;
  }
  pool.join();
}

}  // namespace pipevd
