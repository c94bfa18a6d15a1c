// Which caller ranks drive which GPUs: every GPU a node's ranks can see is driven by one engine
// rank, whether each rank sees all of the node's GPUs or only its own (Slurm --gpus-per-task=1, a
// per-rank CUDA_VISIBLE_DEVICES), and grids that call at the same time from one node (k-point
// groups on their own BLACS contexts) take disjoint GPUs where they are blocks of consecutive
// node-local ranks. Pure functions, so that every rank computes the same answer from the same
// gathered data; the gathering is engine_comm_for_gpus (redistribute/engine_comm.hpp).
#pragma once
#include <array>
#include <vector>

namespace pipevd {

using GpuUuid = std::array<unsigned char, 16>;

// One caller rank on this node: its place among all the node's processes of the job (the
// launcher's node-local rank; the grid's own where the launcher says nothing) and the GPUs it
// sees, in its device-ordinal order.
struct NodeMember {
  int local_rank = 0;
  std::vector<GpuUuid> visible;
};

struct GpuAssignmentRules {
  int node_ranks = 0;    // the job's processes on this node (0: only the grid's are known)
  int max_engines = 0;   // PIPEVD_ENGINE_RANKS: at most this many engine ranks here (0: no cap)
  bool sharing = false;  // PIPEVD_GPU_SHARING=1: engine ranks may share a GPU
};

// For each member (in the order given), the ordinal in its own visible list of the GPU it drives
// as an engine rank, or -1 where it only sends and receives.
// Member m prefers the GPU at position floor(L |visible| / N) of its list (L its node-local rank,
// N the node's processes): consecutive blocks of node-local ranks prefer consecutive blocks of
// GPUs, so two such grids prefer disjoint GPUs, and a rank that sees one GPU prefers that one.
// Each GPU preferred by some member is driven by the lowest-ranked such member. Where the grid
// holds all of the node's processes, every GPU it can see gets an engine rank (a GPU nobody
// prefers goes to the lowest-ranked member that sees it and drives none). With sharing, the first
// max_engines members (all without a cap) are engine ranks, on GPU L mod |visible|.
std::vector<int> assign_engine_gpus(const std::vector<NodeMember>& members,
                                    const GpuAssignmentRules& rules);

}  // namespace pipevd
