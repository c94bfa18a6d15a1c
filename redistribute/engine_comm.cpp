#include "redistribute/engine_comm.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "adapters/scalapack/scalapack_api.hpp"
#include "redistribute/kept_buffer.hpp"

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

using CacheKey = std::pair<std::vector<int>, int>;  // world ranks in caller order, g

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

const EngineComm& engine_comm_for(int ictxt, int engine_ranks_per_node) {
  if (engine_ranks_per_node < 0) throw std::invalid_argument("engine_ranks_per_node must be >= 0");
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
  CacheKey key{world, engine_ranks_per_node};
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
  MPI_Comm node;
  MPI_Comm_split_type(ec->caller, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  const bool engine = node_rank < engine_ranks_per_node;
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

MPI_Comm grid_comm(int ictxt) { return engine_comm_for(ictxt, 0).caller; }

}  // namespace pipevd
