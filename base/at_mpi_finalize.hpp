// fn() run inside MPI_Finalize, before MPI is torn down: MPI_Finalize deletes MPI_COMM_SELF's
// attributes first, in the reverse order they were set, and this sets one whose deletion calls fn.
// For the library's threads and caches that must end while MPI and the CUDA runtime still work
// (a static destructor would run after the runtime's teardown).
#pragma once
#include <mpi.h>

namespace pipevd {

inline void run_at_mpi_finalize(void (*fn)()) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(
      MPI_COMM_NULL_COPY_FN,
      [](MPI_Comm, int, void*, void* extra) -> int {
        reinterpret_cast<void (*)()>(extra)();
        return MPI_SUCCESS;
      },
      &keyval, reinterpret_cast<void*>(fn));
  MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
}

}  // namespace pipevd
