// The engine's NCCL communicators: one per (MPI communicator, device), made once and kept between
// calls. A first call can make its communicator in the thread that readies the device beside the
// redistribution (begin_nccl_communicator), connections opened there too, instead of in the
// engine's set-up and first messages.
#pragma once
#include <mpi.h>

#include <functional>
#include <string>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define PIPEVD_GPU_NCCL 1
#endif

#include "base/errors.hpp"

namespace pipevd::gpu {

#ifdef PIPEVD_GPU_NCCL
#define PIPEVD_NCCL_CHECK(expr)                                               \
  do {                                                                        \
    const ncclResult_t pipevd_r_ = (expr);                                    \
    if (pipevd_r_ != ncclSuccess)                                             \
      throw CommunicationError(std::string("pipevd: NCCL error ") +           \
                               ncclGetErrorString(pipevd_r_) + " in " #expr); \
  } while (0)

// The communicator of `comm`'s ranks on `device` (current in the calling thread): made on the
// first call for (comm, device), with at most `channels` channels (0: NCCL's choice; only the
// making reads it), collective over `comm` then; a communicator begun by begin_nccl_communicator
// is waited for (its failure rethrown here).
ncclComm_t nccl_for(MPI_Comm comm, int device, int channels);

// Collective over `comm`: a communicator on `device` that some rank of `comm` lacks (its making
// failed there, and that rank dropped it) is dropped on every rank too, so that the next making
// is done by all of them together instead of by a few waiting in NCCL's bootstrap for peers that
// kept theirs. Call it where every rank is, before nccl_for makes or finds one.
void agree_on_nccl_communicator(MPI_Comm comm, int device);
#endif

// Begins `comm`'s communicator on `device`, collective over `comm`: rank 0's unique id travels over
// MPI now, in the calling thread. The returned function (for another thread: no MPI inside) makes
// the communicator and opens the connections of the engine's broadcasts and all-reduces with a
// message of each size class (point-to-point ones, DBBR's owner scheme only, open at their first
// message); every rank of `comm` must run it, once. At most `channels` channels (0: NCCL's
// choice).
// Empty where the communicator exists already or NCCL is not built in.
std::function<void()> begin_nccl_communicator(MPI_Comm comm, int device, int channels);

// Whether the cache holds `comm`'s communicator on `device`, made or begun (local, never waits).
bool nccl_communicator_held(MPI_Comm comm, int device);

// How many NCCL communicators this process has made (tests: whether a call made its own).
long nccl_communicators_made();

// Every NCCL communicator made (kept between calls) destroyed, in the order they were made;
// collective: every process that made calls calls it (pipevd_release()).
void release_nccl_communicators();

}  // namespace pipevd::gpu
