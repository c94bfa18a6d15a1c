// The processes of a communicator that share this process's node. Normally MPI's own answer
// (MPI_COMM_TYPE_SHARED); a test may instead split one host into pretend nodes, so that the
// across-node route (messages instead of the node window, engine ranks per node, NCCL between
// nodes) runs on a machine with one node.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

namespace pipevd {

// Collective over comm: a new communicator (the caller frees it) of comm's processes on this
// process's node, ranked by key.
MPI_Comm split_by_node(MPI_Comm comm, int key);

// Pretend nodes from a spec over MPI_COMM_WORLD ranks: "" (real nodes), sizes of consecutive
// rank blocks ("2+2", "1+3"), or explicit groups ("0,2|1,3"). Every world rank must be in
// exactly one node. Returns each world rank's node number; std::invalid_argument on a bad spec.
std::vector<int> parse_pretend_nodes(const std::string& spec, int world_size);

// Sets the pretend nodes for this process (the same spec on every rank; "" for real nodes).
// Takes effect for communicators whose node split is made afterwards.
void set_pretend_nodes(const std::string& spec);
bool pretend_nodes_active();

}  // namespace pipevd
