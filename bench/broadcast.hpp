// What one rank holds sent to every rank of a communicator: a host array of any length (a whole
// n x n test matrix of the large runs has more doubles than an MPI count, an int, can name) and a
// short string (a failure's reason, so that every rank learns it).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

namespace pipevd::bench {

// The most doubles one MPI_Bcast of broadcast_doubles sends (1 GiB).
inline constexpr std::size_t kBroadcastChunk = std::size_t{1} << 27;

// data[0 .. count) from `root` to every rank of comm, in MPI_Bcast calls of at most `chunk`
// doubles each (a test makes it small). Collective; every rank passes the same count and chunk
// and a buffer of count doubles.
void broadcast_doubles(double* data, std::size_t count, int root, MPI_Comm comm,
                       std::size_t chunk = kBroadcastChunk);

// `root`'s s on every rank of comm (collective).
void broadcast_string(std::string& s, int root, MPI_Comm comm);

}  // namespace pipevd::bench
