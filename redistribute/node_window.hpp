// Memory that every process of a communicator reads and writes directly: an MPI-3 shared window
// (MPI_Win_allocate_shared), for a communicator whose processes all run on one node. A
// redistribution through it copies each element twice (into the window, out of it) on all of a
// process's threads, where an MPI exchange of packed messages copies it four times (pack, into
// the transport, out of it, unpack), two of them on MPI's one thread per process.
//
// The window is kept on the communicator (an attribute) and grown when a call needs more, so
// repeated calls do not pay the kernel for fresh zeroed pages each time (as kept_buffer.hpp);
// it is freed with the communicator (the cached caller communicators: at MPI_Finalize).
#pragma once
#include <mpi.h>

#include <vector>

namespace pipevd {

// Collective over comm the first time for a communicator, cached after: how many of its
// processes share this process's node (MPI_COMM_TYPE_SHARED).
int ranks_on_this_node(MPI_Comm comm);
// Collective as ranks_on_this_node: whether comm has several processes, all on this node, i.e.
// whether a redistribution over it may go through a window (one process copies in place).
bool several_on_one_node(MPI_Comm comm);
// Collective the first time, as ranks_on_this_node: comm's processes on this process's node
// (kept with comm; not to be freed by the caller).
MPI_Comm node_comm_of(MPI_Comm comm);
// Doubles of this process's segment of comm's window (0: none held).
long node_window_segment(MPI_Comm comm);

// Collective over comm; every process of comm on this node (ranks_on_this_node(comm) == size).
// While the returned window is in use, each rank r of comm owns segment[r], at least the
// `elements` doubles rank r asked for, readable and writable by every process at base[r].
struct NodeWindow {
  MPI_Win win = MPI_WIN_NULL;
  std::vector<double*> base;  // per rank of comm
  std::vector<long> elements;
};
// A new window's pages are mapped into every process on `threads` threads before it returns.
// Segments are rounded up to whole huge pages where that keeps them within `limit` doubles (0: no
// limit). nullptr on every rank when the MPI gives no shared window.
const NodeWindow* node_window(MPI_Comm comm, long elements, int threads, long limit = 0);

// Collective over comm: its window freed (the /dev/shm pages go back); the next call makes a new
// one. For a call that keeps no memory (PIPEVD_KEEP_MEMORY=0).
void release_node_window(MPI_Comm comm);
// Every window this process holds freed, each collectively over its communicator, in the order
// they were made: pipevd_release(), called by every process that made calls.
void release_node_windows();
// How many windows this process holds (for tests).
long node_windows_held();

// Collective over comm: every process's writes into the window (this thread's and those of
// threads it joined) done and visible before anyone reads them.
void node_window_barrier(const NodeWindow& window, MPI_Comm comm);

}  // namespace pipevd
