// A communicator's rank and size as values: MPI returns them through pointers.
#pragma once
#include <mpi.h>

namespace pipevd {

inline int rank_in(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline int size_of(MPI_Comm comm) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

}  // namespace pipevd
