#include "bench/broadcast.hpp"

#include <algorithm>

namespace pipevd::bench {

void broadcast_doubles(double* data, std::size_t count, int root, MPI_Comm comm,
                       std::size_t chunk) {
  chunk = std::clamp<std::size_t>(chunk, 1, kBroadcastChunk);
  for (std::size_t at = 0; at < count; at += chunk) {
    const int part = static_cast<int>(std::min(chunk, count - at));
    MPI_Bcast(data + at, part, MPI_DOUBLE, root, comm);
  }
}

void broadcast_string(std::string& s, int root, MPI_Comm comm) {
  int length = static_cast<int>(s.size());
  MPI_Bcast(&length, 1, MPI_INT, root, comm);
  s.resize(length);
  if (length > 0) MPI_Bcast(&s[0], length, MPI_CHAR, root, comm);
}

}  // namespace pipevd::bench
