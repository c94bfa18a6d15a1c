// The one all-to-all that moves every piece: packed per-destination buffers, element counts of
// any size. Counts and displacements that fit in an int go through one MPI_Alltoallv; larger ones
// through rounds of MPI_Alltoallw whose per-peer datatypes carry 64-bit offsets, each message at
// most max_message elements.
#pragma once
#include <mpi.h>

#include <vector>

namespace pipevd {

struct ExchangeOptions {
  long int_limit = 2147483647L;  // above this total per rank (on any rank), use the rounds
  long max_message = 1L << 27;   // elements per peer per round (1 GiB of doubles)
};

// Seconds spent in each phase of one redistribution (this process), for benchmarks and logs.
struct PhaseTimes {
  double plan = 0, pack = 0, exchange = 0, unpack = 0;
};

// Collective over comm. send holds the elements for rank r at [sum(send_counts[<r]), +count), and
// recv receives those from rank r likewise. Counts are in doubles.
void exchange(const double* send, const std::vector<long>& send_counts, double* recv,
              const std::vector<long>& recv_counts, MPI_Comm comm,
              const ExchangeOptions& options = {});

}  // namespace pipevd
