#include "redistribute/engine_comm.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "base/scalapack_api.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_split.hpp"

namespace pipevd {

namespace {

// The MPI communicator of the BLACS context (BLACS_GET's "what" 10 is the context's own system
// handle); its ranks are the BLACS pnums of the grid's processes.
MPI_Comm context_comm(int ictxt) {
  int sys = 0;
  Cblacs_get(ictxt, 10, &sys);
  return Cblacs2sys_handle(sys);
}

// Sorted pnums of all grid coordinates; a caller rank is the position of its pnum in this list.
std::vector<int> sorted_pnums(int ictxt, int nprow, int npcol) {
  std::vector<int> pnums;
  pnums.reserve(static_cast<size_t>(nprow) * npcol);
  for (int pr = 0; pr < nprow; ++pr)
    for (int pc = 0; pc < npcol; ++pc) pnums.push_back(Cblacs_pnum(ictxt, pr, pc));
  std::sort(pnums.begin(), pnums.end());
  return pnums;
}

using CacheKey = std::pair<std::vector<int>, long>;  // world ranks in caller order, the mode

struct Cache {
  std::map<CacheKey, std::unique_ptr<EngineComm>> entries;
  ~Cache() = default;
};

Cache* cache = nullptr;

// Frees the cached communicators while MPI is still up (MPI_Finalize deletes MPI_COMM_SELF's
// attributes first), and the host memory kept between calls.
int free_cache(MPI_Comm, int, void*, void*) {
  release_kept_buffers();
  if (cache) {
    for (auto& [key, ec] : cache->entries) {
      if (ec->engine != MPI_COMM_NULL) MPI_Comm_free(&ec->engine);
      if (ec->caller != MPI_COMM_NULL) MPI_Comm_free(&ec->caller);
    }
    delete cache;
    cache = nullptr;
  }
  return MPI_SUCCESS;
}

Cache& the_cache() {
  if (!cache) {
    cache = new Cache;
    int keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_cache, &keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
  }
  return *cache;
}

}  // namespace

GridMap grid_map(int ictxt) {
  GridMap g;
  Cblacs_gridinfo(ictxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  const std::vector<int> pnums = sorted_pnums(ictxt, g.nprow, g.npcol);
  const int size = g.nprow * g.npcol;
  g.caller_rank.resize(size);
  g.prow.resize(size);
  g.pcol.resize(size);
  for (int pr = 0; pr < g.nprow; ++pr)
    for (int pc = 0; pc < g.npcol; ++pc) {
      const int pnum = Cblacs_pnum(ictxt, pr, pc);
      const int rank =
          static_cast<int>(std::lower_bound(pnums.begin(), pnums.end(), pnum) - pnums.begin());
      g.caller_rank[pr * g.npcol + pc] = rank;
      g.prow[rank] = pr;
      g.pcol[rank] = pc;
    }
  return g;
}

namespace {

// The launcher's node-local rank and node size (Open MPI, MPICH's Hydra, PMIx), or {-1, 0}.
std::pair<int, int> launcher_node_rank() {
  const char* names[][2] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                            {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
                            {"PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"}};
  for (const auto& [rank_name, size_name] : names) {
    const char* r = std::getenv(rank_name);
    const char* s = std::getenv(size_name);
    if (!r || !s) continue;
    char* end_r = nullptr;
    char* end_s = nullptr;
    const long rank = std::strtol(r, &end_r, 10), size = std::strtol(s, &end_s, 10);
    if (*r && *s && !*end_r && !*end_s && rank >= 0 && rank < size) return {int(rank), int(size)};
  }
  return {-1, 0};
}

// This rank's part on a new caller communicator (collective): its device ordinal (>= 0: an engine
// rank) and how many engine ranks of its node drive that device.
struct EngineChoiceResult {
  int device = -1, device_sharers = 1;
};
using EngineChoice = std::function<EngineChoiceResult(MPI_Comm caller, int caller_rank)>;

// The communicators of the grid `ictxt` for one way of choosing engine ranks (`mode` names it in
// the cache key), built on first use.
const EngineComm& cached_engine_comm(int ictxt, long mode, const EngineChoice& choose) {
  int nprow = 0, npcol = 0, myrow = -1, mycol = -1;
  Cblacs_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
  if (myrow < 0 || myrow >= nprow || mycol < 0 || mycol >= npcol)
    throw std::logic_error("engine_comm_for called on a process outside the grid");

  const MPI_Comm comm = context_comm(ictxt);
  const std::vector<int> pnums = sorted_pnums(ictxt, nprow, npcol);
  MPI_Group comm_group, world_group, grid_group;
  MPI_Comm_group(comm, &comm_group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(comm_group, static_cast<int>(pnums.size()), pnums.data(), &grid_group);
  std::vector<int> in_order(pnums.size()), world(pnums.size());
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = static_cast<int>(i);
  // The key names the processes (as world ranks) in caller order, so it is the same on every one
  // of them without communication.
  MPI_Group_translate_ranks(grid_group, static_cast<int>(in_order.size()), in_order.data(),
                            world_group, world.data());

  Cache& c = the_cache();
  CacheKey key{world, mode};
  auto it = c.entries.find(key);
  if (it != c.entries.end()) {
    MPI_Group_free(&comm_group);
    MPI_Group_free(&world_group);
    MPI_Group_free(&grid_group);
    return *it->second;
  }

  auto ec = std::make_unique<EngineComm>();
  // Only the grid's processes take part (the context's communicator may hold more).
  MPI_Comm_create_group(comm, grid_group, 0x5eed, &ec->caller);
  MPI_Group_free(&comm_group);
  MPI_Group_free(&world_group);
  MPI_Group_free(&grid_group);

  int rank = 0;
  MPI_Comm_rank(ec->caller, &rank);
  const EngineChoiceResult choice = choose(ec->caller, rank);
  ec->device = choice.device;
  ec->device_sharers = choice.device_sharers;
  const bool engine = ec->device >= 0;
  MPI_Comm_split(ec->caller, engine ? 0 : MPI_UNDEFINED, rank, &ec->engine);
  if (engine) MPI_Comm_rank(ec->engine, &ec->engine_rank);

  int size = 0;
  MPI_Comm_size(ec->caller, &size);
  std::vector<int> flags(size);
  const int mine = engine ? rank : -1;
  MPI_Allgather(&mine, 1, MPI_INT, flags.data(), 1, MPI_INT, ec->caller);
  for (int r : flags)
    if (r >= 0) ec->engine_to_caller.push_back(r);  // split's key orders engine ranks likewise

  const EngineComm& result = *ec;
  c.entries.emplace(std::move(key), std::move(ec));
  return result;
}

// Every member of `node` with its node-local rank and visible GPUs (collective over node).
std::vector<NodeMember> gather_node_members(MPI_Comm node, int local_rank,
                                            const std::vector<GpuUuid>& visible) {
  struct Record {  // plain bytes on the wire
    int local_rank = 0, count = 0;
    GpuUuid gpus[64];
  };
  Record mine{};
  mine.local_rank = local_rank;
  mine.count = static_cast<int>(std::min<std::size_t>(visible.size(), std::size(mine.gpus)));
  std::copy(visible.begin(), visible.begin() + mine.count, mine.gpus);
  int size = 0;
  MPI_Comm_size(node, &size);
  std::vector<Record> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, sizeof(Record), MPI_BYTE, all.data(), sizeof(Record), MPI_BYTE, node);
  std::vector<NodeMember> members(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    members[r] = {all[r].local_rank, std::vector<GpuUuid>(all[r].gpus, all[r].gpus + all[r].count)};
  return members;
}

// The caller ranks on this rank's node, as a communicator (to be freed).
MPI_Comm node_of(MPI_Comm caller, int caller_rank) { return split_by_node(caller, caller_rank); }

// Host engine ranks: node-local ranks 0..per_node-1 of each node.
EngineChoiceResult host_choice(MPI_Comm caller, int rank, int per_node) {
  MPI_Comm node = node_of(caller, rank);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  return EngineChoiceResult{node_rank < per_node ? 0 : -1, 1};
}

// GPU engine ranks: assign_engine_gpus over the node members' visible GPUs.
EngineChoiceResult gpu_choice(MPI_Comm caller, int rank, const std::vector<GpuUuid>& visible,
                              int max_engines, bool sharing) {
  MPI_Comm node = node_of(caller, rank);
  int node_rank = 0, node_size = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  // The launcher's node-local ranks where every member knows them, else the grid's own.
  auto [local_rank, node_ranks] =
      pretend_nodes_active() ? std::pair<int, int>{-1, 0} : launcher_node_rank();
  int known = local_rank >= 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &known, 1, MPI_INT, MPI_MIN, node);
  if (!known) local_rank = node_rank, node_ranks = 0;
  const std::vector<NodeMember> members = gather_node_members(node, local_rank, visible);
  int highest_node_ranks = node_ranks;
  MPI_Allreduce(MPI_IN_PLACE, &highest_node_ranks, 1, MPI_INT, MPI_MAX, node);
  MPI_Comm_free(&node);
  GpuAssignmentRules rules;
  rules.node_ranks = highest_node_ranks;
  rules.max_engines = max_engines;
  rules.sharing = sharing;
  const std::vector<int> device = assign_engine_gpus(members, rules);
  EngineChoiceResult choice{device[node_rank], 0};
  if (choice.device < 0) return EngineChoiceResult{};
  const GpuUuid& gpu = members[node_rank].visible[choice.device];
  for (int r = 0; r < node_size; ++r)
    if (device[r] >= 0 && members[r].visible[device[r]] == gpu) ++choice.device_sharers;
  return choice;
}

// Of the ranks `choice` makes engine ranks, the lowest caller rank alone (collective over caller).
EngineChoiceResult first_engine_only(MPI_Comm caller, int rank, EngineChoiceResult choice) {
  int first = choice.device >= 0 ? rank : INT_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, caller);
  if (rank != first) return EngineChoiceResult{};
  return EngineChoiceResult{choice.device, 1};
}

// Cache modes of the single-engine-rank communicators, apart from engine_comm_for's (>= 0) and
// engine_comm_for_gpus' (small negative numbers).
constexpr long kOneHostEngine = LONG_MIN / 2, kOneGpuEngine = LONG_MIN / 2 + 1;

}  // namespace

const EngineComm& engine_comm_for(int ictxt, int engine_ranks_per_node) {
  if (engine_ranks_per_node < 0) throw std::invalid_argument("engine_ranks_per_node must be >= 0");
  return cached_engine_comm(ictxt, engine_ranks_per_node, [&](MPI_Comm caller, int rank) {
    return host_choice(caller, rank, engine_ranks_per_node);
  });
}

const EngineComm& engine_comm_for_gpus(int ictxt, const std::vector<GpuUuid>& visible,
                                       int max_engines, bool sharing) {
  // Negative modes are GPU assignments (engine_comm_for's are >= 0); this rank's visible GPUs do
  // not change within a process, so they need no place in the key.
  const long mode = -(1 + 2L * std::max(0, max_engines) + (sharing ? 1 : 0));
  return cached_engine_comm(ictxt, mode, [&](MPI_Comm caller, int rank) {
    return gpu_choice(caller, rank, visible, max_engines, sharing);
  });
}

const EngineComm& engine_comm_for_one(int ictxt, const std::vector<GpuUuid>* visible) {
  return cached_engine_comm(
      ictxt, visible ? kOneGpuEngine : kOneHostEngine, [&](MPI_Comm caller, int rank) {
        const EngineChoiceResult per_node =
            visible ? gpu_choice(caller, rank, *visible, 1, false) : host_choice(caller, rank, 1);
        return first_engine_only(caller, rank, per_node);
      });
}

MPI_Comm grid_comm(int ictxt) { return engine_comm_for(ictxt, 0).caller; }

}  // namespace pipevd
